"""Traversal strategies ``Eager`` / ``Mmr`` / ``Scored`` over graph or metadata edges (seed 002)."""

from .base import Adjacent, EdgeRef, EdgeSource, Strategy, Tracker, TraversalResult, Visit, traverse
from .eager import Eager
from .edges import GraphEdges, MetadataEdges
from .mmr import Mmr
from .scored import Scored

__all__ = [
    "Adjacent",
    "EdgeRef",
    "EdgeSource",
    "Eager",
    "GraphEdges",
    "MetadataEdges",
    "Mmr",
    "Scored",
    "Strategy",
    "Tracker",
    "TraversalResult",
    "Visit",
    "traverse",
]
