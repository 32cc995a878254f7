#!/usr/bin/env python3
"""The size of the MCP tool ``graph_schema``'s answer on real stores, and whether each of its example
queries runs and returns rows through ``cypher`` (docs/mcp.md, "Writing Cypher").

The answer is measured as the text the tool sends (strict JSON, UTF-8 characters).  Opening a store builds
its Cypher projection cache next to it (``STORE.db.graphdb/``): run it on copies of stores other processes
are writing.

Usage: python scripts/agent_schema_size.py STORE.db [STORE.db ...]
"""

from __future__ import annotations

import sys
import time

import neurongraph as ngr
from neurongraph.model import strict_dumps
from neurongraph.service.cypher import CypherRequest, GraphSchemaRequest


def main(paths: list[str]) -> None:
    for path in paths:
        eng = ngr.open(path, embedder="hashing")  # no search runs: the embedder is never asked
        try:
            t0 = time.perf_counter()
            schema = GraphSchemaRequest().run(eng)
            seconds = time.perf_counter() - t0
            text = strict_dumps(schema, ensure_ascii=False)
            rows = [CypherRequest(e["cypher"], e.get("params")).run(eng)["row_count"] for e in schema["examples"]]
            print(
                f"{path}: {len(text):,} characters, {len(rows)} examples ({sum(r > 0 for r in rows)} return rows), "
                f"{seconds:.2f} s; labels {schema['labels']}"
            )
        finally:
            eng.close()


if __name__ == "__main__":
    main(sys.argv[1:])
