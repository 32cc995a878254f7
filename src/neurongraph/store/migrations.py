"""Named, ordered schema migrations for the SQLite store.

Each migration runs once, inside a transaction, and is recorded in the
``migrations`` table (after sqlite-utils).  Add new ones at the end; never edit
an applied one.  ``SCHEMA_VERSION`` is the number of migrations.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_core",
        """
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
    """,
    ),
    (
        "0002_learning",
        """
    -- learning loop (src/neurongraph/learning): ledgers, node stats, lazy decay.
    -- A hit of a trace with no row here is at stage 0 (retrieved).
    CREATE TABLE trace_stages (
        trace_id   TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        node_id    TEXT NOT NULL,
        stage      INTEGER NOT NULL CHECK (stage BETWEEN 0 AND 3),   -- retrieved, selected, validated, used
        updated_at REAL NOT NULL,
        PRIMARY KEY (trace_id, node_id)
    ) WITHOUT ROWID;

    -- every accepted record_source_use request; the idempotency key replays its receipt
    CREATE TABLE source_use_receipts (
        receipt_id      TEXT PRIMARY KEY,
        trace_id        TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        idempotency_key TEXT UNIQUE,
        payload_hash    TEXT NOT NULL,
        receipt         TEXT NOT NULL,
        created_at      REAL NOT NULL
    );
    CREATE INDEX source_use_receipts_trace ON source_use_receipts(trace_id);

    -- every edge weight the learning loop changed (receipts, `ngr trace`, exact reversal)
    CREATE TABLE weight_changes (
        id          INTEGER PRIMARY KEY,
        receipt_id  TEXT NOT NULL,
        trace_id    TEXT NOT NULL,
        node_id     TEXT NOT NULL,          -- the used node the change credits
        eid         INTEGER NOT NULL,
        kind        TEXT NOT NULL,          -- path | co_use | confirm | reverse | dormant
        old_weight  REAL NOT NULL,
        new_weight  REAL NOT NULL,
        at          REAL NOT NULL,
        reversed_by INTEGER                 -- outcome id that reversed it
    );
    CREATE INDEX weight_changes_trace ON weight_changes(trace_id, node_id);

    CREATE TABLE retrieval_failures (
        id         INTEGER PRIMARY KEY,
        trace_id   TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        reason     TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX retrieval_failures_trace ON retrieval_failures(trace_id);

    CREATE TABLE outcomes (
        id           INTEGER PRIMARY KEY,
        trace_id     TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        node_ids     TEXT NOT NULL,         -- JSON list
        outcome      TEXT NOT NULL CHECK (outcome IN ('confirmed', 'corrected', 'rolled_back', 'superseded')),
        summary      TEXT NOT NULL,
        external_ref TEXT,
        policy       TEXT NOT NULL,         -- JSON of the OutcomePolicy applied
        created_at   REAL NOT NULL
    );
    CREATE INDEX outcomes_trace ON outcomes(trace_id);

    -- retrieval and use counted apart (seed 001); activation decays lazily from activation_at
    CREATE TABLE node_stats (
        node_idx        INTEGER PRIMARY KEY REFERENCES nodes(idx) ON DELETE CASCADE,
        retrieved_count INTEGER NOT NULL DEFAULT 0,
        used_count      INTEGER NOT NULL DEFAULT 0,
        activation      REAL NOT NULL DEFAULT 0,
        activation_at   REAL
    );
    CREATE INDEX node_stats_active ON node_stats(node_idx) WHERE activation > 0;

    ALTER TABLE edges ADD COLUMN dormant INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX edges_plastic ON edges(eid) WHERE plastic != 0 OR dormant != 0;

    INSERT OR IGNORE INTO meta(key, value) VALUES ('learning.plastic_half_life_s', '2592000');
    INSERT OR IGNORE INTO meta(key, value) VALUES ('learning.activation_half_life_s', '604800');
    INSERT OR IGNORE INTO meta(key, value) VALUES ('learning.retrieval_counted_rowid', '0');
    """,
    ),
    (
        "0003_schema",
        """
    -- relation schema, entities, aliases, revisions (src/neurongraph/schema).
    -- A registered relation type; rel_id is relations.id, the predicate id of the graph arrays.
    CREATE TABLE relation_types (
        rel_id         INTEGER PRIMARY KEY REFERENCES relations(id),
        directed       INTEGER NOT NULL DEFAULT 1 CHECK (directed IN (0, 1)),
        inverse        TEXT UNIQUE,                 -- name that reads the edge from its dst side
        default_weight REAL NOT NULL DEFAULT 1.0 CHECK (default_weight >= 0),
        description    TEXT NOT NULL DEFAULT ''
    );
    -- allowed (src_type, rel, dst_type) combinations; '*' matches any type; none listed = any
    CREATE TABLE relation_rules (
        rel_id   INTEGER NOT NULL REFERENCES relation_types(rel_id) ON DELETE CASCADE,
        src_type TEXT NOT NULL,
        dst_type TEXT NOT NULL,
        position INTEGER NOT NULL DEFAULT 0,        -- declaration order, for messages
        PRIMARY KEY (rel_id, src_type, dst_type)
    ) WITHOUT ROWID;
    -- declared invariants, checked at write time (spec = JSON, see schema/invariants.py)
    CREATE TABLE invariants (
        name     TEXT PRIMARY KEY,
        position INTEGER NOT NULL,
        spec     TEXT NOT NULL
    );
    -- mutable entity state with an optimistic-concurrency revision counter
    CREATE TABLE entity_state (
        node_idx   INTEGER PRIMARY KEY REFERENCES nodes(idx) ON DELETE CASCADE,
        state      TEXT NOT NULL DEFAULT '{}',
        revision   INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1),
        updated_at REAL NOT NULL
    );
    -- names that resolve to a node (NFKC + casefold normalised)
    CREATE TABLE aliases (
        alias    TEXT PRIMARY KEY,
        node_idx INTEGER NOT NULL REFERENCES nodes(idx) ON DELETE CASCADE
    ) WITHOUT ROWID;
    CREATE INDEX aliases_node ON aliases(node_idx);
    -- entries superseded by a newer revision (kept for history, out of normal retrieval);
    -- derived from `supersedes` edges, so deleting the newer revision un-supersedes the old one
    CREATE TABLE superseded (
        node_idx INTEGER PRIMARY KEY REFERENCES nodes(idx) ON DELETE CASCADE,
        by_idx   INTEGER NOT NULL REFERENCES nodes(idx) ON DELETE CASCADE,
        at       REAL NOT NULL
    );
    CREATE INDEX superseded_by ON superseded(by_idx);
    INSERT OR IGNORE INTO meta(key, value) VALUES ('schema.mode', 'permissive');
    INSERT OR IGNORE INTO meta(key, value) VALUES ('schema.generation', '0');
    """,
    ),
    (
        "0005_ingest_sync",
        """
    -- incremental ingest (src/neurongraph/ingest/sync.py): edges an adapter derived from a node's
    -- content name that node as meta.owner, so they can be retracted when it changes or goes
    CREATE INDEX edges_owner ON edges(json_extract(meta, '$.owner'));
    -- derived edges whose other end is not in the store yet (a #N before its PR is ingested):
    -- kept here and written when a node with the missing id arrives, whatever the ingest order
    CREATE TABLE pending_edges (
        missing TEXT NOT NULL,          -- the endpoint id that does not exist yet
        owner   TEXT NOT NULL,          -- node whose content produced the edge (retracted with it)
        edge    TEXT NOT NULL           -- the edge as JSON (Edge.to_dict)
    );
    CREATE INDEX pending_edges_missing ON pending_edges(missing);
    CREATE INDEX pending_edges_owner ON pending_edges(owner);
    """,
    ),
    (
        "0004_event_time",
        """
    -- search filters (as_of / since / until / sources, src/neurongraph/times.py): a node's event time
    -- (metadata "time": epoch seconds, or an ISO-8601 string, UTC when it has no zone) and source
    -- (metadata "source"), written by upsert_nodes; existing rows are backfilled here with the same rules
    ALTER TABLE nodes ADD COLUMN event_time REAL;
    ALTER TABLE nodes ADD COLUMN source TEXT;
    UPDATE nodes SET
        event_time = CASE json_type(metadata, '$.time')
            WHEN 'integer' THEN json_extract(metadata, '$.time')
            WHEN 'real' THEN json_extract(metadata, '$.time')
            WHEN 'text' THEN (CASE
                WHEN trim(json_extract(metadata, '$.time')) GLOB '[0-9]*'
                     AND NOT trim(json_extract(metadata, '$.time')) GLOB '*[^0-9.]*'
                THEN CAST(trim(json_extract(metadata, '$.time')) AS REAL)
                ELSE CAST(strftime('%s', trim(json_extract(metadata, '$.time'))) AS REAL)
                     + (CAST(strftime('%f', trim(json_extract(metadata, '$.time'))) AS REAL)
                        - CAST(strftime('%S', trim(json_extract(metadata, '$.time'))) AS REAL))
                END)
            END,
        source = CASE WHEN json_type(metadata, '$.source') = 'text' AND json_extract(metadata, '$.source') != ''
                      THEN json_extract(metadata, '$.source') END
        WHERE json_valid(metadata);
    """,
    ),
    (
        "0006_compact_vectors",
        """
    -- the vector cache as an ordinary (rowid) table: in a WITHOUT ROWID table a 1.5 KB vector is larger
    -- than what a b-tree cell holds, so every row spilled into its own overflow page (3x the raw float32
    -- size on disk; 1.4x now). Same columns and key; the space of the old table is reused by later writes
    -- (or given back by VACUUM).
    CREATE TABLE embeddings_rowid (
        content_hash TEXT NOT NULL,
        model        TEXT NOT NULL,
        dim          INTEGER NOT NULL,
        vector       BLOB NOT NULL,
        PRIMARY KEY (content_hash, model)
    );
    INSERT INTO embeddings_rowid(content_hash, model, dim, vector)
        SELECT content_hash, model, dim, vector FROM embeddings;
    DROP TABLE embeddings;
    ALTER TABLE embeddings_rowid RENAME TO embeddings;
    """,
    ),
]

SCHEMA_VERSION = len(MIGRATIONS)
