"""A team on one PostgreSQL (issue 30 item 3): five engine processes share one store for a fixed time.

    python benchmarks/postgres_team.py [--seconds 30] [--nodes 2000] [--embedder hashing] [--url URL]
                                       [--batch 50] [--interval 0.5] [--no-graph] [--ask-every 10]

The processes, each with its own engine on the store:

* ``ingest``: adds a batch of ``--batch`` nodes (and an edge per node) every ``--interval`` seconds; one
  node of each batch carries a word no other node has (``probe<k>``), and the batch's commit time is
  shared with the readers;
* ``mcp``: the real MCP server (``python -m neurongraph.mcp``) over stdio, driven by the MCP SDK's client;
* ``http``: the real HTTP server (``ngr serve``), driven with ``POST /api/search``;
* ``agent-1``, ``agent-2``: an engine each that searches, records source use on the top hit of every
  search (a write), and every ``--ask-every`` searches asks a question through the shared graph server.

Every reader, whenever a newer probe has been committed, searches for its word until the probe node comes
back: the **visibility lag** is the time from the writer's commit returning to the reader's search finding
it (it includes that search).  Reported per process: operations and their rate, p50/p95 latency of the
regular searches, and the lag's p50/p95/max.  Without ``--url`` a throwaway PostgreSQL 18 + pgvector
server (tests/postgres_server.py) runs for the command; with FalkorDB installed (``neurongraph[ask]``)
and without ``--no-graph`` one shared graph server (graphdb/serve.py) does too, and every engine keeps it
in step through the change feed.  Everything started is stopped at the end, also on failure.  Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the embedded server helper the tests use

from neurongraph.bench.perf import make_corpus, make_edges, make_queries  # noqa: E402
from neurongraph.engine import Engine  # noqa: E402
from neurongraph.index.embedder import make_embedder  # noqa: E402
from neurongraph.model import Node  # noqa: E402
from neurongraph.store.postgres import PostgresStore  # noqa: E402

ASK = "how many commits are there"  # what the agents ask through the shared graph server


def _probe_node(k: int) -> Node:
    return Node(f"probe:{k}", "note", f"Probe {k}", f"team visibility check probe{k} written by the ingest process")


def _pct(xs: list[float], q: float) -> float | None:
    return round(float(np.percentile(xs, q)), 1) if xs else None


class _Probes:
    """What the readers share with the ingest process: the newest committed probe and its commit time."""

    def __init__(self, ctx, size: int = 100_000):
        self.latest = ctx.Value("l", -1)
        self.commit_at = ctx.Array("d", size, lock=False)

    def published(self, k: int, t: float) -> None:
        self.commit_at[k] = t
        self.latest.value = k  # after the time: a reader that sees k reads its commit time

    def pending(self, seen: int) -> int | None:
        k = int(self.latest.value)
        return k if k > seen else None


class _Reader:
    """A reader's loop: a regular search, or the newest probe's search until it is found."""

    def __init__(self, probes: _Probes, queries: list[str]):
        self.probes, self.queries = probes, queries
        self.lat: list[float] = []
        self.lags: list[float] = []
        self.seen, self.i, self.errors = -1, 0, 0

    def next_query(self) -> tuple[str, int | None]:
        """The next query, and the probe it looks for (None for a regular search)."""
        k = self.probes.pending(self.seen)
        if k is not None:
            return f"probe{k}", k
        self.i += 1
        return self.queries[(self.i - 1) % len(self.queries)], None

    def record(self, k: int | None, ids: list[str], ms: float) -> None:
        if k is None:
            self.lat.append(ms)
        elif f"probe:{k}" in ids:
            self.lags.append((time.time() - self.probes.commit_at[k]) * 1000)
            self.seen = k

    def step(self, search) -> None:
        """One turn with ``search(query) -> hit ids`` (one call to the process under test)."""
        q, k = self.next_query()
        t = time.perf_counter()
        ids = search(q)
        self.record(k, ids, (time.perf_counter() - t) * 1000)

    def report(self, role: str, wall: float, **extra) -> dict:
        return {
            "role": role,
            "searches": len(self.lat),
            "searches_per_s": round(len(self.lat) / wall, 2),
            "search_p50_ms": _pct(self.lat, 50),
            "search_p95_ms": _pct(self.lat, 95),
            "probes_found": len(self.lags),
            "lag_p50_ms": _pct(self.lags, 50),
            "lag_p95_ms": _pct(self.lags, 95),
            "lag_max_ms": round(max(self.lags), 1) if self.lags else None,
            "errors": self.errors,
            **extra,
        }


def _run_for(seconds: float, start, step) -> float:
    start.wait(timeout=180)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step()
    return time.perf_counter() - t0


# ----------------------------------------------------------------------------- the processes
def _ingest(*args) -> None:
    """The ``ingest`` process: its loop; a failure breaks the start barrier so the others stop waiting."""
    try:
        _ingest_run(*args)
    except BaseException:
        args[7].abort()
        raise


def _ingest_run(url: str, embedder: str, seconds: float, batch: int, interval: float, first: int, probes, start, out):
    eng = Engine(PostgresStore(url), make_embedder(embedder))
    try:
        k = [0]
        written = [0]

        def step() -> None:
            t = time.perf_counter()
            n = k[0]
            nodes = [_probe_node(n)] + [
                Node(f"team:{n}:{j}", "commit", f"Team note {n}.{j}", f"note {j} of batch {n} from the team stream")
                for j in range(batch - 1)
            ]
            eng.add_nodes(nodes)
            eng.add_edges([(x.id, "mentions", f"n{(first + n * batch + j) % first}") for j, x in enumerate(nodes)])
            probes.published(n, time.time())
            k[0] += 1
            written[0] += len(nodes)
            time.sleep(max(0.0, interval - (time.perf_counter() - t)))

        wall = _run_for(seconds, start, step)
        out.put({"role": "ingest", "batches": k[0], "nodes": written[0], "nodes_per_s": round(written[0] / wall, 1)})
    finally:
        eng.close()


def _agent(*args) -> None:
    """The ``agent`` process: its loop; a failure breaks the start barrier so the others stop waiting."""
    try:
        _agent_run(*args)
    except BaseException:
        args[8].abort()
        raise


def _agent_run(role, url, embedder, graph, seconds, ask_every, queries, probes, start, out):
    eng = Engine(PostgresStore(url), make_embedder(embedder), graph_url=graph[0], graph_write_url=graph[1])
    reader = _Reader(probes, queries)
    feedback, ask_lat, ask_errors, asked_at, answer = [0], [], [0], [0], [None]

    last: list = [None]

    def search(q: str) -> list[str]:
        last[0] = res = eng.search(q, limit=5)
        return [h.id for h in res.hits]

    def step() -> None:
        reader.step(search)
        res = last[0]
        if res.hits and not res.query.startswith("probe"):  # feedback on the top hit: a write, not timed
            eng.record_source_use(res.trace_id, [{"node_id": res.hits[0].id, "stage": "selected"}])
            feedback[0] += 1
        if graph[0] and ask_every and reader.i - asked_at[0] >= ask_every:
            asked_at[0] = reader.i
            t = time.perf_counter()
            try:
                answer[0] = eng.ask(ASK).get("answer")
            except Exception:  # counted, the loop goes on: the benchmark reports what failed
                ask_errors[0] += 1
            ask_lat.append((time.perf_counter() - t) * 1000)

    try:
        search(queries[0])  # warm-up (first search builds the lexical side)
        wall = _run_for(seconds, start, step)
        out.put(
            reader.report(
                role,
                wall,
                feedback=feedback[0],
                asks=len(ask_lat),
                ask_p50_ms=_pct(ask_lat, 50),
                ask_p95_ms=_pct(ask_lat, 95),
                ask_errors=ask_errors[0],
                last_answer=answer[0],
            )
        )
    finally:
        eng.close()


def _http(*args) -> None:
    """The ``http`` process: its loop; a failure breaks the start barrier so the others stop waiting."""
    try:
        _http_run(*args)
    except BaseException:
        args[6].abort()
        raise


def _http_run(url, embedder, graph, seconds, queries, probes, start, out):
    env = _server_env(graph)
    cmd = [str(Path(sys.executable).parent / "ngr"), "--db", url, "--embedder", embedder, "serve", "--port", "0"]
    proc = subprocess.Popen([*cmd, "--json"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        base = json.loads(proc.stdout.readline())["url"].rstrip("/")
        reader = _Reader(probes, queries)

        def search(q: str) -> list[str]:
            req = urllib.request.Request(
                f"{base}/api/search",
                data=json.dumps({"query": q, "limit": 5}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=60) as r:
                return [h["id"] for h in json.loads(r.read())["hits"]]

        search(queries[0])
        wall = _run_for(seconds, start, lambda: reader.step(search))
        out.put(reader.report("http", wall))
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _mcp(*args) -> None:
    """The ``mcp`` process: its loop; a failure breaks the start barrier so the others stop waiting."""
    try:
        _mcp_run(*args)
    except BaseException:
        args[6].abort()
        raise


def _mcp_run(url, embedder, graph, seconds, queries, probes, start, out):
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "neurongraph.mcp", "--db", url, "--embedder", embedder],
        env=_server_env(graph),
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as c:
            reader = _Reader(probes, queries)

            async def search(q: str) -> list[str]:
                r = await c.call_tool("search", {"query": q, "limit": 5})
                return [h["id"] for h in r.structured_content["hits"]]

            await search(queries[0])
            await anyio.to_thread.run_sync(lambda: start.wait(timeout=180))
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                q, k = reader.next_query()
                t = time.perf_counter()
                ids = await search(q)
                reader.record(k, ids, (time.perf_counter() - t) * 1000)
            out.put(reader.report("mcp", time.perf_counter() - t0))

    anyio.run(main)


def _server_env(graph: tuple[str | None, str | None]) -> dict[str, str]:
    env = dict(os.environ)
    if graph[0]:
        env["NGR_GRAPH_URL"], env["NGR_GRAPH_WRITE_URL"] = graph[0], graph[1] or ""
    return env


# ----------------------------------------------------------------------------- the run
def _seed(url: str, embedder: str, nodes: int) -> None:
    eng = Engine(PostgresStore(url), make_embedder(embedder))
    try:
        corpus = make_corpus(nodes)
        eng.add_nodes([Node(f"n{i}", n.type, n.title, n.text) for i, n in enumerate(corpus)])
        ids = {n.id: f"n{i}" for i, n in enumerate(corpus)}
        eng.add_edges([(ids[s], r, ids[d]) for s, r, d in make_edges(nodes, 2.0)])
    finally:
        eng.close()


def run(a: argparse.Namespace) -> dict:
    from postgres_server import PgServer

    server = graph_server = None
    procs: list = []
    try:
        if a.url:
            url = a.url
        else:
            server = PgServer()
            server.start()
            url = server.create_database()
        graph: tuple[str | None, str | None] = (None, None)
        if not a.no_graph:
            try:
                from neurongraph.graphdb.serve import start_graph_server

                graph_server = start_graph_server()
                graph = (graph_server.url("reader"), graph_server.url("writer"))
            except Exception as exc:  # FalkorDB not installed: the run goes on without the graph server
                print(f"no shared graph server ({exc}); agents do not ask", file=sys.stderr)
        t = time.perf_counter()
        _seed(url, a.embedder, a.nodes)
        seed_s = time.perf_counter() - t
        queries = make_queries(200)
        ctx = mp.get_context("spawn")
        probes = _Probes(ctx)
        start = ctx.Barrier(5)
        out = ctx.Queue()
        common = (a.seconds,)
        procs = [
            ctx.Process(
                target=_ingest,
                args=(url, a.embedder, *common, a.batch, a.interval, a.nodes, probes, start, out),
                name="ingest",
            ),
            ctx.Process(target=_mcp, args=(url, a.embedder, graph, *common, queries, probes, start, out), name="mcp"),
            ctx.Process(target=_http, args=(url, a.embedder, graph, *common, queries, probes, start, out), name="http"),
        ] + [
            ctx.Process(
                target=_agent,
                args=(role, url, a.embedder, graph, *common, a.ask_every, queries[i::2], probes, start, out),
                name=role,
            )
            for i, role in enumerate(("agent-1", "agent-2"))
        ]
        load0 = round(os.getloadavg()[0], 2)
        for p in procs:
            p.start()
        got = {}
        deadline = time.monotonic() + a.seconds + 600
        while len(got) < len(procs) and time.monotonic() < deadline:
            try:
                r = out.get(timeout=5)
                got[r["role"]] = r
            except Exception:
                if all(not p.is_alive() for p in procs):
                    break
        for p in procs:
            p.join(30)
        missing = [p.name for p in procs if p.name not in got]
        return {
            "seconds": a.seconds,
            "seed_nodes": a.nodes,
            "seed_s": round(seed_s, 1),
            "embedder": a.embedder,
            "graph_server": bool(graph[0]),
            "load_avg_1m_start": load0,
            "load_avg_1m_end": round(os.getloadavg()[0], 2),
            "processes": [got[p.name] for p in procs if p.name in got],
            "failed": missing,
        }
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(10)
        if graph_server is not None:
            graph_server.stop()
        if server is not None:
            server.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="an empty PostgreSQL database (default: a throwaway embedded server)")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--nodes", type=int, default=2000, help="nodes in the store before the processes start")
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--batch", type=int, default=50, help="nodes per ingest batch")
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between ingest batches")
    ap.add_argument("--ask-every", type=int, default=10, help="an agent asks once per this many searches (0: never)")
    ap.add_argument("--no-graph", action="store_true", help="no shared graph server (agents do not ask)")
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    res = run(a)
    print(json.dumps(res, indent=1))
    return 1 if res["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
