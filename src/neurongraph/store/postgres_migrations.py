"""Named, ordered schema migrations for the PostgreSQL store (the same tables as :mod:`.migrations`).

Each migration runs once, inside the migrating transaction (under the store's write lock, so two
processes opening a new database at once do not both migrate), and is recorded in ``migrations``.
Add new ones at the end; never edit an applied one.  The names follow the SQLite migrations they mirror.

Differences from SQLite, all internal to the store:
- nodes carry their full-text form (``tsv``, the ``ngr`` text search configuration over
  ``store.lexical.lexical_text`` of the body) and its token count (``dl``) for the BM25 rank;
- vectors are pgvector ``vector`` values; an HNSW cosine index covers the 384-dimensional ones
  (the default embedder; a vector column holding several dimensions can only be indexed per dimension);
- edge ``meta`` is ``jsonb`` (merged with ``||`` on upsert); node metadata stays text (kept byte for byte,
  queried as ``metadata::jsonb``);
- traces and receipts get a ``pos`` column (what SQLite's rowid gives for free).
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_core",
        """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
    INSERT INTO meta(key, value) VALUES ('seq', '0'), ('fts.docs', '0'), ('fts.tokens', '0');

    -- full text: snowball English stemming (as FTS5's porter), no stop-word removal (as FTS5)
    CREATE TEXT SEARCH DICTIONARY ngr_stem (TEMPLATE = snowball, LANGUAGE = english);
    CREATE TEXT SEARCH CONFIGURATION ngr (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION ngr ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword,
        hword_part, numword, numhword, hword_numpart WITH ngr_stem;

    CREATE TABLE nodes (
        idx          bigint PRIMARY KEY,
        id           text COLLATE "C" NOT NULL UNIQUE,
        type         text NOT NULL,
        title        text NOT NULL DEFAULT '',
        text         text NOT NULL DEFAULT '',
        metadata     text NOT NULL DEFAULT '{}',
        confidence   double precision NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
        content_hash text NOT NULL,
        created_at   double precision NOT NULL,
        updated_at   double precision NOT NULL,
        seq          bigint NOT NULL,
        event_time   double precision,
        source       text,
        tsv          tsvector NOT NULL,
        dl           integer NOT NULL
    );
    CREATE INDEX nodes_seq ON nodes(seq);
    CREATE INDEX nodes_type ON nodes(type);
    CREATE INDEX nodes_tsv ON nodes USING gin (tsv);
    CREATE INDEX nodes_hash ON nodes(content_hash);
    CREATE INDEX nodes_owner ON nodes ((metadata::jsonb ->> 'owner'));

    CREATE TABLE relations (id serial PRIMARY KEY, name text NOT NULL UNIQUE);

    CREATE TABLE edges (
        eid             bigint PRIMARY KEY,
        src             bigint NOT NULL REFERENCES nodes(idx) ON DELETE CASCADE,
        rel_id          integer NOT NULL REFERENCES relations(id),
        dst             bigint NOT NULL REFERENCES nodes(idx) ON DELETE CASCADE,
        polarity        integer NOT NULL DEFAULT 1 CHECK (polarity IN (-1, 1)),
        weight          double precision NOT NULL DEFAULT 1.0,
        plastic         double precision NOT NULL DEFAULT 0.0,
        plastic_at      double precision,
        factuality      double precision NOT NULL DEFAULT 1.0 CHECK (factuality BETWEEN 0 AND 1),
        meta            jsonb NOT NULL DEFAULT '{}',
        reinforce_count integer NOT NULL DEFAULT 0,
        created_at      double precision NOT NULL,
        updated_at      double precision NOT NULL,
        seq             bigint NOT NULL,
        dormant         integer NOT NULL DEFAULT 0,
        UNIQUE (src, rel_id, dst)
    );
    CREATE INDEX edges_dst ON edges(dst, rel_id);
    CREATE INDEX edges_seq ON edges(seq);
    CREATE INDEX edges_owner ON edges ((meta ->> 'owner'));
    CREATE INDEX edges_plastic ON edges(eid) WHERE plastic <> 0 OR dormant <> 0;

    CREATE TABLE tombstones (seq bigint NOT NULL, kind text NOT NULL, key bigint NOT NULL);
    CREATE INDEX tombstones_seq ON tombstones(seq);

    CREATE TABLE embeddings (
        content_hash text NOT NULL,
        model        text NOT NULL,
        dim          integer NOT NULL,
        vector       vector NOT NULL,
        PRIMARY KEY (content_hash, model)
    );
    CREATE INDEX embeddings_hnsw_384 ON embeddings USING hnsw ((vector::vector(384)) vector_cosine_ops)
        WHERE dim = 384;

    CREATE TABLE traces (
        pos         bigserial UNIQUE,
        id          text PRIMARY KEY,
        created_at  double precision NOT NULL,
        query       text NOT NULL,
        params      text NOT NULL,
        fingerprint text NOT NULL,
        hits        text NOT NULL
    );
    CREATE INDEX traces_created ON traces(created_at);

    CREATE TABLE pending_edges (missing text NOT NULL, owner text NOT NULL, edge text NOT NULL);
    CREATE INDEX pending_edges_missing ON pending_edges(missing);
    CREATE INDEX pending_edges_owner ON pending_edges(owner);
    """,
    ),
    (
        "0002_learning",
        """
    CREATE TABLE trace_stages (
        trace_id   text NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        node_id    text NOT NULL,
        stage      integer NOT NULL CHECK (stage BETWEEN 0 AND 3),
        updated_at double precision NOT NULL,
        PRIMARY KEY (trace_id, node_id)
    );
    CREATE INDEX trace_stages_used ON trace_stages(node_id) WHERE stage = 3;

    CREATE TABLE source_use_receipts (
        pos             bigserial UNIQUE,
        receipt_id      text PRIMARY KEY,
        trace_id        text NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        idempotency_key text UNIQUE,
        payload_hash    text NOT NULL,
        receipt         text NOT NULL,
        created_at      double precision NOT NULL
    );
    CREATE INDEX source_use_receipts_trace ON source_use_receipts(trace_id);

    CREATE TABLE weight_changes (
        id          bigserial PRIMARY KEY,
        receipt_id  text NOT NULL,
        trace_id    text NOT NULL,
        node_id     text NOT NULL,
        eid         bigint NOT NULL,
        kind        text NOT NULL,
        old_weight  double precision NOT NULL,
        new_weight  double precision NOT NULL,
        at          double precision NOT NULL,
        reversed_by bigint
    );
    CREATE INDEX weight_changes_trace ON weight_changes(trace_id, node_id);

    CREATE TABLE retrieval_failures (
        id         bigserial PRIMARY KEY,
        trace_id   text NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        reason     text NOT NULL,
        created_at double precision NOT NULL
    );
    CREATE INDEX retrieval_failures_trace ON retrieval_failures(trace_id);

    CREATE TABLE outcomes (
        id           bigserial PRIMARY KEY,
        trace_id     text NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
        node_ids     text NOT NULL,
        outcome      text NOT NULL CHECK (outcome IN ('confirmed', 'corrected', 'rolled_back', 'superseded')),
        summary      text NOT NULL,
        external_ref text,
        policy       text NOT NULL,
        created_at   double precision NOT NULL
    );
    CREATE INDEX outcomes_trace ON outcomes(trace_id);

    CREATE TABLE node_stats (
        node_idx        bigint PRIMARY KEY REFERENCES nodes(idx) ON DELETE CASCADE,
        retrieved_count integer NOT NULL DEFAULT 0,
        used_count      integer NOT NULL DEFAULT 0,
        activation      double precision NOT NULL DEFAULT 0,
        activation_at   double precision
    );
    CREATE INDEX node_stats_active ON node_stats(node_idx) WHERE activation > 0;

    INSERT INTO meta(key, value) VALUES ('learning.plastic_half_life_s', '2592000'),
        ('learning.activation_half_life_s', '604800'), ('learning.retrieval_counted_rowid', '0');
    """,
    ),
    (
        "0003_schema",
        """
    CREATE TABLE relation_types (
        rel_id         integer PRIMARY KEY REFERENCES relations(id),
        directed       integer NOT NULL DEFAULT 1 CHECK (directed IN (0, 1)),
        inverse        text UNIQUE,
        default_weight double precision NOT NULL DEFAULT 1.0 CHECK (default_weight >= 0),
        description    text NOT NULL DEFAULT ''
    );
    CREATE TABLE relation_rules (
        rel_id   integer NOT NULL REFERENCES relation_types(rel_id) ON DELETE CASCADE,
        src_type text NOT NULL,
        dst_type text NOT NULL,
        position integer NOT NULL DEFAULT 0,
        PRIMARY KEY (rel_id, src_type, dst_type)
    );
    CREATE TABLE invariants (name text PRIMARY KEY, position integer NOT NULL, spec text NOT NULL);
    CREATE TABLE entity_state (
        node_idx   bigint PRIMARY KEY REFERENCES nodes(idx) ON DELETE CASCADE,
        state      text NOT NULL DEFAULT '{}',
        revision   integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
        updated_at double precision NOT NULL
    );
    CREATE TABLE aliases (
        alias    text PRIMARY KEY,
        node_idx bigint NOT NULL REFERENCES nodes(idx) ON DELETE CASCADE
    );
    CREATE INDEX aliases_node ON aliases(node_idx);
    CREATE TABLE superseded (
        node_idx bigint PRIMARY KEY REFERENCES nodes(idx) ON DELETE CASCADE,
        by_idx   bigint NOT NULL REFERENCES nodes(idx) ON DELETE CASCADE,
        at       double precision NOT NULL
    );
    CREATE INDEX superseded_by ON superseded(by_idx);
    INSERT INTO meta(key, value) VALUES ('schema.mode', 'permissive'), ('schema.generation', '0');
    """,
    ),
]

MIGRATIONS.append(
    (
        "0004_lexeme_df",
        """
    -- document frequency of every lexeme in nodes.tsv, kept by each write: BM25's idf is then one
    -- primary-key lookup per query term instead of a count over the GIN posting list
    CREATE TABLE lexemes (lexeme text PRIMARY KEY, df bigint NOT NULL);
    INSERT INTO lexemes(lexeme, df) SELECT u.lexeme, count(*) FROM nodes, unnest(tsv) AS u GROUP BY u.lexeme;
    """,
    )
)

MIGRATIONS.append(
    (
        "0005_postings",
        """
    -- the inverted index BM25 reads: each (lexeme, node) of nodes.tsv with its term frequency and the
    -- node's length, so a query scans only the posting lists of its terms (index-only)
    CREATE TABLE postings (lexeme text NOT NULL, idx bigint NOT NULL, tf integer NOT NULL, dl integer NOT NULL);
    INSERT INTO postings(lexeme, idx, tf, dl) SELECT u.lexeme, n.idx, coalesce(array_length(u.positions, 1), 1),
        n.dl FROM nodes n, unnest(n.tsv) AS u;
    CREATE INDEX postings_lexeme ON postings(lexeme) INCLUDE (idx, tf, dl);
    CREATE INDEX postings_idx ON postings(idx);
    """,
    )
)

SCHEMA_VERSION = len(MIGRATIONS)
