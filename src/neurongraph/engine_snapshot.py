"""The engine's derived arrays to and from a snapshot file's :class:`~neurongraph.snapshot.SnapshotState`.

Why its own module: ``snapshot.py`` owns the file (format, token, atomic write, checks) and ``engine.py``
owns when to save and load; what the arrays are — the node table, the vector rows, the graph's edges,
the query linker's tables, the BM25 postings — is this module's one job, so a new derived index adds
its arrays here and in ``SnapshotState``, not in the engine.
"""

from __future__ import annotations

import numpy as np

from .graph.arrays import GraphArrays
from .index.bm25 import BM25Index, LexicalIndex
from .index.embedder import Embedder
from .index.vectors import VectorIndex
from .link.query import QueryTables
from .query_linker import QueryLinker
from .retrieval.scope import NodeTable
from .snapshot import SnapshotState
from .store.base import Store

__all__ = ["capture", "restore"]

EDGE_COLUMNS = ("src", "dst", "weight", "fact", "rtype", "pol", "eid")  # GraphArrays.from_edges' order


def capture(
    store: Store,
    embedder: Embedder,
    seq: int,
    table: NodeTable,
    vectors: VectorIndex,
    graph: GraphArrays,
    linker: QueryLinker,
    lexical: LexicalIndex,
) -> SnapshotState:
    """The derived arrays as of change-feed sequence ``seq`` (the caller has just refreshed to it)."""
    e = graph.all_edges()
    vec_idx = np.flatnonzero(vectors.present)
    # every row present (the usual case): write the matrix itself, not a 1.5 GB copy at 1M nodes
    vec_mat = vectors.matrix if vec_idx.size == vectors.n else vectors.matrix[vec_idx]
    fitted = linker.tables()  # only a linker equal to a fresh fit at this seq
    tables = fitted.to_arrays() if fitted is not None else None
    return SnapshotState(
        seq=seq,
        model_id=embedder.model_id,
        dim=embedder.dim,
        type_names=table.type_names(),
        alive=table.alive,
        type_of=table.type_of,
        vec_idx=vec_idx,
        vec_mat=vec_mat,
        n_nodes=graph.n_nodes,
        edges={
            "src": e.src,
            "dst": e.dst,
            "weight": e.weight,
            "fact": e.fact,
            "rtype": e.rtype,
            "pol": e.pol,
            "eid": e.eid,
        },
        linker=tables,
        linker_config=store.get_meta("linker_config") if tables else None,
        ivf=vectors.ivf_state(),
        event_time=table.event_time,
        source_of=table.source_of,
        source_names=table.source_names(),
        bm25=lexical.export(),
    )


def restore(
    st: SnapshotState,
    store: Store,
    dim: int,
    table: NodeTable,
    vectors: VectorIndex,
    linker: QueryLinker,
    lexical: LexicalIndex,
) -> tuple[GraphArrays, bool]:
    """Load ``st`` into the table, vectors, linker and lexical index; the graph it holds, and whether it held
    the BM25 arrays (``load_snapshot`` checked every array: a damaged field means a replay, never here)."""
    assert st.event_time is not None and st.source_of is not None  # SnapshotState fills absent ones
    table.restore(st.alive, st.type_of, st.type_names, st.event_time, st.source_of, st.source_names)
    vectors.set(st.vec_idx, st.vec_mat)
    if st.ivf is not None and st.ivf[0].shape[1:] == (dim,):
        vectors.restore_ivf(*st.ivf)  # no k-means on the first large search after an open
    ed = st.edges
    n = max(st.n_nodes, table.n)
    graph = GraphArrays.from_edges(n, *(ed[c] for c in EDGE_COLUMNS))
    if st.linker is not None and st.linker_config == store.get_meta("linker_config"):
        linker.restored(QueryTables.from_arrays(st.linker))
    bm25 = BM25Index.from_arrays(st.bm25, table.n, checked=True) if st.bm25 is not None else None
    if bm25 is not None:
        lexical.restore(bm25)
    return graph, bm25 is not None
