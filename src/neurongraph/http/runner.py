"""The concurrency model: each engine is used by ONE dedicated thread, one call at a time.

The engine is not thread-safe: a search first ``refresh()``-es the in-memory arrays from the
store's change feed (a write to shared state) and then records a trace, and feedback edits edge
weights.  So every engine the server holds has its own single-thread executor (a *lane*);
requests wait for their lane in arrival order (FIFO) while the asyncio event loop stays free: the
page, the OpenAPI schema, job polling and health answer at once even while a long search runs.

* The primary engine's lane runs every write (source use, outcomes, failures), ``ask`` and the
  reads.  With no extra engines it also runs every search: all engine work is serialised.
* ``ngr serve --search-threads N`` adds N-1 search engines over the same store file, each with
  its own connection, in-memory indexes and lane; searches go to the least busy search lane, so
  N searches run at once.  They stay consistent with the writes the same way separate processes
  do: each search first catches up with the store's change feed, and a trace recorded by one
  engine is a committed row every other engine reads.  Each engine has its own embedder object
  too, so no model is ever called from two threads at once.

Each lane's queue is bounded (``max_waiting``): beyond it a request is refused with
``error[busy]`` (HTTP 429) instead of piling up.  Background jobs (the page's searches) report
their phase and queue position so a long search shows progress, not a frozen page.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import NeuronGraphError
from .errors import ApiError, error_payload

__all__ = ["EngineRunner", "Job", "Lane"]

log = logging.getLogger("neurongraph.http")


class Lane:
    """One engine and the one thread allowed to use it, with a FIFO ticket count for queue positions."""

    def __init__(self, engine, name: str, max_waiting: int):
        self.engine = engine
        self.name = name
        self.max_waiting = max_waiting
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"ngr-{name}")
        self._tickets = itertools.count(1)
        self.issued = 0
        self.started = 0  # FIFO: the last started ticket
        self.finished = 0
        self._lock = threading.Lock()

    def waiting(self) -> int:
        """Calls queued, not yet started."""
        return self.issued - self.started

    def load(self) -> int:
        """Calls queued or running."""
        return self.issued - self.finished

    def ticket(self) -> int:
        with self._lock:
            if self.issued - self.started >= self.max_waiting:
                raise ApiError("busy", f"{self.max_waiting} engine calls are already waiting; retry in a moment")
            self.issued = next(self._tickets)
            return self.issued

    def run(self, ticket: int, fn: Callable, args: tuple, kwargs: dict):
        with self._lock:
            self.started = max(self.started, ticket)
        try:
            return fn(self.engine, *args, **kwargs)
        finally:
            with self._lock:
                self.finished += 1

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.engine.close()


@dataclass
class Job:
    """A search or ask queued or running on an engine lane, with the phase the page shows."""

    id: str
    kind: str
    lane: Lane
    ticket: int
    created: float = field(default_factory=time.monotonic)
    state: str = "queued"
    phase: str = "waiting for the engine"
    finished: float | None = None
    result: dict | None = None
    error: dict | None = None


class EngineRunner:
    """``await runner.call(fn, ...)`` runs ``fn(engine, ...)`` on the primary engine's thread;
    ``await runner.call_search(fn, ...)`` on the least busy search engine's thread."""

    def __init__(
        self,
        engine,
        search_engines: Sequence = (),
        *,
        max_waiting: int = 64,
        max_jobs: int = 200,
    ):
        self.engine = engine
        self.primary = Lane(engine, "engine", max_waiting)
        extra = [Lane(e, f"search-{k}", max_waiting) for k, e in enumerate(search_engines, 1)]
        self.search_lanes = [self.primary, *extra]
        self.jobs: OrderedDict[str, Job] = OrderedDict()
        self.max_jobs = max_jobs

    def _search_lane(self) -> Lane:
        return min(self.search_lanes, key=lambda lane: lane.load())  # ties: the first (primary) lane

    @staticmethod
    async def _on(lane: Lane, fn: Callable[..., Any], args: tuple, kwargs: dict):
        ticket = lane.ticket()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(lane.pool, lane.run, ticket, fn, args, kwargs)

    async def call(self, fn: Callable[..., Any], *args, **kwargs):
        return await self._on(self.primary, fn, args, kwargs)

    async def call_search(self, fn: Callable[..., Any], *args, **kwargs):
        return await self._on(self._search_lane(), fn, args, kwargs)

    # ------------------------------------------------------------------ jobs
    def submit(self, kind: str, fn: Callable[..., dict], *args, search: bool = False, **kwargs) -> Job:
        """Start ``fn(engine, job, ...)`` in the background; its result or error lands on the job."""
        lane = self._search_lane() if search else self.primary
        job = Job(id="job_" + uuid.uuid4().hex[:16], kind=kind, lane=lane, ticket=lane.ticket())
        self.jobs[job.id] = job
        while len(self.jobs) > self.max_jobs:  # forget the oldest finished jobs
            old = next((j for j in self.jobs.values() if j.state in ("done", "error")), None)
            if old is None:
                break
            del self.jobs[old.id]

        def work(engine):
            job.state, job.phase = "running", "starting"
            try:
                job.result = fn(engine, job, *args, **kwargs)
                job.state, job.phase = "done", "done"
            except NeuronGraphError as exc:
                job.error = error_payload(exc)["error"]
                job.state, job.phase = "error", "failed"
            except Exception as exc:  # a bug: reported as internal_error, never a hung page
                job.error = {"code": "internal_error", "message": f"{type(exc).__name__} (see the server log)"}
                job.state, job.phase = "error", "failed"
                log.exception("job %s failed", job.id)
            finally:
                job.finished = time.monotonic()

        lane.pool.submit(lane.run, job.ticket, work, (), {})
        return job

    def job_view(self, job: Job) -> dict:
        ahead = max(job.ticket - job.lane.started - 1, 0) if job.state == "queued" else 0
        end = job.finished if job.finished is not None else time.monotonic()
        phase = f"waiting for the engine ({ahead} ahead)" if job.state == "queued" else job.phase
        return {
            "job_id": job.id,
            "kind": job.kind,
            "state": job.state,
            "phase": phase,
            "queue_position": ahead,
            "elapsed_ms": round((end - job.created) * 1000, 1),
            "result": job.result,
            "error": job.error,
        }

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Stop every lane (each finishes its running call) and close every engine; the first error wins."""
        first: BaseException | None = None
        for lane in reversed(self.search_lanes):
            try:
                lane.close()
            except BaseException as exc:  # close the others anyway
                first = first or exc
        if first is not None:
            raise first
