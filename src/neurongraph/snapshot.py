"""The engine's derived in-memory state, saved next to a file store so a large store reopens fast.

Opening an engine replays the store into numpy arrays (node table, vector matrix, CSR graph;
the BM25 postings once the engine searches, index/bm25.py).
At 1M nodes / 10M edges that replay reads every row through SQLite: 106 s.  A snapshot is
the same arrays *as of* change-feed sequence ``S``, in one ``.npz`` file beside the database;
opening loads it and then catches up through the ordinary change feed (``changes_since(S)``),
exactly as an engine that had stayed open would.  The store stays the only source of truth:

* a snapshot is used only if the store vouches for it — each save writes a fresh random token into
  the file and then into the store's ``meta`` — and it was made with the same embedder (model id and
  dimension) with ``S`` not ahead of the store.  Another database, a database restored from a backup
  older than the snapshot, a save that crashed before its token reached the store, a stale format or
  an unreadable file: all mean a full replay;
* it is written atomically (a temporary file, then ``os.replace``), so a reader never sees a
  half-written file and concurrent writers leave one complete snapshot; a temporary file left by a
  process that died mid-write is removed by the next open or save;
* its content is checked before use, not only its token: every array's length and every index's
  range (node, type, source, vector row, edge endpoint, IVF list) against the file's own tables, and
  every weight and vector for finiteness, so a damaged or forged file means a replay, never a crash
  or a huge allocation;
* learned edge weights decay with time and carry no change-feed entry for it; the snapshot holds
  them as of ``S`` and the first search re-applies the current effective weights, as it does in
  a running engine (``Learning.node_priming``).
"""

from __future__ import annotations

import glob
import json
import os
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .index.bm25 import check_arrays as bm25_arrays_ok

__all__ = [
    "FORMAT",
    "TOKEN_KEY",
    "SnapshotState",
    "snapshot_path",
    "new_token",
    "save_snapshot",
    "load_snapshot",
    "remove_stale_temporaries",
]

FORMAT = 2  # 2: + event time and source per node (search filters); older files are ignored (replay)
_EDGE_COLS = ("src", "dst", "weight", "fact", "rtype", "pol", "eid")


@dataclass
class SnapshotState:
    """What a snapshot file holds of the engine's derived arrays, tied to the store sequence it was taken at."""

    seq: int
    model_id: str
    dim: int
    type_names: list[str]  # node type name of each type id, in id order
    alive: np.ndarray  # bool, per node index
    type_of: np.ndarray  # int32 type id per node index (-1 = none)
    vec_idx: np.ndarray  # int64 node indices that have a vector
    vec_mat: np.ndarray  # float32 (len(vec_idx), dim)
    n_nodes: int  # graph size (max node index + 1)
    edges: dict[str, np.ndarray]  # the graph's live edges, columns of _EDGE_COLS
    linker: dict[str, np.ndarray] | None = None  # query-side link tables (link/query.py), if exact at seq
    linker_config: str | None = None  # the store's linker_config when they were made
    ivf: tuple[np.ndarray, np.ndarray, int] | None = None  # trained IVF: centroids, assignments, rows at training
    event_time: np.ndarray | None = None  # float64 event time per node index (NaN = none); None = all NaN
    source_of: np.ndarray | None = None  # int32 source id per node index (-1 = none); None = all -1
    source_names: list[str] = field(default_factory=list)  # source name of each source id, in id order
    bm25: dict[str, np.ndarray] | None = None  # in-memory BM25 arrays (index/bm25.py, export()), if it was built

    def __post_init__(self):
        n = self.alive.shape[0]
        if self.event_time is None:
            self.event_time = np.full(n, np.nan)
        if self.source_of is None:
            self.source_of = np.full(n, -1, np.int32)


def snapshot_path(db_path: str) -> Path | None:
    """Where the snapshot of a file store lives; ``None`` for an in-memory store."""
    if not db_path or db_path == ":memory:" or db_path.startswith("file:") or "://" in db_path:
        return None
    return Path(db_path + ".snapshot.npz")


TOKEN_KEY = "snapshot.token"


def new_token() -> str:
    """A fresh random token: written into the snapshot, then into the store's ``meta`` (see module doc)."""
    return uuid.uuid4().hex


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # exists under another user (or not a pid we can ask about): leave its file alone
    return True


def remove_stale_temporaries(path: Path) -> int:
    """Delete ``<snapshot>.<pid>.<rand>.tmp`` files whose writer process is gone; returns how many."""
    removed = 0
    try:
        candidates = list(path.parent.glob(glob.escape(path.name) + ".*.tmp"))
    except OSError:
        return 0
    for tmp in candidates:
        parts = tmp.name[len(path.name) + 1 :].split(".")
        if len(parts) != 3 or not parts[0].isdigit() or _pid_alive(int(parts[0])):
            continue
        try:
            tmp.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def save_snapshot(path: Path, token: str, st: SnapshotState) -> int:
    """Write ``st`` atomically; returns the file size in bytes.  The caller records ``token`` in the
    store afterwards: until it does, the file is not trusted."""
    header = {
        "format": FORMAT,
        "token": token,
        "seq": int(st.seq),
        "model_id": st.model_id,
        "dim": int(st.dim),
        "type_names": st.type_names,
        "n_nodes": int(st.n_nodes),
        "linker_config": st.linker_config,
        "ivf_trained_n": int(st.ivf[2]) if st.ivf is not None else None,
        "source_names": st.source_names,
    }
    assert st.event_time is not None and st.source_of is not None  # set by __post_init__
    arrays: dict[str, Any] = {  # Any: numpy's stub of savez(**arrays) also takes allow_pickle=bool
        "header": np.frombuffer(json.dumps(header).encode(), np.uint8),
        "alive": st.alive,
        "type_of": st.type_of,
        "vec_idx": st.vec_idx,
        "vec_mat": st.vec_mat,
        "event_time": st.event_time,
        "source_of": st.source_of,
        **{f"edge_{k}": st.edges[k] for k in _EDGE_COLS},
        **{f"linker_{k}": v for k, v in (st.linker or {}).items()},
        **({"ivf_centroids": st.ivf[0], "ivf_assign": st.ivf[1]} if st.ivf is not None else {}),
        **{f"bm25_{k}": v for k, v in (st.bm25 or {}).items()},
    }
    remove_stale_temporaries(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        # 0600 whatever the umask (the store's own mode): os.replace keeps it for the snapshot
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path.stat().st_size


def load_snapshot(path: Path, token: str | None, model_id: str, dim: int, store_seq: int) -> SnapshotState | None:
    """The snapshot at ``path`` if the store vouches for it (``token``) and it fits the embedder, else ``None``."""
    if path.parent.is_dir():
        remove_stale_temporaries(path)
    if token is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            h = json.loads(bytes(z["header"]).decode())
            if (
                h.get("format") != FORMAT
                or h.get("token") != token
                or h.get("model_id") != model_id
                or h.get("dim") != dim
                or not 0 <= int(h.get("seq", -1)) <= store_seq
            ):
                return None
            st = SnapshotState(
                seq=int(h["seq"]),
                model_id=model_id,
                dim=dim,
                type_names=list(h["type_names"]),
                alive=z["alive"].astype(bool),
                type_of=z["type_of"].astype(np.int32),
                vec_idx=z["vec_idx"].astype(np.int64),
                vec_mat=z["vec_mat"].astype(np.float32, copy=False),
                n_nodes=int(h["n_nodes"]),
                edges={k: z[f"edge_{k}"] for k in _EDGE_COLS},
                linker={k[len("linker_") :]: z[k] for k in z.files if k.startswith("linker_")} or None,
                linker_config=h.get("linker_config"),
                ivf=(z["ivf_centroids"], z["ivf_assign"], int(h["ivf_trained_n"]))
                if h.get("ivf_trained_n") is not None
                else None,
                event_time=z["event_time"].astype(np.float64),
                source_of=z["source_of"].astype(np.int32),
                source_names=list(h["source_names"]),
                bm25={k[len("bm25_") :]: z[k] for k in z.files if k.startswith("bm25_")} or None,
            )
    except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
        return None  # unreadable or from another version: the store replays instead
    return st if _consistent(st, dim) else None


def _in_range(a: np.ndarray, lo: int, hi: int) -> bool:
    """Every value of integer array ``a`` in [lo, hi) (true for an empty array)."""
    return a.size == 0 or (int(a.min()) >= lo and int(a.max()) < hi)


def _repeats(a: np.ndarray) -> bool:
    """Whether ``a`` holds a value twice (a sort, not ``np.unique``: that imports ``numpy.ma``, 8–20 ms of every
    cold command that opens an engine)."""
    s = np.sort(a, kind="stable")
    return bool(s.size > 1 and (s[1:] == s[:-1]).any())


def _consistent(st: SnapshotState, dim: int) -> bool:
    """Shapes and ranges agree with each other (see the module doc): anything else means a replay."""
    assert st.event_time is not None and st.source_of is not None  # set by __post_init__
    n = st.alive.shape[0]
    e = st.edges
    if any(a.ndim != 1 for a in (st.alive, st.type_of, st.vec_idx, st.event_time, st.source_of, *e.values())):
        return False
    if st.type_of.shape[0] != n or st.event_time.shape[0] != n or st.source_of.shape[0] != n:
        return False
    if not 0 <= st.n_nodes <= n or len({e[k].shape[0] for k in _EDGE_COLS}) != 1:
        return False
    if not (_in_range(st.type_of, -1, len(st.type_names)) and _in_range(st.source_of, -1, len(st.source_names))):
        return False
    if st.vec_mat.shape != (st.vec_idx.shape[0], dim) or not _in_range(st.vec_idx, 0, n):
        return False
    if _repeats(st.vec_idx) or not np.isfinite(st.vec_mat).all():
        return False
    if not (_in_range(e["src"], 0, st.n_nodes) and _in_range(e["dst"], 0, st.n_nodes)):
        return False
    if not (np.isfinite(e["weight"]).all() and np.isfinite(e["fact"]).all() and _in_range(e["rtype"], 0, 2**31)):
        return False
    if st.bm25 is not None:  # BM25 postings: of live nodes only, every index in range, docs ascending
        if not bm25_arrays_ok(st.bm25, n) or not st.alive[st.bm25["rows"].astype(np.int64)].all():
            return False
    if st.ivf is not None:
        centroids, assign, trained = st.ivf
        if centroids.ndim != 2 or centroids.shape[1] != dim or not np.isfinite(centroids).all():
            return False
        # assign: a list per vector row, -1 for a row without a vector
        if assign.ndim != 1 or not 0 <= trained <= assign.shape[0] or not _in_range(assign, -1, centroids.shape[0]):
            return False
    return True
