"""Optional LLMs for ask: Anthropic Messages API and any OpenAI-compatible server (vLLM, Ollama, llama.cpp).

Both through their official SDKs, imported only when a provider is made.  Structured steps use tool
calling with a *forced* tool (``run_cypher``, ``route_query``, as in seed 004); the schema goes into a
cached system block (Anthropic ``cache_control: ephemeral``).  Timeouts and bounded retries are the SDKs'
own (``timeout``, ``max_retries``).  A key is read from the environment or passed in, kept on the SDK
client only, and never appears in ``repr``, errors, logs or traces (a provider is described as
``"anthropic:<model>"``).

Configuration: ``--llm anthropic[:MODEL]`` / ``--llm openai[:MODEL]`` or ``NGR_LLM``; ``NGR_LLM_MODEL``,
``NGR_LLM_BASE_URL`` (else ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``), ``NGR_LLM_TIMEOUT`` (s, default 30),
``NGR_LLM_RETRIES`` (default 2); keys ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Any

from ..errors import InvalidArgument, NeuronGraphError

__all__ = ["LLM", "LLMError", "LLMOutputError", "AnthropicLLM", "OpenAILLM", "make_llm", "CYPHER_TOOL", "ROUTE_TOOL"]

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}

CYPHER_TOOL = {
    "name": "run_cypher",
    "description": "Run one read-only Cypher query (OpenCypher as FalkorDB speaks it) over the history graph.",
    "input_schema": {
        "type": "object",
        "properties": {
            "cypher": {
                "type": "string",
                "description": "MATCH / OPTIONAL MATCH / WHERE / WITH / RETURN / ORDER BY / "
                "LIMIT only. Put values the user typed in $parameters.",
            },
            "params": {"type": "object", "description": "Values for the $parameters."},
            "explanation": {"type": "string", "description": "One line: how this query answers the question."},
        },
        "required": ["cypher", "explanation"],
    },
}
ROUTE_TOOL = {
    "name": "route_query",
    "description": "Choose how to answer the question.",
    "input_schema": {
        "type": "object",
        "properties": {"mode": {"type": "string", "enum": ["graph", "vector", "hybrid"]}, "reason": {"type": "string"}},
        "required": ["mode", "reason"],
    },
}
ROUTE_SYSTEM = """You route questions about a software history (issues, pull requests, commits, files, decisions).
- graph: the question names concrete nodes or relations (which commit fixes #12, what touched file F, path
between A and B)
- vector: it asks for material by meaning (similar discussions, anything about caching)
- hybrid: it needs both"""
CYPHER_SYSTEM = """You translate questions into one read-only Cypher query over this graph.

Schema:
{schema}

Rules:
- Use only the labels, relationship types and properties above; match nodes by `id` where the question names one.
- Read only: never CREATE, MERGE, SET, DELETE, REMOVE, DROP, FOREACH, LOAD CSV or write procedures.
- Return node ids (e.g. `x.id AS id, x.title AS title`) so the answer can cite them; LIMIT 25 or less."""
SYNTH_SYSTEM = """Answer only from the given results. Do not state anything the results do not contain; if they do not
answer the question, say it was not found in the history. End with the ids of the nodes your answer rests on
as [refs: id1, id2]."""


class LLMError(NeuronGraphError):
    """A hosted model call failed (network, quota, API error), reported under the provider's name."""

    code = "llm_error"


class LLMOutputError(LLMError):
    """The model answered, but not with a well-formed tool call."""

    code = "llm_output_error"


def _check_cypher_input(inp: Any) -> dict:
    if not isinstance(inp, dict):
        raise LLMOutputError(f"run_cypher input must be an object, got {type(inp).__name__}")
    cy = inp.get("cypher")
    if not isinstance(cy, str) or not cy.strip():
        raise LLMOutputError("run_cypher input has no 'cypher' string")
    params = inp.get("params") or {}
    if not isinstance(params, dict):
        raise LLMOutputError("run_cypher 'params' must be an object")
    expl = inp.get("explanation")
    return {"cypher": cy.strip(), "params": params, "explanation": expl if isinstance(expl, str) else ""}


def _check_route_input(inp: Any) -> tuple[str, str]:
    if not isinstance(inp, dict) or inp.get("mode") not in ("graph", "vector", "hybrid"):
        raise LLMOutputError(f"route_query must give mode graph|vector|hybrid, got {inp!r:.200}")
    return inp["mode"], str(inp.get("reason") or "")


def _context(rows: list[dict], hits: list[dict]) -> str:
    small = [
        {"id": h["id"], "type": h.get("type"), "title": h.get("title"), "text": (h.get("text") or "")[:1200]}
        for h in hits
    ]
    return json.dumps({"graph_rows": rows[:50], "search_hits": small}, ensure_ascii=False, default=str)[:60_000]


class LLM:
    """A hosted model behind its official SDK: route, write Cypher, answer.  A provider names its SDK
    module and the environment variables it reads; the constructor (shared) imports the SDK, resolves
    key and base URL, and refuses clearly when either is missing."""

    provider = "none"
    sdk_module = ""  # the official SDK's import name
    key_env = ""  # the environment variable holding the API key
    base_url_env = ""  # the environment variable naming another endpoint
    missing_key = ""  # what to tell a user without a key

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
    ):
        self.model = model or DEFAULT_MODELS[self.provider]
        self.timeout = timeout
        self.max_retries = max_retries
        try:
            sdk = importlib.import_module(self.sdk_module)
        except ImportError:
            raise InvalidArgument(
                f"--llm {self.provider} needs the official SDK: pip install 'neurongraph[ask]'"
            ) from None
        base_url = base_url or os.environ.get(self.base_url_env)
        key = api_key or os.environ.get(self.key_env) or self._keyless(base_url)
        if not key:
            raise InvalidArgument(f"--llm {self.provider} needs {self.missing_key}")
        self._sdk = sdk
        self._client = self._connect(sdk, key, base_url)

    def _keyless(self, base_url: str | None) -> str | None:
        """The key to send when none is set (None: a key is required)."""
        return None

    def _connect(self, sdk, key: str, base_url: str | None):
        """The SDK's client."""
        raise NotImplementedError

    def _request(self, create, **kw):
        """One SDK call; the SDK's API errors (both SDKs name their base ``APIError``) become ``LLMError``."""
        try:
            return create(**kw)
        except self._sdk.APIError as exc:
            raise LLMError(
                f"{self.name}: {type(exc).__name__}: {getattr(exc, 'message', '') or 'request failed'}"
            ) from None

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def __repr__(self) -> str:  # never the key
        return f"<{type(self).__name__} {self.name}>"

    def route(self, question: str) -> tuple[str, str]:
        raise NotImplementedError

    def cypher(self, question: str, schema: str, failed: dict | None = None, error: str | None = None) -> dict:
        raise NotImplementedError

    def synthesize(self, question: str, rows: list[dict], hits: list[dict]) -> str:
        raise NotImplementedError


class AnthropicLLM(LLM):
    """Claude through the ``anthropic`` SDK (tool use for route and Cypher)."""

    provider = "anthropic"
    sdk_module = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    missing_key = "ANTHROPIC_API_KEY in the environment"

    def _connect(self, sdk, key: str, base_url: str | None):
        return sdk.Anthropic(api_key=key, base_url=base_url, timeout=self.timeout, max_retries=self.max_retries)

    def _create(self, **kw):
        return self._request(self._client.messages.create, model=self.model, max_tokens=1024, **kw)

    @staticmethod
    def _tool_input(resp, name: str):
        for block in getattr(resp, "content", None) or []:
            if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == name:
                return block
        raise LLMOutputError(f"the model did not call {name}")

    def route(self, question: str) -> tuple[str, str]:
        resp = self._create(
            system=ROUTE_SYSTEM,
            tools=[ROUTE_TOOL],
            tool_choice={"type": "tool", "name": "route_query"},
            messages=[{"role": "user", "content": question}],
        )
        return _check_route_input(self._tool_input(resp, "route_query").input)

    def cypher(self, question: str, schema: str, failed: dict | None = None, error: str | None = None) -> dict:
        system = [{"type": "text", "text": CYPHER_SYSTEM.format(schema=schema), "cache_control": {"type": "ephemeral"}}]
        messages: list[dict] = [{"role": "user", "content": question}]
        if failed is not None:  # the repair round: the failed call and the engine's error go back
            messages += [
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": failed.get("_id") or "toolu_repair",
                            "name": "run_cypher",
                            "input": failed.get("input", {}),
                        }
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": failed.get("_id") or "toolu_repair",
                            "is_error": True,
                            "content": f"The query failed: {error}. "
                            "Call run_cypher again with a corrected read-only query.",
                        }
                    ],
                },
            ]
        resp = self._create(
            system=system, tools=[CYPHER_TOOL], tool_choice={"type": "tool", "name": "run_cypher"}, messages=messages
        )
        block = self._tool_input(resp, "run_cypher")
        out = _check_cypher_input(block.input)
        out["_id"], out["input"] = block.id, block.input
        return out

    def synthesize(self, question: str, rows: list[dict], hits: list[dict]) -> str:
        resp = self._create(
            system=SYNTH_SYSTEM,
            messages=[{"role": "user", "content": f"Question: {question}\n\nResults:\n{_context(rows, hits)}"}],
        )
        text = "".join(getattr(b, "text", "") for b in resp.content or [] if getattr(b, "type", None) == "text")
        if not text.strip():
            raise LLMOutputError("the model returned no text")
        return text


class OpenAILLM(LLM):
    """An OpenAI-compatible chat endpoint through the ``openai`` SDK: OpenAI itself, or a local server
    (``NGR_LLM_BASE_URL``), which needs no key."""

    provider = "openai"
    sdk_module = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    missing_key = "OPENAI_API_KEY, or NGR_LLM_BASE_URL for a local server"

    def _keyless(self, base_url: str | None) -> str | None:
        return "not-needed" if base_url else None

    def _connect(self, sdk, key: str, base_url: str | None):
        return sdk.OpenAI(api_key=key, base_url=base_url, timeout=self.timeout, max_retries=self.max_retries)

    @staticmethod
    def _fn(tool: dict) -> dict:
        return {
            "type": "function",
            "function": {"name": tool["name"], "description": tool["description"], "parameters": tool["input_schema"]},
        }

    def _create(self, **kw):
        return self._request(self._client.chat.completions.create, model=self.model, **kw)

    @staticmethod
    def _call(resp, name: str):
        try:
            msg = resp.choices[0].message
        except (AttributeError, IndexError, TypeError):
            raise LLMOutputError("the server returned no choices") from None
        for tc in msg.tool_calls or []:
            if tc.function and tc.function.name == name:
                try:
                    return tc, json.loads(tc.function.arguments or "{}")
                except json.JSONDecodeError as exc:
                    raise LLMOutputError(f"{name} arguments are not valid JSON ({exc.msg})") from None
        raise LLMOutputError(f"the model did not call {name}")

    def route(self, question: str) -> tuple[str, str]:
        resp = self._create(
            messages=[{"role": "system", "content": ROUTE_SYSTEM}, {"role": "user", "content": question}],
            tools=[self._fn(ROUTE_TOOL)],
            tool_choice={"type": "function", "function": {"name": "route_query"}},
        )
        return _check_route_input(self._call(resp, "route_query")[1])

    def cypher(self, question: str, schema: str, failed: dict | None = None, error: str | None = None) -> dict:
        messages: list[dict] = [
            {"role": "system", "content": CYPHER_SYSTEM.format(schema=schema)},
            {"role": "user", "content": question},
        ]
        if failed is not None:
            cid = failed.get("_id") or "call_repair"
            messages += [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {
                                "name": "run_cypher",
                                "arguments": failed.get("raw") or json.dumps(failed.get("input", {})),
                            },
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": cid,
                    "content": f"The query failed: {error}. Call run_cypher again with a corrected read-only query.",
                },
            ]
        resp = self._create(
            messages=messages,
            tools=[self._fn(CYPHER_TOOL)],
            tool_choice={"type": "function", "function": {"name": "run_cypher"}},
        )
        tc, args = self._call(resp, "run_cypher")
        out = _check_cypher_input(args)
        out["_id"], out["input"], out["raw"] = tc.id, args, tc.function.arguments
        return out

    def synthesize(self, question: str, rows: list[dict], hits: list[dict]) -> str:
        resp = self._create(
            messages=[
                {"role": "system", "content": SYNTH_SYSTEM},
                {"role": "user", "content": f"Question: {question}\n\nResults:\n{_context(rows, hits)}"},
            ]
        )
        try:
            text = resp.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            text = ""
        if not text.strip():
            raise LLMOutputError("the model returned no text")
        return text


def make_llm(
    spec: str | None = None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    api_key: str | None = None,
) -> LLM | None:
    """``None`` / ``"none"`` → no LLM; ``"anthropic[:model]"`` / ``"openai[:model]"``; defaults from env vars."""
    spec = spec if spec is not None else os.environ.get("NGR_LLM")
    if not spec or spec == "none":
        return None
    provider, _, m = spec.partition(":")
    model = model or m or os.environ.get("NGR_LLM_MODEL") or None
    base_url = base_url or os.environ.get("NGR_LLM_BASE_URL") or None
    try:
        timeout = float(timeout if timeout is not None else os.environ.get("NGR_LLM_TIMEOUT", 30))
        retries = int(retries if retries is not None else os.environ.get("NGR_LLM_RETRIES", 2))
    except ValueError:
        raise InvalidArgument("NGR_LLM_TIMEOUT must be a number of seconds and NGR_LLM_RETRIES an integer") from None
    if not (0 < timeout <= 600 and 0 <= retries <= 5):
        raise InvalidArgument("the LLM timeout must be in (0, 600] s and retries in 0..5")
    cls = {"anthropic": AnthropicLLM, "openai": OpenAILLM}.get(provider)
    if cls is None:
        raise InvalidArgument(f"--llm {spec!r}: expected none, anthropic[:MODEL] or openai[:MODEL]")
    return cls(model, api_key=api_key, base_url=base_url, timeout=timeout, max_retries=retries)
