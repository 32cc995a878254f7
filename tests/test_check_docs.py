"""scripts/check_docs.py, the lint gate's docs check: what counts as a commit hash and as a stated line count."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_docs", ROOT / "scripts" / "check_docs.py")
assert _spec is not None and _spec.loader is not None
check_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_docs)


def test_a_free_standing_hash_is_found_and_ids_numbers_and_words_are_not():
    text = (
        "measured at 4e35704 (commit 1a2b3c4d5e6f)\n"
        "ngr show commit:5b0f3729a274; store .ngr/bench/musique-dcf341ca7fa2.db\n"
        "1000000 rows, a defaced word, https://x.org/abc1234def\n"
    )
    assert check_docs.hashes(text) == [(1, "4e35704"), (1, "1a2b3c4d5e6f")]


def test_a_stated_line_count_is_checked_against_the_file():
    files = check_docs.tracked_files()
    n = len((ROOT / "scripts" / "check_imports.py").read_text().splitlines())
    assert check_docs.line_counts(f"`scripts/check_imports.py` is {n} lines", files) == []
    assert check_docs.line_counts(f"`check_imports.py` ({n + 1} lines)", files) == []  # within 5%
    (found,) = check_docs.line_counts(f"scripts/check_imports.py has {2 * n:,} lines", files)
    assert found[0] == 1 and f"is {n} lines, not {2 * n}" in found[1]
    assert check_docs.line_counts("no_such_file.py is 12 lines", files) == []


def test_the_docs_pass():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_docs.py")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_a_pointer_to_a_design_document_outside_the_repository_is_found():
    assert check_docs.ELSEWHERE.search("the target scale (DESIGN §3)")
    assert check_docs.ELSEWHERE.search("the loop of seed 001")
    assert not check_docs.ELSEWHERE.search("designed for a seed 0.85 threshold")
