"""Graph construction without an LLM: mention, reference, shared-entity and similarity linkers.

Usage::

    from neurongraph.link import Linker, LinkerConfig, LinkInput
    linker = Linker(LinkerConfig(), embed=encoder_fn)      # embed is optional (similarity linker)
    result = linker.fit([LinkInput("issue:12", "Crash on start", "...")])
    result.entities, result.edges, result.stats
    linker.link_query("why does #12 crash?")  # -> [("issue:12", "#12")]
    linker.link_new(more_items)                 # incremental; see linker.py for what is and isn't
"""

from .linker import EntityNode, LinkedEdge, Linker, LinkerConfig, LinkInput, LinkResult
from .normalize import normalize

__all__ = ["EntityNode", "LinkedEdge", "Linker", "LinkerConfig", "LinkInput", "LinkResult", "normalize"]
