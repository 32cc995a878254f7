"""The HTTP API and the web page (FastAPI): ``create_app(engine, ...)``.

Routes (all JSON; every error is ``{"error": {"code", "message", "hint"?, "details"?}}`` with the
status of :data:`neurongraph.http.errors.STATUS`):

* ``POST /api/search`` — the same JSON as ``ngr search --json``; ``POST /api/search/jobs`` runs
  it in the background and ``GET /api/jobs/{job_id}`` reports its phase (the page's progress).
* ``GET /api/node?id=``, ``GET /api/neighbours?id=``, ``GET /api/traces``, ``GET /api/traces/{id}``,
  ``GET /api/stats``, ``GET /api/health``.
* ``POST /api/source-use`` (selected → validated → used), ``POST /api/outcome``,
  ``POST /api/retrieval-failure``, ``POST /api/ask`` (+ ``/api/ask/jobs``).
* ``GET /`` and ``GET /static/{name}``: the page, from files read into memory at start-up.

Safety: every ``POST`` changes the store (a search records a trace), and the GETs show every user's
query history and full node text, so when the server has a token every ``/api`` request but
``/api/health`` needs ``Authorization: Bearer <token>`` (``public_reads=True``, ``ngr serve
--public-reads``: GETs stay open, POSTs still need it).  The page and its static files need no token:
they hold no data.  Request bodies are capped (``max_body``) and parsed strictly before any route
(a repeated key is ``invalid_argument``, not "the last one wins"), hit counts are capped by the models,
and no request value ever names a file: the page's files are a fixed in-memory table.  Bound to
loopback, the server also checks the ``Host`` header (a DNS-rebinding page cannot talk to it).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import types
from collections import Counter
from collections.abc import Sequence
from contextlib import asynccontextmanager
from importlib import resources
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import strict_json
from ..errors import InvalidArgument, NeuronGraphError
from ..model import strict_dumps
from ..service.contract import trace_view
from ..service.cypher import GraphSchemaRequest
from ..store import DATABASE_ERRORS
from . import models as m
from .errors import ApiError, describe_validation, error_payload, error_response, error_responses
from .runner import EngineRunner, Job

__all__ = ["create_app", "DEFAULT_MAX_BODY", "STATIC_FILES"]

log = logging.getLogger("neurongraph.http")

DEFAULT_MAX_BODY = 256 * 1024  # bytes of one request body
MAX_NEIGHBOURS = 200
STATIC_FILES = {  # the only files the server ever reads, once, at start-up
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_BEARER = HTTPBearer(
    auto_error=False,
    description="Required for every /api request but /api/health when the server has a token "
    "(GETs exempt with `ngr serve --public-reads`).",
)
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _json(obj: Any, status: int = 200) -> Response:
    """Strict JSON (never NaN/Infinity), UTF-8, exactly the engine's dicts (no model re-serialisation)."""
    return Response(
        strict_dumps(obj, ensure_ascii=False, default=str).encode(), status_code=status, media_type="application/json"
    )


def _check_text(value: Any, where: str = "body") -> None:
    """Lone surrogates (``"\\ud800"`` is valid JSON) are not text: refused before they reach the store."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidArgument(f"{where}: not valid Unicode text (a lone surrogate at {exc.start})") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_text(k, where)
            _check_text(v, f"{where}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_text(v, f"{where}[{i}]")


def _load_static() -> dict[str, tuple[bytes, str]]:
    root = resources.files("neurongraph.http").joinpath("static")
    return {name: (root.joinpath(name).read_bytes(), media) for name, media in STATIC_FILES.items()}


# ----------------------------------------------------------------------------- engine work (engine thread)
def _do_search(eng, job: Job | None, body: m.SearchBody) -> dict:
    req = body.to_request()
    if job is not None:
        job.phase = "embedding the query"
    qvec = eng.embed_query(body.query) if isinstance(body.query, str) and body.query.strip() else None
    if job is not None:
        job.phase = "ranking and explaining"
    return req.run(eng, qvec=qvec).to_dict()


def _do_ask(eng, job: Job | None, body: m.AskBody) -> dict:
    if job is not None:
        job.phase = "routing, querying and answering"
    return body.run(eng)


async def _fresh(freshness) -> dict | None:
    """With ``ngr serve --repo`` (service/freshness.py): sync new commits first, off the event loop; the
    answer's ``freshness``."""
    return None if freshness is None else await asyncio.to_thread(freshness.before_call)


def _with_fresh(res: dict, fresh: dict | None) -> dict:
    return res if fresh is None else {**res, "freshness": fresh}


def _fresh_job(freshness, fn):
    """A background job's ``fn`` that syncs new commits first (on the job's lane, at most the wait)."""
    if freshness is None:
        return fn

    def run(eng, job: Job | None, body):
        if job is not None:
            job.phase = "syncing new commits"
        fresh = freshness.before_call()
        return _with_fresh(fn(eng, job, body), fresh)

    return run


def _do_trace(eng, trace_id: str) -> dict:
    rep = eng.learning_report(trace_id)
    named = {c["eid"]: c for r in rep["receipts"] for c in r.get("edges_changed") or [] if "eid" in c}
    changes = []
    for w in rep.get("weight_changes", []):  # ledger rows name the edge by id: add its ends from the receipts
        edge = named.get(w.get("eid"))
        changes.append({**w, **({k: edge[k] for k in ("src", "rel", "dst")} if edge else {})})
    return {**trace_view(rep), "weight_changes": changes}


def _do_traces(eng, limit: int) -> list[dict]:
    return eng.learning.recent_traces(limit)


def _do_neighbours(eng, node_id: str, rels: list[str] | None, direction: str, limit: int) -> dict:
    node = eng.resolve(node_id)  # an id or an entity alias; unknown_node otherwise
    res = eng.neighbors(node, rels or None, direction, include_superseded=True, limit=limit)
    return {"node": node, "direction": direction, "neighbours": res}


def _do_stats(eng) -> dict:
    s = dict(eng.stats())
    path = s.pop("path", None)
    if path:  # the file name only: the API does not publish server paths
        s["db"] = str(path).replace("\\", "/").rsplit("/", 1)[-1]
    return s


# ----------------------------------------------------------------------------- the app
def create_app(
    engine,
    *,
    search_engines: Sequence = (),
    token: str | None = None,
    loopback: bool = True,
    max_body: int = DEFAULT_MAX_BODY,
    max_waiting: int = 64,
    close_engine: bool = True,
    public_reads: bool = False,
    freshness=None,
) -> FastAPI:
    """The API and page over ``engine`` (owned by the app: closed at shutdown unless ``close_engine=False``).

    ``search_engines``: more engines over the same store (each with its own embedder), used only for
    searches, each on its own thread: that many more searches run at once (see runner.py).
    ``token``: when set, every ``/api`` request but ``/api/health`` needs ``Authorization: Bearer <token>``;
    ``public_reads`` exempts the GETs.  ``loopback``: the server is bound to a loopback address (then the
    Host header must name loopback too).  ``freshness`` (service/freshness.py, ``ngr serve --repo``): search,
    ask and cypher first sync new commits and answer with ``freshness``; closed with the app."""
    from .. import __version__

    if token is not None and not token:
        raise InvalidArgument("the token must not be empty")
    runner = EngineRunner(engine, search_engines, max_waiting=max_waiting)

    @asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            if freshness is not None:
                freshness.close()
            if close_engine:
                runner.close()

    app = FastAPI(
        title="Neuron Graph RAG",
        version=__version__,
        description="Explained hybrid + graph search over a store, and the learning loop "
        "(selected → validated → used, outcomes, retrieval failures). Errors: "
        '`{"error": {"code", "message", "hint"?, "details"?}}` with stable codes. '
        "When the server has a token, every /api request but /api/health needs `Authorization: Bearer <token>` "
        "(GETs are exempt when it was started with --public-reads).",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        dependencies=[Depends(_known_query_only)],
    )
    app.state.runner = runner

    def require_token(cred: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]) -> None:
        if token is None:
            return
        given = cred.credentials if cred is not None else ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise ApiError(
                "unauthorized",
                f"this server needs its token for {'writes (every POST)' if public_reads else 'every /api request'}"
                if not given
                else "the token does not match this server's",
            )

    write = [Depends(require_token)]
    read = [] if public_reads else write
    _install_guards(app, max_body=max_body, loopback=loopback)
    _install_handlers(app)

    _page_routes(app, _load_static())
    _read_routes(
        app,
        runner,
        read,
        token_required=token is not None,
        reads_need_token=token is not None and not public_reads,
        max_body=max_body,
    )
    _search_routes(app, runner, write, freshness)
    _feedback_routes(app, runner, write)
    _cypher_routes(app, runner, read, write, freshness)
    _trim_openapi(app)
    return app


def _repeatable(annotation: Any) -> bool:
    """A parameter declared as a list (``rel: list[str] | None``) may repeat; any other takes one value."""
    origin = get_origin(annotation)
    if origin in (list, tuple, set, frozenset):
        return True
    if origin in (Union, types.UnionType):
        return any(_repeatable(a) for a in get_args(annotation))
    return False


def _query_fields(dep: Any) -> dict[str, bool]:
    """The query parameter names a route's dependency tree declares, each with whether it may repeat."""
    out = {p.alias: _repeatable(getattr(p.field_info, "annotation", None)) for p in dep.query_params}
    for sub in dep.dependencies:
        out.update(_query_fields(sub))
    return out


def _known_query_only(request: Request) -> None:
    """An /api query parameter the route does not declare is an error, not ignored: ``?limt=5`` would
    otherwise answer with the default limit, and the schema says no other parameters.  So is a parameter
    given twice that takes one value (``?limit=5&limit=6``: which one counts would be a guess)."""
    if not request.url.path.startswith("/api/") or not request.query_params:
        return
    route = request.scope.get("route")
    fields = getattr(route, "ngr_query_fields", None)
    if fields is None:
        dep = getattr(route, "dependant", None)
        fields = types.MappingProxyType(_query_fields(dep) if dep is not None else {})
        if route is not None:
            route.ngr_query_fields = fields
    unknown = sorted({k for k in request.query_params if k not in fields})
    if unknown:
        known = ", ".join(sorted(fields)) or "none"
        raise ApiError("invalid_argument", f"unknown query parameter {unknown[0]!r} (this route takes: {known})")
    counts = Counter(k for k, _ in request.query_params.multi_items())
    repeated = sorted(k for k, n in counts.items() if n > 1 and not fields[k])
    if repeated:
        k = repeated[0]
        raise ApiError("invalid_argument", f"query parameter {k!r} is given {counts[k]} times; it takes one value")


# ----------------------------------------------------------------------------- routes
def _page_routes(app: FastAPI, static: dict[str, tuple[bytes, str]]) -> None:
    def page(name: str) -> Response:
        body, media = static[name]
        return Response(body, media_type=media, headers=_PAGE_HEADERS)

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        return page("index.html")

    @app.get("/static/{name}", include_in_schema=False)
    async def static_file(name: str) -> Response:
        if name not in static:  # a fixed table: no request value is ever a path
            raise ApiError("not_found", f"no page file {name!r}")
        return page(name)


def _read_routes(
    app: FastAPI, runner: EngineRunner, read: list, *, token_required: bool, reads_need_token: bool, max_body: int
) -> None:
    from .. import __version__

    errs = error_responses(400, 401, 404)

    @app.get("/api/health", response_model=m.HealthOut, tags=["meta"])
    async def health() -> Response:
        """Liveness, version, whether POSTs need the token, and the request limits."""
        return _json(
            {
                "status": "ok",
                "version": __version__,
                "token_required": token_required,
                "reads_need_token": reads_need_token,
                "limits": {**m.LIMITS, "max_body_bytes": max_body, "neighbours": MAX_NEIGHBOURS},
            }
        )

    @app.get(
        "/api/stats", response_model=m.StatsOut, tags=["meta"], dependencies=read, responses=error_responses(401, 503)
    )
    async def stats() -> Response:
        """Counts of nodes, edges, relations and traces (``ngr stats --json``, without the server's path)."""
        return _json(await runner.call(_do_stats))

    @app.get("/api/node", response_model=m.NodeOut, tags=["graph"], dependencies=read, responses=errs)
    async def node(
        id: Annotated[str, Query(min_length=1, max_length=m.LIMITS["id_chars"], description="A node id.")],
    ) -> Response:
        """One node in full: id, type, title, text, metadata, confidence."""
        return _json(await runner.call(lambda eng: eng.get_node(id)))

    @app.get("/api/neighbours", response_model=m.NeighboursOut, tags=["graph"], dependencies=read, responses=errs)
    async def neighbours(
        id: Annotated[
            str, Query(min_length=1, max_length=m.LIMITS["id_chars"], description="A node id or an entity alias.")
        ],
        rel: Annotated[
            list[Annotated[str, Query(min_length=1, max_length=m.LIMITS["filter_chars"])]] | None,
            Query(max_length=m.LIMITS["filter_items"], description="Only these relations (repeatable)."),
        ] = None,
        direction: Annotated[Literal["both", "in", "out"], Query(description="Edge direction.")] = "both",
        limit: Annotated[int, Query(ge=1, le=MAX_NEIGHBOURS, description="At most this many edges.")] = 50,
    ) -> Response:
        """The node's edges (typed, weighted) and the node at the other end."""
        return _json(await runner.call(_do_neighbours, id, rel, direction, limit))

    @app.get(
        "/api/traces",
        response_model=list[m.TraceSummary],
        tags=["traces"],
        dependencies=read,
        responses=error_responses(401),
    )
    async def traces(
        limit: Annotated[int, Query(ge=1, le=200, description="Newest first, at most this many.")] = 50,
    ) -> Response:
        """Stored searches and asks, newest first: every trace in the store, made through this server or by
        any other process (CLI, MCP, Python)."""
        return _json(await runner.call(_do_traces, limit))

    @app.get("/api/traces/{trace_id}", response_model=m.TraceOut, tags=["traces"], dependencies=read, responses=errs)
    async def trace(
        trace_id: Annotated[str, Path(min_length=1, max_length=m.LIMITS["id_chars"], description="A trace id.")],
    ) -> Response:
        """A stored search: its hits with stage, scores and paths, and every receipt (with the edge weights
        it changed), outcome and retrieval failure."""
        return _json(await runner.call(_do_trace, trace_id))

    @app.get("/api/jobs/{job_id}", response_model=m.JobOut, tags=["search"], dependencies=read, responses=errs)
    async def job(job_id: Annotated[str, Path(min_length=1, max_length=64, description="A job id.")]) -> Response:
        """A background search or ask: state, phase, queue position, elapsed time, then its result or error."""
        j = runner.jobs.get(job_id)
        if j is None:
            raise ApiError("unknown_job", f"no job {job_id[:80]!r} (jobs are kept in memory, newest 200)")
        return _json(runner.job_view(j))


def _search_routes(app: FastAPI, runner: EngineRunner, write: list, freshness=None) -> None:
    post_errors = error_responses(400, 401, 404, 413, 429, 503)

    @app.post("/api/search", response_model=m.SearchOut, tags=["search"], dependencies=write, responses=post_errors)
    async def search(body: m.SearchBody) -> Response:
        """Explained hybrid + graph search; records a trace. The response is ``ngr search --json``'s JSON."""
        _check_text(body.model_dump())
        fresh = await _fresh(freshness)
        res = await runner.call_search(_do_search, None, body)
        return _json(_with_fresh(res, fresh))

    @app.post(
        "/api/search/jobs",
        response_model=m.JobOut,
        status_code=202,
        tags=["search"],
        dependencies=write,
        responses=post_errors,
    )
    async def search_job(body: m.SearchBody) -> Response:
        """Start a search in the background (the page uses this); poll ``GET /api/jobs/{job_id}``."""
        _check_text(body.model_dump())

        job = runner.submit("search", _fresh_job(freshness, _do_search), body, search=True)
        return _json(runner.job_view(job), status=202)

    @app.post("/api/ask", response_model=m.AskOut, tags=["search"], dependencies=write, responses=post_errors)
    async def ask(body: m.AskBody) -> Response:
        """A cited answer from the history (rule-based route, read-only graph query, extractive answer)."""
        _check_text(body.model_dump())
        fresh = await _fresh(freshness)
        res = await runner.call(_do_ask, None, body)
        return _json(_with_fresh(res, fresh))

    @app.post(
        "/api/ask/jobs", response_model=m.JobOut, status_code=202, tags=["search"], dependencies=write,
        responses=post_errors,
    )  # fmt: skip
    async def ask_job(body: m.AskBody) -> Response:
        """Start an ask in the background; poll ``GET /api/jobs/{job_id}``."""
        _check_text(body.model_dump())

        return _json(runner.job_view(runner.submit("ask", _fresh_job(freshness, _do_ask), body)), status=202)


def _feedback_routes(app: FastAPI, runner: EngineRunner, write: list) -> None:
    feedback_errors = error_responses(400, 401, 404, 409, 413, 429, 503)

    @app.post(
        "/api/source-use", response_model=m.ReceiptOut, tags=["feedback"], dependencies=write,
        responses=feedback_errors,
    )  # fmt: skip
    async def source_use(body: m.SourceUseBody) -> Response:
        """Walk hits of a trace selected → validated → used (in order, atomically). The receipt lists the
        transitions and every edge weight changed (old → new); a retry with the same idempotency key
        returns the same receipt."""
        _check_text(body.model_dump())
        return _json(await runner.call(body.run))

    @app.post(
        "/api/outcome", response_model=m.OutcomeOut, tags=["feedback"], dependencies=write, responses=feedback_errors
    )
    async def outcome(body: m.OutcomeBody) -> Response:
        """A delayed verdict (confirmed, corrected, rolled_back, superseded) on sources that reached 'used'."""
        _check_text(body.model_dump())
        return _json(await runner.call(body.run))

    @app.post(
        "/api/retrieval-failure",
        response_model=m.FailureOut,
        tags=["feedback"],
        dependencies=write,
        responses=feedback_errors,
    )
    async def retrieval_failure(body: m.FailureBody) -> Response:
        """The search did not give what was needed: its own ledger, changes no weight, punishes no hit."""
        _check_text(body.model_dump())
        return _json(await runner.call(body.run))


def _cypher_routes(app: FastAPI, runner: EngineRunner, read: list, write: list, freshness=None) -> None:
    """The graph's schema and read-only Cypher for a client that writes its own queries (MCP: ``graph_schema``,
    ``cypher``)."""

    @app.get(
        "/api/graph/schema",
        response_model=m.GraphSchemaOut,
        tags=["graph"],
        dependencies=read,
        responses=error_responses(401, 429, 500, 503, 504),
    )
    async def graph_schema() -> Response:
        """Node labels with counts, relation types with direction and counts, each label's properties with a
        type and an example, and example queries that run on this store; at most ~6,000 characters."""
        return _json(await runner.call(GraphSchemaRequest().run))

    @app.post(
        "/api/cypher",
        response_model=m.CypherOut,
        tags=["graph"],
        dependencies=write,
        responses=error_responses(400, 401, 413, 429, 500, 503, 504),
    )
    async def cypher(body: m.CypherBody) -> Response:
        """One read-only Cypher query with ``params``; the rows cut to ``limit`` and ``max_chars`` (``truncated``,
        ``more``). Writes are ``read_only``; an unknown label, relation type or property is ``query_error``
        naming the closest known ones."""
        _check_text(body.model_dump())
        fresh = await _fresh(freshness)
        return _json(_with_fresh(await runner.call(body.run), fresh))


# ----------------------------------------------------------------------------- guards and handlers
def _install_guards(app: FastAPI, *, max_body: int, loopback: bool) -> None:
    """A pure ASGI layer in front of everything: Host check (loopback) and the body-size cap (the whole
    body is read, at most ``max_body`` bytes, before any route sees it)."""
    inner = app.build_middleware_stack

    def build():
        asgi = inner()

        async def guard(scope, receive, send):
            if scope["type"] != "http":
                return await asgi(scope, receive, send)
            headers = dict(scope.get("headers") or [])
            if loopback:
                host = headers.get(b"host", b"").decode("latin-1")
                name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
                if name.lower() not in _LOOPBACK_HOSTS:
                    return await error_response(
                        ApiError("invalid_host", "this server answers only to 127.0.0.1 / localhost")
                    )(scope, receive, send)
            too_big = ApiError("payload_too_large", f"the request body is over {max_body} bytes", max_bytes=max_body)
            length = headers.get(b"content-length")
            if length is not None and (not length.isdigit() or int(length) > max_body):
                return await error_response(too_big)(scope, receive, send)
            if scope["method"] in ("GET", "HEAD", "OPTIONS"):
                return await asgi(scope, receive, send)
            chunks, size = [], 0
            while True:
                msg = await receive()
                if msg["type"] == "http.disconnect":
                    return None
                chunk = msg.get("body", b"")
                size += len(chunk)
                if size > max_body:
                    return await error_response(too_big)(scope, receive, send)
                chunks.append(chunk)
                if not msg.get("more_body", False):
                    break
            body = b"".join(chunks)
            bad = _repeated_key(body, headers.get(b"content-type", b""))
            if bad is not None:
                return await error_response(bad)(scope, receive, send)
            sent = False

            async def replay():
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            return await asgi(scope, replay, send)

        return guard

    app.build_middleware_stack = build  # type: ignore[method-assign]


def _repeated_key(body: bytes, content_type: bytes) -> InvalidArgument | None:
    """The error of a JSON body that repeats a key in one object, or None; everything else (syntax, NaN,
    types) is left to the route's models, which report it with the field's name as they always have."""
    if not body or b"json" not in content_type.lower():
        return None
    try:
        strict_json.loads(body)
    except strict_json.StrictJSONError as exc:
        return InvalidArgument(f"request body: {exc}") if exc.key is not None else None
    except (ValueError, RecursionError):  # not JSON, not UTF-8: the route's parser says so
        return None
    return None


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(NeuronGraphError)
    async def _typed(request: Request, exc: NeuronGraphError) -> Response:
        headers = {"WWW-Authenticate": "Bearer"} if exc.code == "unauthorized" else None
        return error_response(exc, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        fields: tuple[str, ...] = ()
        route = request.scope.get("route")
        body_field = getattr(route, "body_field", None)
        if body_field is not None:
            model = getattr(body_field.field_info, "annotation", None)
            fields = tuple(getattr(model, "model_fields", {}) or ())
        return error_response(describe_validation(list(exc.errors()), fields))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 405:
            return error_response(
                ApiError("method_not_allowed", f"{request.method} is not allowed on {request.url.path}"),
                dict(exc.headers or {}),
            )
        if exc.status_code == 404:
            return error_response(ApiError("not_found", f"no route {request.url.path[:200]!r}"))
        err = ApiError("invalid_argument" if exc.status_code < 500 else "internal_error", str(exc.detail))
        return Response(
            strict_dumps(error_payload(err)).encode(), status_code=exc.status_code, media_type="application/json"
        )

    async def _db(request: Request, exc: Exception) -> Response:
        log.warning("database error on %s: %s", request.url.path, exc)
        return error_response(ApiError("store_error", f"database error: {exc}"))

    for cls in DATABASE_ERRORS:  # the store's driver failures (a corrupt file, disk I/O), whatever the driver
        app.add_exception_handler(cls, _db)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> Response:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return error_response(ApiError("internal_error", f"internal error ({type(exc).__name__}); see the server log"))


def _trim_openapi(app: FastAPI) -> None:
    """FastAPI documents a 422 on every route; this API answers validation errors with 400 and the
    common error body instead, so the schema says exactly that."""
    base = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = base()
        for ops in schema.get("paths", {}).values():
            for op in ops.values():
                responses = op.get("responses", {})
                if responses.pop("422", None) is not None and "400" not in responses:
                    responses["400"] = {
                        "description": "error codes: invalid_argument, invalid_json",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
                    }
        comps = schema.get("components", {}).get("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            comps.pop(name, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
