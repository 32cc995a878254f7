"""Code tokens (index/code_terms.py): identifiers in order with repeats, their search-term expansion,
and the tokens of a question that look like code."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.index.code_terms import (
    STOP,
    count_identifiers,
    count_identifiers_bytes,
    expand,
    identifiers,
    is_term,
    query_identifiers,
)


def test_identifiers_keep_code_tokens_in_order_with_repeats():
    src = (
        "static int parse_args(char **argv) { if (ensure_sync(0x1f, 42)) return ensure_sync(1, 2);\n"
        '    fprintf(stderr, "Cannot find device \\"%s\\"\\nError: use --json or --no-color\\n"); }'
    )
    toks = identifiers(src)
    assert toks[:3] == ["parse_args", "argv", "ensure_sync"]
    assert toks.count("ensure_sync") == 2  # repeats kept: callers count
    assert {"Cannot", "find", "device", "Error", "--json", "--no-color", "fprintf", "stderr"} <= set(toks)
    assert "nError" not in toks and "x1f" not in toks  # escapes blanked, numbers (0x1f) dropped
    assert not {"static", "int", "char", "return", "if"} & set(toks)  # keywords
    assert all(len(t) >= 3 for t in toks)
    assert identifiers("def f(self): return None if x else True") == []
    assert identifiers("i-- x--> --count") == ["--count"]
    assert identifiers("--foo_bar --dry-run_x") == ["foo_bar", "dry", "run_x"]  # a word char after: no option


def test_troff_and_python_sources():
    assert identifiers(r"\fBneigh_vlan_suppress\fR is on") == ["neigh_vlan_suppress"]
    assert identifiers("def parseHTTPResponse(self, raw_bytes):") == ["parseHTTPResponse", "raw_bytes"]


def test_counts_agree_between_str_and_bytes_forms():
    text = 'x = frobnicate(foo_bar); frobnicate("--dry-run"); for for for while None --A0_ --foo_bar --a-b'
    raw = count_identifiers_bytes(text.encode())
    assert Counter({t.decode(): k for t, k in raw.items() if is_term(t)}) == count_identifiers(text)
    assert count_identifiers(text) == Counter(identifiers(text))
    assert raw[b"for"] == 3 and not is_term(b"for")


def test_expand_splits_snake_camel_and_options():
    assert expand("parseHTTPResponse") == ["parsehttpresponse", "parse", "http", "response"]
    assert expand("ensure_sync") == ["ensure_sync", "ensure", "sync"]
    assert expand("--long-option") == ["--long-option", "long", "option"]
    assert expand("IFLA_BRPORT_NEIGH") == ["ifla_brport_neigh", "ifla", "brport", "neigh"]
    assert expand("ipv6_addr") == ["ipv6_addr", "ipv6", "addr"]
    assert expand("a_b") == ["a_b"]  # parts shorter than 2 dropped
    assert expand("sync_sync") == ["sync_sync", "sync"]  # no repeats
    assert expand("") == []


def test_query_identifiers_find_code_in_questions():
    q = "which commit introduced `ensure_sync`, and when was --json added to parseHTTP() or std::vector?"
    assert query_identifiers(q) == ["ensure_sync", "--json", "parseHTTP", "std::vector"]
    assert query_identifiers("what removed the frobnicate() call") == ["frobnicate"]
    assert query_identifiers("why was the json provider changed in the API and PR 12?") == []
    assert query_identifiers("`foo` and `foo`") == ["foo"]


_ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
_code = st.lists(
    st.one_of(_ident, st.sampled_from([" ", "(", ")", ";", "\n", '"', "--", "->", "0x12", "\\n", "  "])), max_size=40
).map("".join)


@settings(max_examples=200, deadline=None)
@given(_ident)
def test_expand_properties(tok):
    out = expand(tok)
    assert out[0] == tok.lower() and len(out) == len(set(out))
    assert all(t == t.lower() for t in out) and all(len(t) >= 2 for t in out[1:])
    assert expand(out[0])[0] == out[0]  # idempotent on its own whole token
    low = tok.lower()
    assert expand(low) == expand(expand(low)[0])


@settings(max_examples=200, deadline=None)
@given(_code)
def test_identifiers_properties(text):
    toks = identifiers(text)
    assert all(t not in STOP and (len(t) >= 3 or t.startswith("--")) for t in toks)
    assert all(not t[0].isdigit() for t in toks)
    assert Counter(toks) == count_identifiers(text)
    raw = count_identifiers_bytes(text.encode())
    assert Counter({t.decode(): k for t, k in raw.items() if is_term(t)}) == Counter(toks)
    # every token is a token of the text again (tokenising is stable)
    assert identifiers(" ".join(toks)) == toks
