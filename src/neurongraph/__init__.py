"""Neuron Graph RAG: retrieval that finds the few original sources an agent needs.

import neurongraph as ngr
eng = ngr.open("history.db")             # SQLite store + the real embedding model
eng.add_nodes([ngr.Node("issue:1", "issue", "Login fails", "...")])
eng.add_edges([("pr:7", "fixes", "issue:1")])
for hit in eng.search("why does login break?"):
    print(hit.id, hit.scores["final"], hit.explain())

The public names are loaded on first use (``ngr.open``, ``ngr.Node``, ...), as is any submodule named as an
attribute (``ngr.ingest``): importing the package loads no numpy, so the ``ngr`` command can choose its
BLAS threads before numpy starts them (cli/__init__.py).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import InvalidArgument, NeuronGraphError, UnknownNode, UnknownTrace

if TYPE_CHECKING:
    from .config import SearchConfig
    from .engine import Engine, Hit, SearchResult, open_engine
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

# public name -> (module, its name there)
_LAZY = {
    "open": ("engine", "open_engine"),
    "open_engine": ("engine", "open_engine"),
    "Engine": ("engine", "Engine"),
    "Hit": ("engine", "Hit"),
    "SearchResult": ("engine", "SearchResult"),
    "SearchConfig": ("config", "SearchConfig"),
    "Node": ("model", "Node"),
    "Edge": ("model", "Edge"),
}


def __getattr__(name: str) -> Any:
    """A public name from its module, or a submodule not imported yet (as the eager package used to have)."""
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:  # no such submodule, or one whose optional dependency is missing
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from exc


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
