"""Property-based fuzzing of the HTTP API against its own OpenAPI schema (schemathesis, issue 16).

A real ``ngr serve`` process on loopback, with a token (so the authorised paths are the ones
explored), serves ``/openapi.json``; schemathesis generates requests for every operation from
that schema, valid and invalid, sends them over HTTP and checks every response: no 5xx, a
status the schema documents, a body that matches the documented schema, and invalid input
rejected with a 4xx.  The example budget is bounded so the file runs in well under a minute.
"""

from __future__ import annotations

import os

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="the test extra (schemathesis) is not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402

from http_fixtures import build_store, served  # noqa: E402

TOKEN = "fuzz-token-0123456789abcdef"
MAX_EXAMPLES = int(os.environ.get("NGR_FUZZ_EXAMPLES", "25"))  # per operation and generation mode


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    db = build_store(tmp_path_factory.mktemp("fuzz") / "ngr.db")
    with served(db, "--token", TOKEN) as (url, _proc):
        yield url


# invalid input may also be refused as too large: a body over the cap is answered 413 before it is read (a
# generated string of 300 KB), which schemathesis' default list of rejection statuses does not hold
_CONFIG = """
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
"""


@pytest.fixture(scope="module")
def api_schema(base_url):
    from schemathesis.config import SchemathesisConfig

    config = SchemathesisConfig.from_str(_CONFIG)
    return schemathesis.openapi.from_url(f"{base_url}/openapi.json", config=config, timeout=30)


def _operations(api_schema):
    return sorted((r.ok() for r in api_schema.get_all_operations()), key=lambda op: (op.path, op.method))


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_api_conforms_to_its_schema(api_schema, base_url, mode):
    """Every operation, ``MAX_EXAMPLES`` generated requests each: every check passes (failures of all
    operations are collected, then reported together).

    All default checks run except ``positive_data_acceptance`` ("a schema-valid request gets a 2xx"):
    the engine validates more than a JSON schema can say (``as_of`` must parse as a time, a query
    must not be blank, ``27.0`` is not the integer 27: no lenient coercion), and it answers those
    with 400 ``invalid_argument``, which ``not_a_server_error`` and the schema checks still cover.
    (schemathesis' own pytest plugin is not used: its lazy-fixture loader fails under pytest 9.)"""
    failures: dict[str, str] = {}
    for op in _operations(api_schema):
        # derandomized: the same examples every run.  A random negative example can remove the Authorization header,
        # which the call below puts back, and then "schema-violating request accepted" reports the test's own header
        # (a clean-clone run met it once); what the fuzzing checks stays the same.
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            derandomize=True,
        )
        @given(case=op.as_strategy(generation_mode=GenerationMode(mode)))
        def check(case):
            case.call_and_validate(
                base_url=base_url,
                headers={"Authorization": f"Bearer {TOKEN}"},
                excluded_checks=[positive_data_acceptance],
                timeout=30,
            )

        try:
            check()
        except Unsatisfiable:  # negative mode: nothing in this operation's schema can be violated (no parameters)
            assert mode == "negative", op.label
        except Exception as exc:  # a failed check, with the request that reproduces it
            failures[f"{op.method.upper()} {op.path}"] = str(exc)[:3000]
    assert not failures, "\n\n".join(f"{k}:\n{v}" for k, v in failures.items())


def test_the_schema_covers_the_api(api_schema):
    """The fuzzer sees every operation (a route left out of the schema would go untested)."""
    ops = {(op.method.upper(), op.path) for op in _operations(api_schema)}
    assert ops == {
        ("GET", "/api/health"),
        ("GET", "/api/stats"),
        ("GET", "/api/node"),
        ("GET", "/api/neighbours"),
        ("GET", "/api/traces"),
        ("GET", "/api/traces/{trace_id}"),
        ("GET", "/api/jobs/{job_id}"),
        ("POST", "/api/search"),
        ("POST", "/api/search/jobs"),
        ("POST", "/api/ask"),
        ("POST", "/api/ask/jobs"),
        ("POST", "/api/source-use"),
        ("POST", "/api/outcome"),
        ("POST", "/api/retrieval-failure"),
        ("GET", "/api/graph/schema"),
        ("POST", "/api/cypher"),
    }
