"""Retrieval-quality benchmark on multi-hop QA sets (``corpus.jsonl`` + ``queries.jsonl``).

Protocol (see shared/bench/README.md): retrieve over the whole corpus; Recall@k =
|top-k ∩ gold| / |gold| averaged over questions; plus MRR and the efficiency a
reader pays: passages and tokens taken in rank order until every gold passage is
in hand (capped at ``CAP``).  Every system runs through the real engine on the
same store and the same encoder; only the :class:`SearchConfig` differs.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine import Engine, open_engine
from ..errors import InvalidArgument
from ..index.embedder import make_embedder
from ..model import Node
from ..store.sqlite import SQLiteStore

__all__ = [
    "load_dataset",
    "Dataset",
    "SYSTEMS",
    "run_benchmark",
    "evaluate",
    "markdown_table",
    "ingest_dataset",
    "open_for_dataset",
]

CAP = 50  # passages a reader is assumed to take at most
KS = (2, 5, 10)


@dataclass
class Dataset:
    """One QA benchmark set as read from disk: its passages and its questions with their gold passages."""

    name: str
    passages: list[dict]
    queries: list[dict]


def _read_jsonl(path: Path) -> list[dict]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InvalidArgument(f"{path}:{n}: not valid JSON ({exc.msg})") from None
    return out


def load_dataset(folder: str | Path, limit_queries: int | None = None) -> Dataset:
    folder = Path(folder)
    corpus, queries = folder / "corpus.jsonl", folder / "queries.jsonl"
    for f in (corpus, queries):
        if not f.is_file():
            raise InvalidArgument(f"{folder} is not a benchmark folder: {f.name} is missing")
    passages = _read_jsonl(corpus)
    qs = _read_jsonl(queries)
    ids = {p["id"] for p in passages}
    for q in qs:
        if not set(q.get("gold_ids", [])) <= ids:
            raise InvalidArgument(f"question {q.get('qid')}: gold ids missing from the corpus")
    if limit_queries:
        qs = qs[:limit_queries]
    return Dataset(folder.name, passages, qs)


def passage_id(pid) -> str:
    return f"p:{pid}"


# Named systems: the same engine, different configurations.  "ngr" is the default
# configuration a user gets without flags (restricted to passages for scoring).
# Baselines see passages only (entity nodes made by the linker would take their
# candidate slots); ablations switch relation families off with alpha=0.
_PASSAGES = ("passage",)
_MENTIONS = ("mentions", "references")
_ENTITIES = ("has_entity", "entity_in", "similar_to")


def _systems() -> dict[str, dict]:
    return {
        "bm25": dict(channel="none", lexical_weight=1.0, dense_weight=0.0, entry_types=_PASSAGES),
        "dense": dict(channel="none", lexical_weight=0.0, dense_weight=1.0, entry_types=_PASSAGES),
        "hybrid": dict(channel="none", entry_types=_PASSAGES),
        "ngr": {},
        "ngr-beam": dict(channel="beam"),
        "ngr-ppr": dict(channel="ppr"),
        "ngr-eager": dict(channel="eager"),
        "ngr-mmr": dict(channel="mmr"),
        "ngr-scored": dict(channel="scored"),
        "ablate:no-query-links": dict(query_links=False),
        "ablate:mentions-only": dict(query_types=_MENTIONS, alpha=0.0),
        "ablate:entities-only": dict(query_types=_ENTITIES, alpha=0.0),
    }


SYSTEMS = _systems()


def evaluate(ranked: list[list[str]], gold: list[list[str]], tokens: dict[str, int]) -> dict:
    """Recall@k, MRR and cost-to-full-recall for ranked id lists against gold id lists."""
    rec: dict[int, list[float]] = {k: [] for k in KS}
    mrr, n_pass, n_tok, never = [], [], [], 0
    for r, g in zip(ranked, gold):
        gs = set(g)
        for k in KS:
            rec[k].append(len(gs & set(r[:k])) / len(gs))
        first = next((i for i, x in enumerate(r) if x in gs), None)
        mrr.append(0.0 if first is None else 1.0 / (first + 1))
        found, toks, need = 0, 0, None
        for i, x in enumerate(r[:CAP]):
            toks += tokens.get(x, 0)
            if x in gs:
                found += 1
                if found == len(gs):
                    need = i + 1
                    break
        if need is None:
            never += 1
            n_pass.append(CAP)
            n_tok.append(toks)
        else:
            n_pass.append(need)
            n_tok.append(toks)
    out = {f"recall@{k}": float(np.mean(v)) for k, v in rec.items()}
    out.update(
        {
            "mrr": float(np.mean(mrr)),
            "passages_to_full_recall": float(np.mean(n_pass)),
            "tokens_to_full_recall": float(np.mean(n_tok)),
            "never_full_recall": never,
        }
    )
    return out


def default_db_for(ds: Dataset, model_id: str, cache_dir: Path) -> Path:
    key = hashlib.blake2b(json.dumps([ds.name, len(ds.passages), model_id]).encode(), digest_size=6).hexdigest()
    return cache_dir / f"{ds.name}-{key}.db"


def ingest_dataset(eng: Engine, ds: Dataset, link: bool = True, progress: Callable | None = None) -> dict:
    """Passages as ``passage`` nodes (cached embeddings make a re-run cheap), then the LLM-free linker."""
    t = time.perf_counter()
    nodes = [Node(passage_id(p["id"]), "passage", p.get("title", ""), p.get("text", "")) for p in ds.passages]
    info = eng.add_nodes(nodes, progress=progress)
    info["ingest_s"] = time.perf_counter() - t
    if link and hasattr(eng, "link"):
        t = time.perf_counter()
        info["link"] = eng.link()
        info["link_s"] = time.perf_counter() - t
    return info


def run_benchmark(
    eng: Engine, ds: Dataset, systems: dict[str, dict] | None = None, progress: Callable | None = None
) -> dict:
    systems = systems or SYSTEMS
    base = eng.config.replace(limit=CAP, result_types=("passage",))
    qtext = [q["question"] for q in ds.queries]
    qvecs = eng.embedder.embed(qtext)
    gold = [[passage_id(g) for g in q["gold_ids"]] for q in ds.queries]
    tokens = {passage_id(p["id"]): len((p.get("title", "") + " " + p.get("text", "")).split()) for p in ds.passages}
    out = {}
    total = len(systems) * len(qtext)
    done = 0
    for name, overrides in systems.items():
        cfg = base.replace(**overrides)
        ranked, lat = [], []
        for q, v in zip(qtext, qvecs):
            t = time.perf_counter()
            res = eng.search(q, config=cfg, qvec=v, record=False)
            lat.append((time.perf_counter() - t) * 1000)
            ranked.append([h.id for h in res.hits])
            done += 1
            if progress:
                progress(done, total)
        m = evaluate(ranked, gold, tokens)
        m["latency_ms_mean"] = float(np.mean(lat))
        m["latency_ms_p50"] = float(np.median(lat))
        m["config"] = {k: v for k, v in overrides.items()}
        out[name] = m
    return {
        "dataset": ds.name,
        "n_queries": len(qtext),
        "n_passages": len(ds.passages),
        "embedder": eng.embedder.model_id,
        "systems": out,
    }


def markdown_table(result: dict) -> str:
    cols = [
        "recall@2",
        "recall@5",
        "recall@10",
        "mrr",
        "passages_to_full_recall",
        "tokens_to_full_recall",
        "never_full_recall",
        "latency_ms_mean",
    ]
    head = "| system | " + " | ".join(cols) + " |"
    sep = "|---" * (len(cols) + 1) + "|"
    rows = []
    for name, m in result["systems"].items():
        cells = []
        for c in cols:
            v = m[c]
            cells.append(
                f"{v:.3f}" if c.startswith(("recall", "mrr")) else (f"{v:.1f}" if isinstance(v, float) else str(v))
            )
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    title = (
        f"**{result['dataset']}** — {result['n_queries']} questions, {result['n_passages']} passages,"
        f" encoder `{result['embedder']}`"
    )
    return "\n".join([title, "", head, sep, *rows])


def open_for_dataset(ds: Dataset, db: str | Path | None, embedder=None, cache_dir: str | Path = ".ngr/bench") -> Engine:
    if db is None:
        emb = make_embedder(embedder)
        path = default_db_for(ds, emb.model_id, Path(cache_dir))
        path.parent.mkdir(parents=True, exist_ok=True)
        return Engine(SQLiteStore(path), emb)
    return open_engine(db, embedder=embedder)
