"""Named, ordered schema migrations for the SQLite store.

Each migration runs once, inside a transaction, and is recorded in the
``migrations`` table (after sqlite-utils).  Add new ones at the end; never edit
an applied one.  ``SCHEMA_VERSION`` is the number of migrations.
"""
from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    ("0001_core", """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT OR IGNORE INTO meta(key, value) VALUES ('seq', '0');

    -- idx is the node's position in every in-memory array; id is the caller's key
    CREATE TABLE nodes (
        idx          INTEGER PRIMARY KEY,
        id           TEXT NOT NULL UNIQUE,
        type         TEXT NOT NULL,
        title        TEXT NOT NULL DEFAULT '',
        text         TEXT NOT NULL DEFAULT '',
        metadata     TEXT NOT NULL DEFAULT '{}',
        confidence   REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
        content_hash TEXT NOT NULL,
        created_at   REAL NOT NULL,
        updated_at   REAL NOT NULL,
        seq          INTEGER NOT NULL
    );
    CREATE INDEX nodes_seq ON nodes(seq);
    CREATE INDEX nodes_type ON nodes(type);

    -- predicate (relation) types; the id is the type id carried by graph arrays
    CREATE TABLE relations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);

    CREATE TABLE edges (
        eid             INTEGER PRIMARY KEY,
        src             INTEGER NOT NULL REFERENCES nodes(idx) ON DELETE CASCADE,
        rel_id          INTEGER NOT NULL REFERENCES relations(id),
        dst             INTEGER NOT NULL REFERENCES nodes(idx) ON DELETE CASCADE,
        polarity        INTEGER NOT NULL DEFAULT 1 CHECK (polarity IN (-1, 1)),
        weight          REAL NOT NULL DEFAULT 1.0,      -- base weight, set by the caller
        plastic         REAL NOT NULL DEFAULT 0.0,      -- learned part, decays toward 0
        plastic_at      REAL,                           -- when plastic was last set (lazy decay)
        factuality      REAL NOT NULL DEFAULT 1.0 CHECK (factuality BETWEEN 0 AND 1),
        meta            TEXT NOT NULL DEFAULT '{}',
        reinforce_count INTEGER NOT NULL DEFAULT 0,
        created_at      REAL NOT NULL,
        updated_at      REAL NOT NULL,
        seq             INTEGER NOT NULL,
        UNIQUE (src, rel_id, dst)
    );
    CREATE INDEX edges_dst ON edges(dst, rel_id);
    CREATE INDEX edges_seq ON edges(seq);

    -- deletions since a sequence number, so other engine processes can follow
    CREATE TABLE tombstones (seq INTEGER NOT NULL, kind TEXT NOT NULL, key INTEGER NOT NULL);
    CREATE INDEX tombstones_seq ON tombstones(seq);

    -- BM25 over title+text (CJK pre-split into uni/bigrams, see index/tokenize.py)
    CREATE VIRTUAL TABLE nodes_fts USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2');

    -- vector cache: re-ingesting unchanged text never re-embeds
    CREATE TABLE embeddings (
        content_hash TEXT NOT NULL,
        model        TEXT NOT NULL,
        dim          INTEGER NOT NULL,
        vector       BLOB NOT NULL,
        PRIMARY KEY (content_hash, model)
    ) WITHOUT ROWID;

    CREATE TABLE traces (
        id          TEXT PRIMARY KEY,
        created_at  REAL NOT NULL,
        query       TEXT NOT NULL,
        params      TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        hits        TEXT NOT NULL
    );
    CREATE INDEX traces_created ON traces(created_at);
    """),
]

SCHEMA_VERSION = len(MIGRATIONS)
