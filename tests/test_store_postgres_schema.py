"""The relation-schema suites (registry, entities, queries) run again on the PostgreSQL store (issue 15).

Their tests are imported as they are; only the ``eng`` fixture changes: an engine over a fresh PostgreSQL
database (tests/postgres_server.py) instead of a SQLite file.  The schema's validator, entity
compare-and-set, supersedes flags and neighbour queries then go through ``PostgresStore.schema_tables``.
"""

from __future__ import annotations

import inspect

import pytest

pytest.importorskip("psycopg")

from neurongraph.engine import Engine  # noqa: E402
from neurongraph.index.embedder import make_embedder  # noqa: E402
from neurongraph.store.postgres import PostgresStore  # noqa: E402
from test_schema_entities import *  # noqa: E402, F403
from test_schema_queries import *  # noqa: E402, F403
from test_schema_registry import *  # noqa: E402, F403


@pytest.fixture
def eng(pg_url):  # noqa: F811 - the imported suites' engine, on PostgreSQL
    e = Engine(PostgresStore(pg_url), make_embedder("hashing"))
    yield e
    e.close()


def _on_the_store(fn) -> bool:
    """A test that takes the engine (directly or through ``seeded`` / ``tasks``) runs here; the others build
    their own SQLite engine and already ran in their own module."""
    return bool({"eng", "seeded", "tasks"} & set(inspect.signature(fn).parameters))


for _name in [n for n, f in list(globals().items()) if n.startswith("test_") and callable(f)]:
    if not _on_the_store(globals()[_name]):
        del globals()[_name]
