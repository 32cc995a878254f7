"""The engine: one object that owns a store and the indexes derived from it.

Writes go to the store first (the source of truth, atomically); the in-memory
indexes then catch up through the store's change feed (``refresh``).  The same
mechanism follows writes from other processes sharing the database, so there
is exactly one way the derived state is kept in step.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import engine_snapshot
from .checks import MAX_QUERY_CHARS
from .config import SearchConfig
from .errors import UnknownNode, UnknownTrace
from .graph.arrays import GraphArrays
from .graph.strategies import MetadataEdges
from .graphdb.handle import CypherHandle
from .graphdb.remote import GraphTarget, graph_target
from .index import multilingual
from .index.bm25 import LexicalIndex
from .index.code_history import CodeHistory
from .index.code_history_file import CodeHistoryFile
from .index.embedder import Embedder, make_embedder
from .index.vector_cache import ReembedRequired, cached_embeddings, load_node_vectors, vector_text
from .index.vectors import VectorIndex, one_blas_thread
from .ingest.git_blame import SourceBlame
from .ingest.git_meta import synced_heads
from .learning.api import Learning
from .learning.assoc import lexical_idf
from .link import LinkerConfig
from .link.corpus import link_corpus
from .model import Edge, Node, as_edges, checked_edge_columns, content_hash, edge_columns
from .query_linker import QueryLinker, link_inputs
from .retrieval.changes import WorkingSet
from .retrieval.code_evidence import code_evidence
from .retrieval.filters import Filters, ResultTypes
from .retrieval.pipeline import Ranking, RankInputs, rank
from .retrieval.priors import EdgeLines, RecencySource
from .retrieval.query import Query
from .retrieval.results import Hit, SearchResult, TraceWriter, assemble
from .retrieval.scope import NodeTable, SearchScope
from .schema.api import Schema
from .snapshot import TOKEN_KEY, load_snapshot, new_token, save_snapshot, snapshot_path
from .store import open_store
from .store.base import EdgeArrays, Store
from .store.sqlite import SQLiteStore  # noqa: F401  (ngr.engine.SQLiteStore, as before open_store)
from .times import to_epoch

if TYPE_CHECKING:
    from .graphdb.projection import CypherProjection  # (loaded on first use: graphdb/handle.py)

__all__ = ["MAX_QUERY_CHARS", "Engine", "Hit", "ReembedRequired", "SearchResult", "open_engine"]


Progress = Callable[[int, int], None]


def _as_nodes(items: Iterable[Node | dict]) -> list[Node]:
    return [n if isinstance(n, Node) else Node.from_dict(n) for n in items]


def _via(service: str, name: str) -> Any:
    """An Engine method that forwards to the same-named method of one of its services, keeping the
    engine's public API (``eng.relate(...)`` is ``eng.schema.relate(...)``) and the service's docstring."""
    target = getattr({"learning": Learning, "schema": Schema}[service], name)

    @functools.wraps(target)
    def method(self, *args, **kwargs):
        return getattr(getattr(self, service), name)(*args, **kwargs)

    return method


class Engine:
    """Hybrid + graph retrieval over one store, with the learning loop and the relation schema.

    The engine owns the derived in-memory state (vectors, graph, node tables) and three services with
    declared dependencies: ``learning`` (:class:`~neurongraph.learning.api.Learning`), ``schema``
    (:class:`~neurongraph.schema.api.Schema`) and ``query_linker`` (:class:`~neurongraph.query_linker.QueryLinker`).

    Use :func:`neurongraph.open`."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: SearchConfig | None = None,
        *,
        reembed_limit: int | None = None,
        progress: Progress | None = None,
        graph_url: str | None = None,
        graph_write_url: str | None = None,
    ):
        """``progress(done, total)`` follows the embedding the first catch-up may do (a store embedded with
        another model, opened with ``--reembed``).  ``graph_url`` / ``graph_write_url`` (default
        ``NGR_GRAPH_URL`` / ``NGR_GRAPH_WRITE_URL``): a shared FalkorDB server for ask/cypher instead of
        the private child (graphdb/shared.py); a bad URL is an error here."""
        # ask/cypher's projection (graphdb/handle.py); target None: the private child
        self.cypher_graph = CypherHandle(store, graph_target(graph_url, graph_write_url))
        self.store = store
        # opening a store with another embedder re-embeds every node; above this many nodes that is an
        # error (ReembedRequired) instead of minutes of silent work (None = no limit; the CLI sets one)
        self.reembed_limit = reembed_limit
        self.embedder = multilingual.for_open(store, embedder, reembed_limit)  # a store holding CJK text: wider
        embedder = self.embedder
        # a CJK question on a store kept on MiniLM: its own index, built on the first one (index/multilingual.py)
        self.cross_lingual: multilingual.CrossLingual | None = None
        self.widen_progress: multilingual.WidenProgress | None = None  # shows that one-off embedding (the CLI)
        self.config = config or SearchConfig()
        self.traces = TraceWriter(store, embedder.model_id)  # a recorded search (retrieval/results.py)
        self.vectors = VectorIndex(embedder.dim)
        self.graph = GraphArrays(0)
        # the search scope (retrieval/): per-node columns (liveness, type, event time, source, marks), the
        # filters and result types over them, and the priors' cached inputs
        self.table = NodeTable(store)
        self.filters = Filters(store)
        self.result_types = ResultTypes(store)
        self.recency = RecencySource()
        self.edge_lines = EdgeLines(store)
        self._rel_ids: dict[str, int] = {}
        self._seq = 0
        self.last_embedded = 0
        self._meta_edges: tuple[tuple, MetadataEdges] | None = None  # (specs, seq) -> metadata links
        self._changes_unsnapshotted = 0  # changes applied since the state was last loaded from / saved to a snapshot
        # the services; each declares what it needs from the engine
        self.schema = Schema(store, graph=self._current_graph, embed=self.vectors_for, refresh=self.refresh)
        self.learning = Learning(
            store,
            embed=self._query_vectors,
            graph=self._current_graph,
            refresh=self.refresh,
            idf=lexical_idf(lambda: self.lexical),  # a learning query's distinctive terms (learning/assoc.py)
        )
        self.query_linker = QueryLinker(store)  # fitted by link() or lazily, or tables from a snapshot
        # BM25 in memory (index/bm25.py): FTS5's ranking without an FTS5 query per search; built on the
        # second search (or loaded from the snapshot), off for a store that cannot tokenize (PostgreSQL)
        self.lexical = LexicalIndex(store.lexical_tokens, store.lexical_postings, self.table.known)
        self._lexical_snapshotted = False  # the last snapshot loaded or saved holds the BM25 arrays
        # blame and identifier postings from the git ingest's per-commit code facts (index/code_history.py),
        # read on first use and kept in step with the change feed
        # exact blame: ingest/git_blame.py; the mainline's tip: the HEAD each git source was synced at
        heads = functools.partial(synced_heads, store)
        self.code_history = CodeHistory(
            self._code_rows, SourceBlame(store), heads=heads, cache=CodeHistoryFile.beside(store)
        )
        self.opened_from_snapshot = self._load_snapshot()
        self.refresh(progress)
        self.cypher_graph.seq_open = self._seq  # a shared graph server is brought up to date at close if this moves

    # ------------------------------------------------------------ lifecycle
    # A snapshot of the derived arrays is written at close() when the store is large enough for a
    # replay to hurt and enough has changed since the last one (see snapshot.py); tests lower these.
    snapshot_min_rows = 50_000  # nodes + edges
    snapshot_min_changes = 0.05  # changes since the last snapshot, as a fraction of the rows

    def _current_graph(self) -> GraphArrays:
        return self.graph

    def close(self) -> None:
        try:
            rows = int(self.table.alive.sum()) + self.graph.n_edges
            if rows >= self.snapshot_min_rows and (
                self._changes_unsnapshotted >= max(1, self.snapshot_min_changes * rows)
                or (self.lexical.index is not None and not self._lexical_snapshotted)  # built since: keep it
            ):
                self.save_snapshot()
        except Exception as exc:  # a cache write (full disk, locked meta) must not fail the close;
            # the next open replays the store instead
            warnings.warn(f"could not write the engine snapshot: {exc}", RuntimeWarning, stacklevel=2)
        finally:
            if (handle := getattr(self, "cypher_graph", None)) is not None:  # (None when __init__ failed early)
                handle.push()
                handle.close()  # the FalkorDB child (ask/cypher) never outlives the engine
            self.store.close()

    def save_snapshot(self) -> dict | None:
        """Save the derived in-memory state next to a file store (``<db>.snapshot.npz``) so the next
        open loads arrays instead of replaying every row; ``None`` for an in-memory store."""
        path = snapshot_path(self.store.path)
        if path is None:
            return None
        self.refresh()
        parts = (self.table, self.vectors, self.graph, self.query_linker, self.lexical)
        st = engine_snapshot.capture(self.store, self.embedder, self._seq, *parts)
        token = new_token()
        size = save_snapshot(path, token, st)
        self.store.set_meta(TOKEN_KEY, token)  # only now does the store vouch for the file
        self._changes_unsnapshotted = 0
        self._lexical_snapshotted = st.bm25 is not None
        return {"path": str(path), "seq": st.seq, "bytes": size}

    def _load_snapshot(self) -> bool:
        """Start from a valid snapshot of this store, if there is one; ``refresh()`` then catches up."""
        path = snapshot_path(self.store.path)
        if path is None:
            return False
        st = load_snapshot(
            path, self.store.get_meta(TOKEN_KEY), self.embedder.model_id, self.embedder.dim, self.store.current_seq()
        )
        if st is None:
            return False
        parts = (self.table, self.vectors, self.query_linker, self.lexical)
        self.graph, self._lexical_snapshotted = engine_snapshot.restore(st, self.store, self.embedder.dim, *parts)
        self._rel_ids = {name: i for i, name in self.store.relation_names().items()}
        self._seq = st.seq
        return True

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ syncing
    def refresh(self, progress: Progress | None = None) -> int:
        """Bring in-memory indexes up to date with the store; returns how many changes were applied."""
        if self.store.in_transaction:
            return 0  # inside schema_atomic(): catch up after the outer transaction commits
        if self.store.current_seq() == self._seq:  # one indexed row read: the common case on every search
            return 0
        ch = self.store.changes_since(self._seq)
        if ch.seq == self._seq:
            return 0
        n_changes = len(ch.nodes) + len(ch.edges) + len(ch.deleted_nodes) + len(ch.deleted_edges)
        nc = self.table.apply(ch)  # the scope's columns first: every derived index below reads them
        if nc.changed is not None:
            idx = nc.changed
            self._load_vectors(idx, [r[2] for r in ch.nodes], progress)
            if self.cross_lingual is not None:
                self.cross_lingual.changed(idx)
            self.query_linker.changed(idx)
            self.lexical.changed(idx)
            self.code_history.changed(idx)
            self.graph.ensure_nodes(self.table.n)
        if nc.deleted is not None:
            dead = nc.deleted
            self.vectors.remove(dead)
            if self.cross_lingual is not None:
                self.cross_lingual.removed(dead)
            self.query_linker.changed(None)
            self.lexical.changed(dead)
            self.code_history.changed(dead)
        if ch.deleted_edges:
            self.graph.remove_edges(ch.deleted_edges)
        e = ch.edges
        if len(e):
            if self.graph.n_edges == 0 and self._seq == 0:
                self.graph = GraphArrays.from_edges(
                    self.table.n, e.src, e.dst, e.weight, e.fact, e.rel_id, e.pol, e.eid
                )
            else:
                self.graph.upsert_edges(e.src, e.dst, e.weight, e.fact, e.rel_id, e.pol, e.eid)
        self._rel_ids = {name: i for i, name in self.store.relation_names().items()}
        self._seq = ch.seq
        self._changes_unsnapshotted += n_changes
        return n_changes

    def _query_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of query texts (learning): a CJK query never widens the store's embedder."""
        return self.vectors_for(texts, widen=False)

    def _n_vectors(self) -> int:
        return int(np.count_nonzero(self.vectors.present))

    def _load_vectors(self, idx: np.ndarray, hashes: list[str], progress: Progress | None) -> None:
        """The vectors of changed nodes (index/vector_cache.py), embedding what the cache lacks."""
        embed, limit = self.vectors_for, self.reembed_limit
        load_node_vectors(self.store, self.embedder, self.vectors, idx, hashes, embed, limit, progress)

    def _widen_embedder(self, embedder: Embedder, progress: Progress | None) -> None:
        """Switch to ``embedder`` and embed every live node with it: CJK text arrived in a store on the
        English model (index/multilingual.py decides, within the re-embed consent)."""
        self.embedder = embedder
        self.vectors = VectorIndex(embedder.dim)
        self.cross_lingual = None  # CJK questions now use the store's own index (rows cached by it are reused)
        idx = np.flatnonzero(self.table.alive)
        if idx.size:
            rows = self.store.nodes_by_idx(idx.tolist())
            self._load_vectors(idx, [content_hash(rows[i].body) for i in idx.tolist()], progress)

    def vectors_for(
        self, texts: Sequence[str], progress: Progress | None = None, batch: int = 256, *, widen: bool = True
    ) -> np.ndarray:
        """Embeddings of ``texts`` through the store's cache: only unseen (text, model) pairs are embedded
        (``last_embedded``: how many; index/vector_cache.py).  Node texts in CJK may first widen the store's
        embedder (``widen``; index/multilingual.py)."""
        if widen and (
            wider := multilingual.for_add(self.store, self.embedder, texts, self._n_vectors, self.reembed_limit)
        ):
            self._widen_embedder(wider, progress)
        out, embedded = cached_embeddings(self.store, self.embedder, texts, progress, batch)
        if embedded is not None:
            self.last_embedded = embedded
        return out

    # ------------------------------------------------------------ writes
    def add_nodes(self, nodes: Iterable[Node | dict], progress: Progress | None = None) -> dict:
        """Insert or update nodes; embeds only text whose (hash, model) is not cached yet.

        Vectors are computed (and cached) before the node transaction, so a crash
        leaves either the old nodes or the new ones, never nodes without vectors.
        """
        nodes = _as_nodes(nodes)
        if not nodes:
            return {"nodes": 0, "embedded": 0}
        self.vectors_for([vector_text(n.metadata, n.title, n.text) for n in nodes], progress)
        embedded = self.last_embedded
        self.store.upsert_nodes(nodes)
        self.refresh()
        return {"nodes": len(nodes), "embedded": embedded}

    def add_node(self, node: Node | dict | None = None, **fields) -> dict:
        return self.add_nodes([node if node is not None else Node(**fields)])

    def add_edges(self, edges: Iterable[Edge | dict | tuple]) -> dict:
        """Insert or update typed edges in one transaction; unknown endpoints are rejected.

        A batch of plain ``(src, rel, dst[, weight])`` tuples, or of ``Edge`` objects without ``meta``,
        takes the columnar bulk path (:meth:`add_edge_columns`); anything else is validated edge by edge."""
        items = edges if isinstance(edges, list) else list(edges)
        cols = edge_columns(items)
        if cols is not None:
            return self.add_edge_columns(*cols)
        checked = as_edges(items)  # an Edge, a dict or a (src, rel, dst[, weight]) tuple (model.py)
        self.store.upsert_edges(checked)
        self.refresh()
        return {"edges": len(checked)}

    def add_edge_columns(
        self,
        src: Sequence[str],
        rel: Sequence[str],
        dst: Sequence[str],
        weight: Sequence[float] | np.ndarray | None = None,
        polarity: Sequence[int] | np.ndarray | None = None,
        factuality: Sequence[float] | np.ndarray | None = None,
    ) -> dict:
        """Insert or update edges given as columns (the bulk path): ``src[i] -[rel[i]]-> dst[i]`` with
        optional weight (default 1), polarity (1) and factuality (1) columns; no ``meta``.

        The same contract as :meth:`add_edges` (one transaction, all or nothing; an unknown endpoint
        rejects the batch) with vectorised checks, ids resolved in memory by the store, and the graph
        updated from the written arrays instead of reading them back."""
        cols = checked_edge_columns(src, rel, dst, weight, polarity, factuality)
        try:
            seq, written = self.store.upsert_edge_columns(*cols)
        except UnknownNode as exc:
            for node_id in exc.details.get("node_ids", []):  # a malformed id is a bad argument, as in add_edges
                Edge(node_id, "rel", node_id)  # (empty or blank-led ids sort first among the 50 it names)
            raise
        self._apply_edge_write(seq, written)
        return {"edges": len(cols[0])}

    def _apply_edge_write(self, seq: int, written: EdgeArrays | None) -> None:
        """Bring the graph up to date after an edge write: from the written arrays when that write is
        the only change since this engine last synced (and is committed), else from the change feed."""
        if written is None or seq != self._seq + 1 or self.store.in_transaction:
            self.refresh()
            return
        self.graph.upsert_edges(
            written.src, written.dst, written.weight, written.fact, written.rel_id, written.pol, written.eid
        )
        self._rel_ids = {name: i for i, name in self.store.relation_names().items()}
        self._seq = seq
        self._changes_unsnapshotted += len(written)

    def add_edge(self, src: str, rel: str, dst: str, **attrs) -> dict:
        return self.add_edges([Edge(src, rel, dst, **attrs)])

    def link(self, config=None, progress: Progress | None = None) -> dict:
        """Build graph edges without an LLM (mentions, refs, shared entities; synonyms opt-in) over the corpus.

        Re-running it rebuilds the links from scratch and upserts them, so it is
        idempotent; learned weights on existing edges are kept by the upsert.
        Node metadata ``aliases`` (a list of strings) are matched like titles.
        Afterwards, titles and entities named in a query become extra seeds.
        """
        config = config or LinkerConfig()
        items = link_inputs(self.store.iter_nodes())
        add = functools.partial(self.add_nodes, progress=progress)
        linker, stats = link_corpus(self.store, config, items, self.vectors_for, add)  # (link/corpus.py)
        self.refresh()
        self.query_linker.fitted(linker, items)
        return stats

    def _query_seeds(self, query: Query | str) -> tuple[np.ndarray, np.ndarray] | None:
        return self.query_linker.seeds(query)

    def delete_nodes(self, ids: Iterable[str]) -> int:
        n = self.store.delete_nodes(ids)
        self.refresh()
        return n

    # ------------------------------------------------------------ reads
    def get_node(self, node_id: str) -> dict:
        row = self.store.get_node(node_id)
        if row is None:
            raise UnknownNode(f"no node with id {node_id!r}", node_id=node_id)
        return row.to_dict()

    def get_trace(self, trace_id: str) -> dict:
        t = self.store.get_trace(trace_id)
        if t is None:
            raise UnknownTrace(f"no trace with id {trace_id!r}", trace_id=trace_id)
        return t

    def explain(self, trace_id: str, node_id: str | None = None) -> dict | list[dict]:
        """The stored explanation of a past search, or of one of its hits."""
        t = self.get_trace(trace_id)
        if node_id is None:
            return t["hits"]
        if not any(h["id"] == node_id for h in t["hits"]):
            try:  # a short sha, as the search table shows commits
                node_id = self.store.resolve_node_id(node_id)
            except UnknownNode:
                pass
        for h in t["hits"]:
            if h["id"] == node_id:
                return h
        raise UnknownNode(f"node {node_id!r} is not a hit of trace {trace_id}", node_id=node_id, trace_id=trace_id)

    def stats(self) -> dict:
        s = self.store.stats()
        s.update(
            {
                "embedder": self.embedder.model_id,
                "graph_edges_in_memory": self.graph.n_edges,
                "vectors_in_memory": int(self.vectors.present.sum()),
            }
        )
        return s

    # ------------------------------------------------------------ search
    def embed_query(self, query: Query | str) -> np.ndarray:
        q = Query.of(query)
        side = self._cross_lingual(q)
        return side.query_vector(q.text) if side is not None else self.embedder.embed([q.text])[0]

    def _cross_lingual(self, q: Query) -> multilingual.CrossLingual | None:
        """The cross-lingual index a CJK question on a store kept on MiniLM takes (None: the store's own)."""
        if not multilingual.takes_cross_lingual(q.cjk, self.store, self.embedder):
            return None
        if self.cross_lingual is None:
            self.cross_lingual = multilingual.CrossLingual(self.store, self.embedder)
        self.cross_lingual.progress = self.widen_progress
        return self.cross_lingual

    def search(
        self,
        query: str,
        limit: int | None = None,
        *,
        config: SearchConfig | None = None,
        qvec: np.ndarray | None = None,
        record: bool = True,
        **overrides,
    ) -> SearchResult:
        """Explained hybrid + graph search.  Stores a trace unless ``record=False``.

        ``overrides`` replace fields of the engine's default :class:`SearchConfig`
        for this call only (e.g. ``search(q, channel="none", seeds=3)``).
        """
        q = Query.read(query)  # the query read once: every step below takes q (retrieval/query.py)
        cfg = config or self.config
        if limit is not None:
            overrides["limit"] = limit
        if "changes" in overrides:  # a diff text, PATH[:A-B] specs or a JSON object: parsed once, here
            overrides["changes"] = WorkingSet.coerce(overrides["changes"])
        if overrides:
            cfg = cfg.replace(**overrides)
        side = self._cross_lingual(q)  # a CJK question on a store kept on MiniLM
        cfg = multilingual.cjk_weights(cfg, q.cjk, side.embedder if side else self.embedder)  # a CJK question
        self.refresh()
        self.result_types.check(self.table, cfg.result_types)
        t_widen = 0.0
        if side is not None:
            t0 = time.perf_counter()
            side.index(self.table.alive)  # the first such question embeds the store once (cached)
            t_widen = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        if qvec is None or (side is not None and np.shape(qvec) != (side.vectors.dim,)):
            qvec = self.embed_query(q)  # (a caller's vector from the store's own embedder does not fit)
        t_embed = (time.perf_counter() - t0) * 1000
        r = self._rank(q, qvec, cfg, side)
        r.timings_ms["embed_query"] = t_embed
        if side is not None:
            r.timings_ms["cross_lingual_index"] = t_widen
        marks = self.table.placeholder
        flagged = lambda ns: {int(n) for n in np.asarray(ns)[marks.mask(ns, self.table.n)]}  # noqa: E731
        res = assemble(self.store, self.table.event_time, self._rel_ids, q.text, cfg, r, flagged)
        if record:
            self.traces.record(res)
        return res

    def _metadata_source(self, specs: tuple) -> MetadataEdges:
        """Metadata links for traversal strategies; the inverted index is rebuilt only when the store changed."""
        key = (specs, self._seq)
        if self._meta_edges is None or self._meta_edges[0] != key:
            rows = list(self.store.iter_nodes())
            src = MetadataEdges([(r.idx, r.metadata) for r in rows], list(specs), ids={r.id: r.idx for r in rows})
            self._meta_edges = (key, src)
        return self._meta_edges[1]

    def _known_lexical(self, terms, k, max_postings=None):
        """BM25 rows of nodes this engine's arrays know (live, loaded): from the in-memory index (same
        ranking as the store's) when it answers, else from the store.  Why the filter: another process
        may commit between this search's refresh and its FTS query; its new rows (or a deletion) would
        index past or into stale arrays. They are left out of this search and appear in the next one."""
        got = self.lexical.search(terms, k, max_postings)
        nodes, scores = got if got is not None else self.store.lexical_search(terms, k, max_postings)
        ok = nodes < self.table.n
        ok[ok] = self.table.alive[nodes[ok]]
        if self.vectors.n:
            ok[ok] = nodes[ok] < self.vectors.n
        return (nodes, scores) if ok.all() else (nodes[ok], scores[ok])

    def _recency_prior(self, cfg: SearchConfig):
        """The recency prior of this search (retrieval/priors.py ``RecencySource``), or None."""
        return self.recency.prior(cfg, self.table, self.graph, self._rel_ids, self._seq)

    def _code_rows(self, idxs: list[int] | None):
        """(idx, type, metadata) of the given nodes (None: every node) for the code-history index."""
        rows = self.store.iter_nodes() if idxs is None else self.store.nodes_by_idx(idxs).values()
        for r in rows:
            yield r.idx, r.type, r.metadata

    def blame(
        self,
        path: str,
        lines: Sequence[int],
        as_of: float | str | None = None,
        base: str | None = None,
        exact: bool = False,
    ) -> list[str | None]:
        """The commit (node id) that last touched each old-side line of ``path`` in commit ``base`` (a sha), else
        in the newest mainline commit at or before ``as_of`` (None: now), from the hunks the git ingest
        stored (no git run); None where the stored history does not say."""
        self.refresh()
        when = to_epoch(as_of) if as_of is not None else None
        got = self.code_history.blame_lines(path, [int(x) for x in lines], when, base, exact)
        ids = self.store.ids_by_idx({int(i) for i in got.tolist() if i >= 0})
        return [ids.get(int(i)) if i >= 0 else None for i in got.tolist()]

    def _rank(
        self, q: Query, qvec: np.ndarray, cfg: SearchConfig, side: multilingual.CrossLingual | None = None
    ) -> Ranking:
        extra = [self._metadata_source(cfg.metadata_edges)] if cfg.metadata_edges else []
        t = self.table
        sc = SearchScope.build(t, self.store, self.filters, self.result_types, self.superseded_mask, q, cfg)
        visible = sc.visible
        code = code_evidence(self.code_history, q, cfg, cfg.changes, visible) if "commit" in t.type_ids else None
        if code is not None and visible is not None and code.blame.any():
            # the commits that last wrote the working set's lines are ancestors of its commit: never hidden by time
            sc.admit(code.nodes[code.blame > 0], t)
        # base graph + learned weights near this query, and recent use near it (learning)
        # (learning compares the question with its learning queries in the store's own embedding)
        lvec = qvec if side is None else self.embedder.embed([q.text])[0]
        learned_graph, priming = self.learning.for_search(lvec, q.text, t.n, self._seq)
        vectors = self.vectors if side is None else side.vectors
        gate = multilingual.language_gate(q.cjk, self.embedder) if side is None else side.gate(q.cjk)
        inputs = RankInputs(
            lexical_search=self._known_lexical,
            vectors=vectors,
            graph=learned_graph or self.graph,
            rel_ids=self._rel_ids,
            allowed=sc.allowed,
            extra_sources=extra,
            priming=priming,
            entry_allowed=sc.entry_allowed,
            seed_allowed=sc.seed_allowed,
            query_seeds=self._query_seeds(q) if cfg.query_links and cfg.uses_graph else None,
            visible=visible,
            extra_seeds=sc.file_idx,
            structural=sc.structural,
            event_time=t.event_time,
            recency=self._recency_prior(cfg),
            edge_lines=lambda eids: self.edge_lines.read(eids, self._seq),
            aggregate=lambda nodes: t.aggregate.mask(nodes, t.n),
            placeholder=lambda nodes: t.placeholder.mask(nodes, t.n),
            code=code,
            lexical_trust=gate,  # a CJK question (issue 29)
            titles=lambda rows: {i: h[2] for i, h in self.store.node_heads(rows).items()},
        )
        with one_blas_thread(vectors.n):  # a small matrix: no second BLAS thread to wait on (index/vectors.py)
            r = rank(q, qvec, cfg, inputs)
        r.unknown_files = sc.unknown_files
        return r

    # ------------------------------------------------------------ ask / cypher (issue 13; graphdb/, ask/)
    @property
    def graph_target(self) -> GraphTarget | None:
        """The shared FalkorDB server for ask/cypher (None: the private child); settable before first use."""
        return self.cypher_graph.target

    @graph_target.setter
    def graph_target(self, target: GraphTarget | None) -> None:
        self.cypher_graph.target = target

    @property
    def _cypher(self) -> CypherProjection | None:
        return self.cypher_graph.started  # the projection once started (None before)

    def cypher_projection(self) -> CypherProjection:
        """The Cypher projection (a private FalkorDB child, or a shared server by URL), started on first use."""
        return self.cypher_graph.projection()

    _cypher_projection = cypher_projection  # the name tests and earlier callers use

    def cypher(self, query: str, params: dict | None = None, timeout_ms: int | None = None) -> dict:
        """Run a Cypher query read-only over the projection: ``{"columns", "rows", "truncated"}``.
        Writes, ``LOAD CSV``, timeouts and caps raise ``read_only`` / ``query_timeout`` / ``query_error``."""
        return self.cypher_graph.query(query, params, timeout_ms)

    def graph_schema(self):
        """Labels, relation types (allowed or observed type pairs) and property names, for query generation."""
        return self.cypher_graph.schema()

    def ask(self, question: str, mode: str = "auto", llm=None, limit: int = 5) -> dict:
        """Route a question (graph / vector / hybrid), query read-only, answer with checked ``refs``."""
        from .ask.pipeline import ask as ask_question  # first use only (as graphdb/handle.py's imports)

        return ask_question(self, question, mode=mode, llm=llm, limit=limit)

    # ------------------------------------------------------------ the services' public API, kept on the engine
    # learning loop (learning/api.py: Learning)
    @property
    def learning_policy(self):
        return self.learning.learning_policy

    set_learning_policy = _via("learning", "set_learning_policy")
    record_source_use = _via("learning", "record_source_use")
    record_retrieval_failure = _via("learning", "record_retrieval_failure")
    record_outcome = _via("learning", "record_outcome")
    trace_stages = _via("learning", "trace_stages")
    learning_report = _via("learning", "learning_report")
    node_stats = _via("learning", "node_stats")
    decay = _via("learning", "decay")
    prune_traces = _via("learning", "prune_traces")

    def node_priming(self, qvec: np.ndarray | None = None, query: str | None = None) -> np.ndarray | None:
        """Decayed, query-conditioned activation per node index (see ``Learning.node_priming``)."""
        return self.learning.node_priming(qvec, self.table.n, query)

    def learned_graph(self, qvec: np.ndarray | None = None, query: str | None = None) -> GraphArrays:
        """The graph a search for ``qvec`` walks: ``self.graph`` itself unless edges learned for near
        questions add their learned part (see ``Learning.conditioned_graph``, docs/learning.md)."""
        return self.learning.conditioned_graph(qvec, query) or self.graph

    # relation schema (schema/api.py: Schema)
    schema_atomic = _via("schema", "atomic")
    relation_schema = _via("schema", "relation_schema")
    load_schema = _via("schema", "load_schema")
    set_schema_mode = _via("schema", "set_schema_mode")
    relate = _via("schema", "relate")
    relate_many = _via("schema", "relate_many")
    unrelate = _via("schema", "unrelate")
    create_entity = _via("schema", "create_entity")
    get_entity = _via("schema", "get_entity")
    update_entity = _via("schema", "update_entity")
    add_aliases = _via("schema", "add_aliases")
    resolve = _via("schema", "resolve")
    revise_entry = _via("schema", "revise_entry")
    entry_history = _via("schema", "entry_history")
    record_event = _via("schema", "record_event")
    superseded_mask = _via("schema", "superseded_mask")
    neighbors = _via("schema", "neighbors")
    effective_blockers = _via("schema", "effective_blockers")
    find_paths = _via("schema", "find_paths")
    evidence_chain = _via("schema", "evidence_chain")


def open_engine(
    path: str | Path = ":memory:",
    embedder: Embedder | str | None = None,
    config: SearchConfig | None = None,
    *,
    graph_url: str | None = None,
    graph_write_url: str | None = None,
) -> Engine:
    """Open (creating if needed) a store and the engine over it: ``path`` is a SQLite file (or
    ``":memory:"``) or a ``postgresql://`` URL (store/postgres.py, docs/postgres.md).

    ``embedder``: None for the real default model, ``"hashing"`` for the fast
    deterministic test embedder (not semantic), a model directory, or an object
    implementing :class:`~neurongraph.index.embedder.Embedder`.  ``graph_url`` / ``graph_write_url``: a
    shared FalkorDB server for ask/cypher (see :class:`Engine`).
    """
    store = open_store(path)  # a SQLite file, or a PostgreSQL URL
    try:
        return Engine(store, make_embedder(embedder), config, graph_url=graph_url, graph_write_url=graph_write_url)
    except BaseException:
        store.close()
        raise
