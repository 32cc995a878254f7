"""Shared fixtures: real SQLite files in temp dirs; the real model loaded once per session."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "ngr.db"


@pytest.fixture
def engine(db_path):
    import neurongraph as ngr

    eng = ngr.open(db_path, embedder="hashing")
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def real_embedder():
    from neurongraph.index.embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


# the PostgreSQL server fixtures (pg_server: one per session, always stopped; pg_url: a fresh database), issue 15
from postgres_server import _stop_shared_server, pg_server, pg_url  # noqa: E402, F401
