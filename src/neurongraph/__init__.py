"""Neuron Graph RAG: retrieval that finds the few original sources an agent needs.

import neurongraph as ngr
eng = ngr.open("history.db")             # SQLite store + the real embedding model
eng.add_nodes([ngr.Node("issue:1", "issue", "Login fails", "...")])
eng.add_edges([("pr:7", "fixes", "issue:1")])
for hit in eng.search("why does login break?"):
    print(hit.id, hit.scores["final"], hit.explain())
"""

from .config import SearchConfig
from .engine import Engine, Hit, SearchResult, open_engine
from .errors import InvalidArgument, NeuronGraphError, UnknownNode, UnknownTrace
from .model import Edge, Node

open = open_engine  # noqa: A001  - the public entry point is ngr.open(...)

__version__ = "0.1.0"
__all__ = [
    "open",
    "open_engine",
    "Engine",
    "Node",
    "Edge",
    "SearchConfig",
    "SearchResult",
    "Hit",
    "NeuronGraphError",
    "InvalidArgument",
    "UnknownNode",
    "UnknownTrace",
]
