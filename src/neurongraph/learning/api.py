"""The learning loop's service, ``Learning``: owned by :class:`~neurongraph.engine.Engine` as ``eng.learning``
and usable over a bare store (``Learning(store)``: the ledgers need no embedder or index).

Seed 001 constraints, enforced here: retrieval and use are counted apart; only a
node that *newly* reaches ``used`` (after ``selected`` and ``validated``)
reinforces, and only the explanation paths its trace stored; delayed outcomes and
retrieval failures live in their own ledgers and change no weight by default;
decay touches activation and plastic weight only, never confidence or factuality.

Every call is one store transaction (ledger rows and weight edits commit
together); the in-memory graph then follows through ``refresh`` (the engine's
``refresh``) because every edited edge row is stamped with a new change-feed sequence number.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..graph.arrays import GraphArrays
from ..graph.learned import LearnedView
from ..store.base import Store
from .assoc import Idf, QueryBank
from .contextual import EdgeContext, Near, UseContext
from .decay import decayed
from .errors import IdempotencyConflict, InvalidArgument, SourceNotUsed
from .ledger import EdgeBook, Ledger
from .policy import OUTCOMES, STAGES, USED, LearningPolicy, OutcomePolicy
from .reinforce import bounded_increase, diminishing
from .stages import apply_events, newly_used, normalise_events

__all__ = ["Learning"]


@dataclass(frozen=True)
class _Conditioned:
    """What query-conditioned learning reads per search, rebuilt once per store change."""

    seq: int
    bank: QueryBank | None  # every distinct learning query (None: nothing learned)
    uses: UseContext
    edges: EdgeContext


# input lengths every interface shares (Python, CLI, MCP, HTTP: service/contract.LIMITS reads these), so a
# value one interface refuses is refused by all (issue 27: `feedback use --key` took 100k characters)
MAX_REASON_CHARS = 4000  # a failure reason, an outcome summary
MAX_KEY_CHARS = 200  # an idempotency key
MAX_REF_CHARS = 1000  # an outcome's external_ref
_HL_KEYS = ("learning.plastic_half_life_s", "learning.activation_half_life_s")


Embed = Callable[[Sequence[str]], np.ndarray]


class Learning:
    """Source-use ledger, outcome and failure ledgers, reinforcement, priming and decay over one store.

    Dependencies, all declared here:

    * ``store`` — the ledgers, edges and clock (store/base.py ``Store``);
    * ``embed`` — text -> vectors through the store's cache (the engine's ``vectors_for``); only
      query-conditioned priming needs it;
    * ``graph`` — the in-memory graph lazily decayed weights are pushed into (the engine's CSR arrays);
      only ``node_priming`` needs it;
    * ``refresh`` — called after a write so derived state catches up (the engine's ``refresh``);
    * ``idf`` — terms -> corpus IDF (the engine's lexical index, learning/assoc.py ``lexical_idf``): the
      weight of each learning query's terms when a search's terms are compared with it (uniform without).
    """

    def __init__(
        self,
        store: Store,
        *,
        embed: Embed | None = None,
        graph: Callable[[], GraphArrays] | None = None,
        refresh: Callable[[], object] | None = None,
        idf: Idf | None = None,
    ):
        self.store = store
        self._embed = embed
        self._graph = graph
        self._refresh = refresh or (lambda: None)
        self._idf = idf
        self._learning_policy: LearningPolicy | None = None
        self._priming_cache: tuple | None = None  # (store seq, idx, activation, activation_at)
        self._plastic_cache: tuple | None = None  # (store seq, eid, base, plastic, plastic_at, dormant)
        self._decay_applied: tuple | None = None  # (store seq, graph version) of the last push of base weights
        self._edge_context: _Conditioned | None = None  # learned state by learning query, per store change
        self._assoc_memo: tuple | None = None  # ((seq, query vector bytes, query), association per bank row)
        self._qvec_cache: dict[str, np.ndarray] = {}  # learning query text -> vector (queries never change)

    # ------------------------------------------------------------ policy and clock
    @property
    def learning_policy(self) -> LearningPolicy:
        if self._learning_policy is None:
            led = Ledger(self.store)
            self._learning_policy = LearningPolicy(
                plastic_half_life_s=led.meta_float(_HL_KEYS[0], LearningPolicy.plastic_half_life_s),
                activation_half_life_s=led.meta_float(_HL_KEYS[1], LearningPolicy.activation_half_life_s),
            )
        return self._learning_policy

    def set_learning_policy(self, policy: LearningPolicy) -> None:
        """Use ``policy`` from now on; its half-lives are stored so every process decays alike."""
        if not isinstance(policy, LearningPolicy):
            raise InvalidArgument(f"policy must be a LearningPolicy, got {policy!r}")
        led = Ledger(self.store)
        with self.store.transaction():
            led.set_meta(_HL_KEYS[0], policy.plastic_half_life_s)
            led.set_meta(_HL_KEYS[1], policy.activation_half_life_s)
            self.store.next_seq()  # every process re-reads effective weights
        self._learning_policy = policy
        self._priming_cache = self._plastic_cache = self._decay_applied = self._edge_context = None
        self._refresh()

    def _now(self) -> float:
        return float(self.store.clock())

    # ------------------------------------------------------------ source use
    def record_source_use(self, trace_id: str, events, idempotency_key: str | None = None) -> dict:
        """Advance hits of a trace through retrieved → selected → validated → used, atomically.

        Returns a receipt: the transitions made, the nodes that newly reached
        ``used``, and every edge weight changed (old and new).  Replaying the same
        ``idempotency_key`` with the same payload returns the original receipt.
        """
        events = normalise_events(events)
        if idempotency_key is not None and (not isinstance(idempotency_key, str) or not idempotency_key):
            raise InvalidArgument("idempotency_key must be a non-empty string")
        if idempotency_key is not None and len(idempotency_key) > MAX_KEY_CHARS:
            raise InvalidArgument(
                f"idempotency_key is {len(idempotency_key):,} characters, over the limit of {MAX_KEY_CHARS}"
            )
        payload = hashlib.blake2b(
            json.dumps([trace_id, events], ensure_ascii=False).encode(), digest_size=16
        ).hexdigest()
        led, pol = Ledger(self.store), self.learning_policy
        with self.store.transaction():
            if idempotency_key is not None:
                prior = led.rows.receipt_by_key(idempotency_key)
                if prior is not None:
                    if prior[0] != payload:
                        raise IdempotencyConflict(
                            f"idempotency key {idempotency_key!r} was used for a different request",
                            idempotency_key=idempotency_key,
                        )
                    return prior[1]
            trace = led.trace(trace_id)
            led.count_retrievals()
            hits = {h["id"]: h for h in trace["hits"]}
            stages, moves = apply_events(led.rows.stages(trace_id), set(hits), events)
            now = self._now()
            receipt_id = "su_" + uuid.uuid4().hex[:20]
            book = EdgeBook(led, now, pol.plastic_half_life_s)
            fresh = newly_used(moves)
            for node in fresh:
                self._credit_paths(book, hits[node], node, pol.delta, "path")
            self._co_use(book, led, trace, stages, fresh, pol)
            if fresh:
                led.mark_used(
                    list(self.store.lookup_idx(fresh).values()), pol.activation_boost, now, pol.activation_half_life_s
                )
            led.rows.set_stages(trace_id, {t.node_id: t.new for t in moves}, now)
            book.flush(receipt_id, trace_id)
            if fresh and not book.log:
                self.store.next_seq()  # activation changed: other processes re-read priming
            receipt = {
                "receipt_id": receipt_id,
                "trace_id": trace_id,
                "idempotency_key": idempotency_key,
                "transitions": [t.to_dict() for t in moves],
                "newly_used": fresh,
                "edges_changed": book.log,
                "created_at": now,
            }
            led.rows.save_receipt(receipt, idempotency_key, payload)
        self._refresh()
        return receipt

    def _credit_paths(
        self, book: EdgeBook, hit: dict, node: str, delta: float, kind: str, diminish: bool = False
    ) -> None:
        """Reinforce the last hop of each stored explanation path of ``hit``: the edge that reached the used
        source (issue 26: credit goes to the source, not to the hub the path crossed on the way; zero-hop
        paths hold no edge: nothing).  Searches apply it only towards ``node`` (graph/learned.py)."""
        w_max = self.learning_policy.w_max
        seen: set[int] = set()
        for path in hit.get("paths") or []:
            edges = path.get("edges") or []
            if not edges:
                continue
            e = edges[-1]
            eid = book.resolve(e["src"], e["rel"], e["dst"])
            if eid is None or eid in seen:  # a metadata link, an edge deleted since the search, or credited
                continue
            seen.add(eid)
            s = book.state(eid)
            d = diminishing(delta, s.count) if diminish else delta
            old = s.weight(book.now, book.hl)
            book.set_weight(eid, bounded_increase(old, d, w_max), node, kind, count_delta=1)

    def _co_use(
        self, book: EdgeBook, led: Ledger, trace: dict, stages: dict, fresh: list[str], pol: LearningPolicy
    ) -> None:
        """Hebbian association between nodes used in one trace: each pair once, when its second node is used."""
        if not fresh or pol.co_use_max < 2 or pol.co_use_delta == 0:
            return
        order = [h["id"] for h in trace["hits"] if stages.get(h["id"], 0) == USED][: pol.co_use_max]
        pairs = sorted({tuple(sorted((a, b))) for a in fresh if a in order for b in order if b != a})
        if not pairs:
            return
        rel = pol.co_use_rel
        triples = [t for a, b in pairs for t in ((a, rel, b), (b, rel, a))]
        led.create_edges([t for t in triples if led.rows.edge_id(*t) is None])
        for s, r, d in triples:
            eid = book.resolve_exact(s, r, d)
            old = book.state(eid).weight(book.now, book.hl)
            book.set_weight(
                eid, bounded_increase(old, pol.co_use_delta, pol.w_max), d if d in fresh else s, "co_use", count_delta=1
            )

    # ------------------------------------------------------------ other ledgers
    def prune_traces(self, older_than_s: float) -> dict:
        """Delete stored searches older than ``older_than_s`` seconds (by the store clock) that carry no
        feedback; traces with any stage, receipt, failure or outcome stay (they are the learning history).
        Retrieval counts are folded in first, so pruning never changes a node's statistics."""
        if (
            not isinstance(older_than_s, (int, float))
            or isinstance(older_than_s, bool)
            or not math.isfinite(older_than_s)
            or older_than_s < 0
        ):
            raise InvalidArgument(f"older_than must be a finite number of seconds >= 0, got {older_than_s!r}")
        before = self._now() - float(older_than_s)
        led = Ledger(self.store)
        with self.store.transaction():
            led.count_retrievals()
            deleted, kept = self.store.ledgers.prune_traces(before)
        return {"deleted": deleted, "kept_with_feedback": kept, "before": before}

    def record_retrieval_failure(self, trace_id: str, reason: str) -> dict:
        """Nothing usable was found (a fallback was needed): recorded apart, punishes no node, changes no weight."""
        if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON_CHARS:
            raise InvalidArgument(f"reason must be a non-empty string of at most {MAX_REASON_CHARS} characters")
        led = Ledger(self.store)
        with self.store.transaction():
            led.trace(trace_id)
            for f in led.rows.failures(trace_id):  # the same report again (a retry): recorded once
                if f["reason"] == reason:
                    return {**self._failure(f["id"], trace_id, reason, f["created_at"]), "duplicate": True}
            now = self._now()
            fid = led.rows.add_failure(trace_id, reason, now)
        return self._failure(fid, trace_id, reason, now)

    @staticmethod
    def _failure(fid: int, trace_id: str, reason: str, at: float) -> dict:
        return {"failure_id": fid, "trace_id": trace_id, "reason": reason, "created_at": at}

    def record_outcome(
        self,
        trace_id: str,
        node_ids,
        outcome: str,
        summary: str,
        external_ref: str | None = None,
        policy: OutcomePolicy | None = None,
    ) -> dict:
        """A delayed verdict on sources a trace used.  Recorded in its own ledger; weights change only
        where ``policy`` (default: the engine's ``learning_policy.outcomes``) opts in."""
        if outcome not in OUTCOMES:
            raise InvalidArgument(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
        if isinstance(node_ids, str) or not node_ids or not all(isinstance(n, str) and n for n in node_ids):
            raise InvalidArgument("node_ids must be a non-empty list of node ids")
        if not isinstance(summary, str) or len(summary) > MAX_REASON_CHARS:
            raise InvalidArgument(f"summary must be a string of at most {MAX_REASON_CHARS} characters")
        if external_ref is not None and (not isinstance(external_ref, str) or len(external_ref) > MAX_REF_CHARS):
            raise InvalidArgument(f"external_ref must be None or a string of at most {MAX_REF_CHARS} characters")
        if policy is not None and not isinstance(policy, OutcomePolicy):
            raise InvalidArgument(f"policy must be an OutcomePolicy, got {policy!r}")
        node_ids = list(dict.fromkeys(node_ids))
        pol = self.learning_policy
        opol = policy or pol.outcomes
        led = Ledger(self.store)
        with self.store.transaction():
            trace = led.trace(trace_id)
            stages = led.rows.stages(trace_id)
            unused = [n for n in node_ids if stages.get(n, 0) != USED]
            if unused:
                raise SourceNotUsed(
                    f"node(s) {unused} did not reach 'used' in trace {trace_id}; an outcome can only "
                    "judge sources that were used",
                    node_ids=unused,
                    trace_id=trace_id,
                )
            # the same verdict about the same external event (its external_ref) again is a retry: recorded and
            # applied once.  Without an external_ref, a repeated confirmation is a new one (diminishing gains).
            same = next(
                (
                    o
                    for o in (led.rows.outcomes(trace_id) if external_ref is not None else [])
                    if sorted(o["node_ids"]) == sorted(node_ids)
                    and (o["outcome"], o["summary"], o["external_ref"]) == (outcome, summary, external_ref)
                ),
                None,
            )
            if same is not None:
                return {
                    "outcome_id": same["id"],
                    "trace_id": trace_id,
                    "node_ids": node_ids,
                    "outcome": outcome,
                    "effect": opol.effect(outcome),
                    "edges_changed": [],
                    "created_at": same["created_at"],
                    "duplicate": True,
                }
            now = self._now()
            oid = led.rows.add_outcome(trace_id, node_ids, outcome, summary, external_ref, opol.to_dict(), now)
            book = EdgeBook(led, now, pol.plastic_half_life_s)
            effect = opol.effect(outcome)
            hits = {h["id"]: h for h in trace["hits"]}
            for n in node_ids:
                if effect == "reinforce":
                    self._credit_paths(book, hits[n], n, opol.confirm_delta, "confirm", diminish=True)
                elif effect == "reverse":
                    self._reverse(book, led, trace_id, n, oid)
                elif effect == "dormant":
                    self._make_dormant(book, hits[n], n)
            book.flush(f"oc_{oid}", trace_id)
        if book.log:
            self._refresh()
        return {
            "outcome_id": oid,
            "trace_id": trace_id,
            "node_ids": node_ids,
            "outcome": outcome,
            "effect": effect,
            "edges_changed": book.log,
            "created_at": now,
        }

    def _reverse(self, book: EdgeBook, led: Ledger, trace_id: str, node: str, oid: int) -> None:
        """Take back exactly what this trace added for ``node`` (each increase decayed like the plastic part)."""
        rows = []
        for r in led.rows.weight_changes(trace_id, kinds=("path", "co_use", "confirm"), unreversed=True):
            s = book.get(r["eid"])  # a co-use edge belongs to both of its nodes
            if s is not None and (r["node_id"] == node or (r["kind"] == "co_use" and node in (s.src, s.dst))):
                rows.append(r)
        for r in rows:
            s = book.state(r["eid"])
            gain = max(r["new_weight"] - r["old_weight"], 0.0) * float(np.exp2(-max(book.now - r["at"], 0.0) / book.hl))
            plastic = max(s.plastic_now(book.now, book.hl) - gain, 0.0)
            book.set_weight(r["eid"], s.base + plastic, node, "reverse", count_delta=-1, wake=False)
        led.rows.mark_reversed([r["id"] for r in rows], oid)

    def _make_dormant(self, book: EdgeBook, hit: dict, node: str) -> None:
        for path in hit.get("paths") or []:
            edges = path.get("edges") or []
            if edges:
                e = edges[-1]
                eid = book.resolve(e["src"], e["rel"], e["dst"])
                if eid is not None:
                    book.set_weight(eid, 0.0, node, "dormant", dormant=True)

    # ------------------------------------------------------------ reads
    def trace_stages(self, trace_id: str) -> dict[str, str]:
        """Stage of every hit of a trace (hits never advanced are ``retrieved``)."""
        led = Ledger(self.store)
        trace = led.trace(trace_id)
        st = led.rows.stages(trace_id)
        return {h["id"]: STAGES[st.get(h["id"], 0)] for h in trace["hits"]}

    def recent_traces(self, limit: int) -> list[dict]:
        """The newest stored searches and asks (any process), newest first: ``trace_id``, ``kind`` ("search"
        or "ask": an ask's trace fingerprint starts with ``ask:``), ``created_at``, ``hits`` (how many),
        ``query``: what a person picks a trace from before giving feedback on it."""
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise InvalidArgument(f"limit must be an integer >= 0, got {limit!r}")
        return [
            {
                "trace_id": t["id"],
                "kind": "ask" if str(t["fingerprint"]).startswith("ask:") else "search",
                "created_at": t["created_at"],
                "hits": t["hits"],
                "query": t["query"],
            }
            for t in self.store.recent_traces(limit)
        ]

    def learning_report(self, trace_id: str) -> dict:
        """Everything the learning loop knows about one trace: hits with stages, receipts, outcomes, failures."""
        led = Ledger(self.store)
        trace = led.trace(trace_id)
        st = led.rows.stages(trace_id)
        return {
            "trace": trace,
            "stages": {h["id"]: STAGES[st.get(h["id"], 0)] for h in trace["hits"]},
            "receipts": led.rows.receipts(trace_id),
            "outcomes": led.rows.outcomes(trace_id),
            "failures": led.rows.failures(trace_id),
            "weight_changes": led.rows.weight_changes(trace_id),
        }

    def node_stats(self, node_ids=None) -> dict[str, dict]:
        """Retrieval and use counts (kept apart) and current, decayed activation per node."""
        led = Ledger(self.store)
        with self.store.transaction():
            led.count_retrievals()
        if node_ids is None:
            rows = led.rows.node_stats()
            ids = {r.idx: r.id for r in self.store.nodes_by_idx([r[0] for r in rows]).values()}
        else:
            node_ids = [node_ids] if isinstance(node_ids, str) else list(node_ids)
            idx = self.store.lookup_idx(node_ids)
            rows = led.rows.node_stats(list(idx.values()))
            ids = {i: n for n, i in idx.items()}
        now, hl = self._now(), self.learning_policy.activation_half_life_s
        out = {
            ids[r[0]]: {
                "retrieved_count": r[1],
                "used_count": r[2],
                "activation": float(decayed(r[3], np.nan if r[4] is None else r[4], now, hl)),
                "activation_at": r[4],
            }
            for r in rows
            if r[0] in ids
        }
        if node_ids is not None:
            for n in node_ids:
                if n in idx:
                    out.setdefault(n, {"retrieved_count": 0, "used_count": 0, "activation": 0.0, "activation_at": None})
        return out

    # ------------------------------------------------------------ decay and priming
    def decay(self, now: float | None = None) -> dict:
        """Materialise time decay of activation and plastic weight at ``now`` (default: the store clock).

        Reads already apply decay lazily, so this changes no ranking by itself; it
        compacts state (tiny remainders become exactly 0).  Never touches
        confidence, factuality or base weight."""
        now = self._now() if now is None else float(now)
        pol = self.learning_policy
        led = Ledger(self.store)
        with self.store.transaction():
            n_edges = led.decay_edges(now, pol.plastic_half_life_s, self.store.next_seq)
            n_nodes = led.decay_activation(now, pol.activation_half_life_s)
            if n_nodes and not n_edges:
                self.store.next_seq()
        self._refresh()
        return {"edges": n_edges, "nodes": n_nodes, "at": now}

    def node_priming(
        self, qvec: np.ndarray | None = None, n_nodes: int = 0, query: str | None = None
    ) -> np.ndarray | None:
        """Decayed activation of recently used nodes (0..1) for ranking; None when nothing is primed.

        With ``qvec``, priming is query-conditioned: a used node is primed in proportion to how near this
        query (its vector and, with ``query``, its distinctive terms: learning/assoc.py) is to the queries
        it was used for (Hebbian query↔source association), so feedback on one question does not pull its
        sources into unrelated answers.  Called once per search, so it is also where lazily decayed
        plastic weights reach the in-memory graph (a time-only change has no change-feed entry).  The
        result covers at least ``n_nodes`` node indices."""
        seq = self.store.current_seq()
        now = self._now()
        self._apply_weight_decay(seq, now)
        if self._priming_cache is None or self._priming_cache[0] != seq:
            self._priming_cache = (seq, *Ledger(self.store).rows.active_nodes())
        _, idx, act, at = self._priming_cache
        if idx.size == 0:
            return None
        hl = self.learning_policy.activation_half_life_s
        if qvec is None:
            out = np.zeros(max(n_nodes, int(idx.max()) + 1))
            out[idx] = decayed(act, at, now, hl)
            return out
        state = self._conditioned(seq)
        return state.uses.priming(self._assoc(state, qvec, query), now, hl, n_nodes)

    def for_search(
        self, qvec: np.ndarray | None, query: str | None, n_nodes: int, seq: int | None = None
    ) -> tuple[GraphArrays | None, np.ndarray | None]:
        """What one search reads from the learned state: the graph it walks (``conditioned_graph``) and its
        node priming (``node_priming``; None when no used node is near this query, which ranks the same
        as zeros).  One read of the store's sequence number and clock, one weight-decay check and one
        association with the learning queries serve both, so a search pays for them once.  ``seq``: the
        sequence number the caller's in-memory indexes are at (the engine has just read it; None: read
        it from the store)."""
        seq = self.store.current_seq() if seq is None else seq
        now = self._now()
        self._apply_weight_decay(seq, now)
        graph = self._graph() if self._graph is not None else None
        if self._priming_cache is None or self._priming_cache[0] != seq:
            self._priming_cache = (seq, *Ledger(self.store).rows.active_nodes())
        has_uses = self._priming_cache[1].size > 0
        has_edges = graph is not None and self._plastic_cache is not None and self._plastic_cache[1].size > 0
        if not (has_uses or has_edges):
            return graph, None
        if qvec is None:  # no query vector: unconditioned priming, the base graph (as the two reads give)
            return graph, self.node_priming(None, n_nodes) if has_uses else None
        state = self._conditioned(seq)
        near = self._assoc(state, qvec, query)
        if near[0].size == 0:
            return graph, None
        priming = state.uses.priming(near, now, self.learning_policy.activation_half_life_s, n_nodes, sparse_none=True)
        if graph is not None and has_edges and len(state.edges):
            ov = state.edges.overlay(near, now, self.learning_policy.plastic_half_life_s)
            if ov is not None:
                graph = LearnedView(graph, ov)
        return graph, priming

    def _conditioned(self, seq: int) -> _Conditioned:
        """The learned state grouped by learning query, once per store change (the query vectors are
        embedded once per process)."""
        st = self._edge_context
        if st is not None and st.seq == seq and (st.bank is None or st.bank.weighted or not self._idf_ready()):
            return st  # (a bank built before the BM25 index existed is rebuilt once it does)
        led = Ledger(self.store)
        idx, act, at = (
            self._priming_cache[1:]
            if self._priming_cache and self._priming_cache[0] == seq
            else (led.rows.active_nodes())
        )
        by_id = led.rows.used_queries() if idx.size else []
        use_idx = self.store.lookup_idx({n for n, _ in by_id})
        uses = [(use_idx[n], q) for n, q in by_id if n in use_idx]
        _, eid, _, plastic, p_at, dormant = self._plastic_cache or (seq, *self.store.ledgers.plastic_edges())
        live = {int(e): (float(p), float(a)) for e, p, a, d in zip(eid, plastic, p_at, dormant) if p != 0 and not d}
        edge_rows = self.store.ledgers.learned_edge_queries() if live else []
        queries = list(dict.fromkeys([q for _, q in uses] + [r[4] for r in edge_rows if r[0] in live]))
        bank = QueryBank.build(queries, self._query_vectors(queries), self._idf) if queries else None
        row = bank.row if bank is not None else {}
        st = _Conditioned(seq, bank, UseContext.build(uses, idx, act, at, row), EdgeContext.build(edge_rows, live, row))
        self._edge_context, self._assoc_memo = st, None
        return st

    def _idf_ready(self) -> bool:
        return self._idf is not None and self._idf([]) is not None

    def _assoc(self, state: _Conditioned, qvec: np.ndarray, query: str | None) -> Near:
        """The learning queries this search is near, with its association with each (memoised: priming
        and the learned view of one search share it)."""
        if state.bank is None:
            return np.zeros(0, np.int64), np.zeros(0)
        q = np.asarray(qvec, np.float32)
        key = (state.seq, q.tobytes(), query)
        if self._assoc_memo is not None and self._assoc_memo[0] == key:
            return self._assoc_memo[1]
        pol = self.learning_policy
        a = state.bank.near(q, query, pol.priming_min_query_sim, pol.min_term_overlap, pol.assoc_power)
        self._assoc_memo = (key, a)
        return a

    def _query_vectors(self, queries: list[str]) -> np.ndarray:
        """Vectors of learning queries; each text is embedded once per process (a store change re-reads
        the ledgers, not the vectors)."""
        if self._embed is None:
            raise InvalidArgument("query-conditioned learning needs an embedder: build Learning(store, embed=...)")
        cache = self._qvec_cache
        todo = list(dict.fromkeys(q for q in queries if q not in cache))
        if todo:
            cache.update(zip(todo, np.asarray(self._embed(todo), np.float32)))
        if not queries:
            return np.zeros((0, 0), np.float32)
        return np.stack([cache[q] for q in queries]).astype(np.float32, copy=False)

    def conditioned_graph(self, qvec: np.ndarray | None, query: str | None = None) -> GraphArrays | None:
        """The graph this query walks: the base graph with the learned weights of edges whose learning
        queries are near ``qvec`` (and ``query``'s terms) added (graph/learned.py ``LearnedView``).
        Unrelated queries, and every search before anything was learned, get the graph itself.  None
        without a graph."""
        if self._graph is None:
            return None
        seq, now = self.store.current_seq(), self._now()
        self._apply_weight_decay(seq, now)
        graph = self._graph()
        if qvec is None or self._plastic_cache is None or self._plastic_cache[1].size == 0:
            return graph
        state = self._conditioned(seq)
        if len(state.edges) == 0:
            return graph
        ov = state.edges.overlay(self._assoc(state, qvec, query), now, self.learning_policy.plastic_half_life_s)
        return graph if ov is None else LearnedView(graph, ov)

    def _apply_weight_decay(self, seq: int, now: float) -> None:
        """Keep the in-memory graph at the *base* weights of learned edges (0 while dormant): the change feed
        brings effective weights, but a learned part belongs only to the questions it was learned for and
        is added per search (``conditioned_graph``), decayed to that moment.  Once per store change."""
        if self._plastic_cache is None or self._plastic_cache[0] != seq:
            self._plastic_cache = (seq, *self.store.ledgers.plastic_edges())
        _, eid, base, plastic, at, dormant = self._plastic_cache
        if eid.size == 0 or self._graph is None:
            return  # nothing learned, or no in-memory graph to keep in step (a bare store)
        graph = self._graph()
        if self._decay_applied == (seq, id(graph), graph.version):
            return
        graph.set_weights(eid, np.where(dormant != 0, 0.0, base))
        self._decay_applied = (seq, id(graph), graph.version)
