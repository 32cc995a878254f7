"""The concurrency model: every engine call runs on ONE dedicated thread, one at a time.

The engine is not thread-safe: a search first ``refresh()``-es the in-memory arrays from the
store's change feed (a write to shared state) and then records a trace, and feedback edits edge
weights.  So the server owns one engine and one single-thread executor; requests wait for it
in arrival order (FIFO) while the asyncio event loop stays free: the page, the OpenAPI schema,
job polling and health answer at once even while a long search runs.  Reads and writes are
therefore serialised alike; what stays concurrent is everything that does not touch the engine,
and other processes: several ``ngr serve`` (or ``ngr mcp``) processes may share one SQLite file,
each with its own engine, following each other's writes through the change feed (feedback is one
``BEGIN IMMEDIATE`` transaction in the core, so concurrent writers lose nothing).

The queue is bounded (``max_waiting``): beyond it a request is refused with ``error[busy]``
(HTTP 429) instead of piling up.  Background jobs (the page's searches) report their phase and
queue position so a long search shows progress, not a frozen page.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import NeuronGraphError
from .errors import ApiError

__all__ = ["EngineRunner", "Job"]


@dataclass
class Job:
    id: str
    kind: str
    ticket: int
    created: float = field(default_factory=time.monotonic)
    state: str = "queued"
    phase: str = "waiting for the engine"
    finished: float | None = None
    result: dict | None = None
    error: dict | None = None


class EngineRunner:
    """One engine, one thread: ``await runner.call(fn, ...)`` runs ``fn(engine, ...)`` on the engine thread."""

    def __init__(self, engine, *, max_waiting: int = 64, max_jobs: int = 200, max_recent: int = 200):
        self.engine = engine
        self.max_waiting = max_waiting
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ngr-engine")
        self._tickets = itertools.count(1)
        self._started = 0  # tickets that have started (FIFO: equals the last started ticket)
        self._issued = 0
        self._lock = threading.Lock()
        self.jobs: OrderedDict[str, Job] = OrderedDict()
        self.max_jobs = max_jobs
        self.recent: deque[dict] = deque(maxlen=max_recent)  # traces made through this server, newest last

    # ------------------------------------------------------------------ calls
    def waiting(self) -> int:
        return self._issued - self._started

    def _ticket(self) -> int:
        with self._lock:
            if self._issued - self._started >= self.max_waiting:
                raise ApiError("busy", f"{self.max_waiting} engine calls are already waiting; retry in a moment")
            self._issued = next(self._tickets)
            return self._issued

    def _run(self, ticket: int, fn: Callable, args: tuple, kwargs: dict):
        with self._lock:
            self._started = max(self._started, ticket)
        return fn(self.engine, *args, **kwargs)

    async def call(self, fn: Callable[..., Any], *args, **kwargs):
        ticket = self._ticket()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._run, ticket, fn, args, kwargs)

    # ------------------------------------------------------------------ jobs
    def submit(self, kind: str, fn: Callable[..., dict], *args, **kwargs) -> Job:
        """Start ``fn(engine, job, ...)`` in the background; its result or error lands on the job."""
        ticket = self._ticket()
        job = Job(id="job_" + uuid.uuid4().hex[:16], kind=kind, ticket=ticket)
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
                from .errors import error_payload

                job.error = error_payload(exc)["error"]
                job.state, job.phase = "error", "failed"
            except Exception as exc:  # a bug: reported as internal_error, never a hung page
                job.error = {"code": "internal_error", "message": f"{type(exc).__name__} (see the server log)"}
                job.state, job.phase = "error", "failed"
                import logging

                logging.getLogger("neurongraph.http").exception("job %s failed", job.id)
            finally:
                job.finished = time.monotonic()

        self._pool.submit(self._run, ticket, work, (), {})
        return job

    def job_view(self, job: Job) -> dict:
        ahead = max(job.ticket - self._started - 1, 0) if job.state == "queued" else 0
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
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.engine.close()
