"""Graph channels as objects carrying their own parameters.

A search's graph step is one :class:`Channel` object held by ``SearchConfig.channel``:

* :class:`Spread` (default) — max-product activation spreading (``max_depth``, ``depth_decay``,
  ``min_act``, ``direction``, ``reverse_weight``);
* :class:`Beam` — best paths by query similarity (``width``, ``mode``, ``min_sim``, ``max_depth``);
* :class:`Ppr` — personalised PageRank (``damping``);
* the traversal strategies ``Eager`` / ``Mmr`` / ``Scored`` (``graph/strategies/``, subclasses of
  ``Strategy``, which is a ``Channel`` too);
* :class:`NoGraph` — no graph step: hybrid entry retrieval only (``channel="none"``).

Each object validates its own parameters (``Literal``-typed choices, documented bounds) and raises
``InvalidArgument``.  ``kind`` is the channel's stable name: the CLI's ``--channel``, the MCP ``channel``
argument and traces use it.  ``Channel.named(kind)`` gives the default object of a kind.

Layer: this module belongs to the records layer (with ``config.py``), so ``config.py`` needs nothing
from ``graph/``; the graph layer's strategies subclass :class:`Channel` and register their kind when
their module is imported (``neurongraph/__init__`` imports the engine, which imports them).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self, get_args

from .checks import check_choice, check_int, check_number
from .errors import InvalidArgument

__all__ = [
    "BEAM_MODES",
    "CHANNELS",
    "DIRECTIONS",
    "Beam",
    "BeamMode",
    "Channel",
    "ChannelName",
    "Direction",
    "NoGraph",
    "OptionGroup",
    "Ppr",
    "Spread",
]

ChannelName = Literal["spread", "beam", "ppr", "eager", "mmr", "scored", "none"]
Direction = Literal["out", "both"]
BeamMode = Literal["mean", "min", "last"]
CHANNELS: tuple[str, ...] = get_args(ChannelName)
DIRECTIONS: tuple[str, ...] = get_args(Direction)
BEAM_MODES: tuple[str, ...] = get_args(BeamMode)


@dataclass(frozen=True)
class OptionGroup:
    """A frozen group of search parameters with their flat option names (``LEGACY``: flat name -> field), so
    ``SearchConfig.replace(beam_width=8)`` / ``replace(recency_weight=0.5)`` set a field of the group."""

    LEGACY: ClassVar[dict[str, str]] = {}

    def with_(self, **overrides: Any) -> Self:
        """A modified copy (the object itself never changes)."""
        return dataclasses.replace(self, **overrides)

    def with_legacy(self, options: dict[str, Any]) -> Self:
        """A copy with the flat options (``beam_width``, ``max_depth``, ...) this group has applied."""
        mine = {self.LEGACY[k]: v for k, v in options.items() if k in self.LEGACY}
        return self.with_(**mine) if mine else self

    def legacy_params(self) -> dict[str, Any]:
        """This group's parameters under their flat option names (traces, fingerprints)."""
        return {flat: getattr(self, name) for flat, name in self.LEGACY.items()}


@dataclass(frozen=True)
class Channel(OptionGroup):
    """A graph channel and its parameters.  Subclasses set ``kind`` (and register under it)."""

    kind: ClassVar[str] = ""
    # True when the channel scores every node it visits by query similarity (beam, strategies): the search
    # then computes the exact similarity of every row instead of an approximate dense top-k
    needs_all_similarities: ClassVar[bool] = False
    is_strategy: ClassVar[bool] = False  # a traversal strategy (Eager / Mmr / Scored, graph/strategies/)
    _registry: ClassVar[dict[str, type[Channel]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind:
            Channel._registry[kind] = cls

    @classmethod
    def for_search(cls) -> Channel:
        """The default object of this kind, as ``channel="<kind>"`` selects it."""
        return cls()

    @staticmethod
    def named(kind: str) -> Channel:
        """The default channel object of ``kind`` (``"spread"``, ``"beam"``, ...)."""
        cls = Channel._registry.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise InvalidArgument(f"channel must be one of {CHANNELS}, got {kind!r}")
        return cls.for_search()


@dataclass(frozen=True)
class NoGraph(Channel):
    """No graph step: the ranking is the hybrid entry fusion alone."""

    kind: ClassVar[str] = "none"


@dataclass(frozen=True)
class Spread(Channel):
    """Max-product activation spreading from the seeds (docs/graph-channels.md).

    A node's activation is the best over paths of at most ``max_depth`` hops of
    ``seed_act · Π(weight · factuality) · depth_decay^hops``; values below ``min_act`` stop.
    ``direction="both"`` also walks against an edge at ``reverse_weight`` (measured default).  From the
    second hop on, a node with more than ``fan_ref`` edges passes on ``(fan_ref / edges)^fan_power`` of its
    activation, so a hub file does not lift every change that touched it (``fan_ref`` 0: off)."""

    kind: ClassVar[str] = "spread"
    LEGACY: ClassVar[dict[str, str]] = {
        "max_depth": "max_depth",
        "direction": "direction",
        "reverse_weight": "reverse_weight",
        "depth_decay": "depth_decay",
        "min_act": "min_act",
        "fan_ref": "fan_ref",
        "fan_power": "fan_power",
    }
    max_depth: int = 2
    depth_decay: float = 0.85
    min_act: float = 0.01
    direction: Direction = "both"
    reverse_weight: float = 0.5
    fan_ref: float = 20.0
    fan_power: float = 0.5

    def __post_init__(self) -> None:
        check_int("max_depth", self.max_depth)
        for name in ("depth_decay", "min_act", "reverse_weight", "fan_ref", "fan_power"):
            check_number(name, getattr(self, name), lo=0)
        check_choice("direction", self.direction, DIRECTIONS)


@dataclass(frozen=True)
class Beam(Channel):
    """Beam search over paths from each seed, scored by query similarity along the path.

    ``width`` paths are kept per seed and depth; ``mode`` is the path score (mean / min / last of
    the per-node similarity); a node less similar than ``min_sim`` ends a path."""

    kind: ClassVar[str] = "beam"
    needs_all_similarities: ClassVar[bool] = True
    LEGACY: ClassVar[dict[str, str]] = {
        "max_depth": "max_depth",
        "beam_width": "width",
        "beam_mode": "mode",
        "beam_min_sim": "min_sim",
    }
    width: int = 4
    mode: BeamMode = "mean"
    min_sim: float = 0.0
    max_depth: int = 2

    def __post_init__(self) -> None:
        check_int("beam_width", self.width, lo=1)
        check_choice("beam_mode", self.mode, BEAM_MODES)
        check_number("beam_min_sim", self.min_sim)
        check_int("max_depth", self.max_depth)


@dataclass(frozen=True)
class Ppr(Channel):
    """Personalised PageRank from the seeds over the undirected graph; restart probability
    ``1 - damping`` (HippoRAG uses 0.5)."""

    kind: ClassVar[str] = "ppr"
    LEGACY: ClassVar[dict[str, str]] = {"ppr_damping": "damping"}
    damping: float = 0.5

    def __post_init__(self) -> None:
        check_number("ppr_damping", self.damping, lo=0, hi=1, hi_open=True)


# the channels whose parameters SearchConfig's flat option names set (a strategy has no flat names)
PARAMETRISED: tuple[type[Channel], ...] = (Spread, Beam, Ppr)
