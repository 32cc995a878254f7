"""A background ingest reports progress (issue 40): where stderr is not a terminal (a log file, ``nohup``),
rich draws nothing until its display stops, so `ngr ingest git` under nohup said nothing for the whole
run.  Now ``LoggedProgress`` writes plain lines there: one when a stage starts and one when it ends, and
at least every ``NGR_PROGRESS_EVERY`` seconds (10 by default) the running stage's done/total, rate and
ETA; no ANSI codes, each flushed; stdout stays pure JSON with ``--json``."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time

import pytest
from rich.console import Console

from neurongraph.cli.common import PROGRESS_EVERY_S, LoggedProgress, progress_every, stage_reporter

LINE = re.compile(r"^\[\d\d:\d\d:\d\d\] progress: (?P<label>[^:]+): (?P<done>[\d,]+)/(?P<total>[\d,]+|\?)")


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if "progress:" in ln]


def test_heartbeat_lines_on_a_console_that_is_not_a_terminal():
    buf = io.StringIO()
    con = Console(file=buf, width=100)
    assert not con.is_terminal
    with LoggedProgress(console=con, every=0.1) as prog:
        report = stage_reporter(prog, {"reading": "reading git"})
        report("reading", 0, 1000)
        for done in (100, 200, 300):
            time.sleep(0.25)  # no call for longer than `every`: the heartbeat speaks
            report("reading", done, 1000)
        during = buf.getvalue()
        report("reading", 1000, 1000)
        time.sleep(0.25)  # between stages (a diff, a commit): the last stage's line, and that work goes on
        report("writing", 0, 1)
        time.sleep(0.25)  # the writing stage is silent: the heartbeat still says where it is
    text = buf.getvalue()
    assert "\x1b" not in text
    lines = _lines(text)
    assert lines[0].endswith("progress: reading git: 0/1,000 (0%), elapsed 0:00:00, ETA ?")
    beats = [ln for ln in _lines(during) if LINE.match(ln) and LINE.match(ln)["done"] not in ("0",)]
    assert len(beats) >= 2, during  # counts while the stage runs, before it ends
    assert any("/s" in ln and "ETA 0:" in ln for ln in beats), beats  # a rate once rich has two samples
    assert any(ln.endswith(", done") and "reading git: 1,000/1,000 (100%)" in ln for ln in lines)
    assert any(ln.endswith("done; working on the next step") and "reading git: 1,000/1,000" in ln for ln in lines)
    assert sum("writing: 0/1" in ln for ln in lines) >= 2  # the start line and at least one heartbeat
    # the final display (rich's own, drawn when the progress stops) comes after every progress line
    end = text.rindex("progress:")
    assert "reading git" in text[end:].split("\n", 1)[1]


def test_no_plain_lines_on_a_terminal_or_when_disabled():
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=100)
    with LoggedProgress(console=con, every=0.05) as prog:
        assert not prog.plain
        t = prog.add_task("reading", total=10)
        time.sleep(0.15)
        prog.update(t, completed=10)
    assert "progress:" not in buf.getvalue()
    buf = io.StringIO()
    with LoggedProgress(console=Console(file=buf), disable=True, every=0.05) as prog:
        prog.add_task("reading", total=10)
        time.sleep(0.15)
    assert buf.getvalue() == ""


@pytest.mark.parametrize(
    ("value", "every"),
    [(None, PROGRESS_EVERY_S), ("0.2", 0.2), ("3", 3.0), ("0", PROGRESS_EVERY_S), ("-1", PROGRESS_EVERY_S)]
    + [("nan", PROGRESS_EVERY_S), ("soon", PROGRESS_EVERY_S), ("0.001", 0.05)],
)
def test_the_interval_comes_from_the_environment(monkeypatch, value, every):
    if value is None:
        monkeypatch.delenv("NGR_PROGRESS_EVERY", raising=False)
    else:
        monkeypatch.setenv("NGR_PROGRESS_EVERY", value)
    assert progress_every() == every
    assert PROGRESS_EVERY_S == 10.0


def _fast_import_repo(path, n: int) -> None:
    """A repository of ``n`` commits, written by one `git fast-import` (a second, not n `git commit`s)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    lines = []
    for k in range(n):
        msg = f"Change {k}: tune the widget cache\n"
        body = f"content {k}\n"
        lines += [
            "commit refs/heads/main",
            f"mark :{k + 1}",
            f"committer Dev <dev@example.org> {1_700_000_000 + 60 * k} +0000",
        ]
        lines += [f"data {len(msg)}", msg] + ([f"from :{k}"] if k else [])
        lines += [f"M 644 inline src/mod{k % 20}.c", f"data {len(body)}", body, ""]
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input="\n".join(lines).encode(), check=True)


def test_a_background_git_ingest_logs_progress_and_json_stays_clean(tmp_path):
    repo = tmp_path / "repo"
    _fast_import_repo(repo, 300)
    log = tmp_path / "ingest.log"
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(tmp_path / "s.db"), "--embedder", "hashing:64"]
    env = {**os.environ, "NGR_PROGRESS_EVERY": "0.2"}
    with open(log, "w") as err:  # stderr a file, as under nohup
        r = subprocess.run([*cmd, "ingest", "git", str(repo), "--json"], stdout=subprocess.PIPE, stderr=err, env=env)
    assert r.returncode == 0, log.read_text()
    summary = json.loads(r.stdout)  # stdout is the JSON document and nothing else
    assert summary["new_nodes"] >= 300
    text = log.read_text()
    assert "\x1b" not in text
    lines = _lines(text)
    seen = {(m["label"], m["done"], m["total"]) for m in map(LINE.match, lines) if m}
    assert ("git log (diffs)", "0", "300") in seen and ("git log (diffs)", "300", "300") in seen
    assert ("reading git", "300", "300") in seen
    assert any(label.startswith("embedding") for label, _, _ in seen)
    assert any(label.startswith("writing") for label, _, _ in seen)
    assert LINE.match(text.splitlines()[0])  # the log starts with progress, not with the end
    end = text.rindex("progress:")
    assert "reading git" in text[end:].split("\n", 1)[1]  # rich's final display comes after the lines
    # bench history writes the same lines (its ingest into a store of its own)
    with open(log, "w") as err:
        r = subprocess.run(
            [*cmd, "bench", "history", "--repo", str(repo), "--db", str(tmp_path / "b.db"), "--json"],
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
        )
    assert _lines(log.read_text()), log.read_text()
    json.loads(r.stdout)  # a result or an error, always JSON


def test_a_background_markdown_ingest_logs_progress(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for k in range(20):
        (wiki / f"p{k}.md").write_text(f"# Page {k}\n\nSome text {k}.\n")
    log = tmp_path / "md.log"
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(tmp_path / "m.db"), "--embedder", "hashing:64"]
    with open(log, "w") as err:
        r = subprocess.run(
            [*cmd, "ingest", "markdown", str(wiki)],
            stdout=subprocess.PIPE,
            stderr=err,
            env={**os.environ, "NGR_PROGRESS_EVERY": "0.2"},
        )
    assert r.returncode == 0, log.read_text()
    seen = {(m["label"], m["done"], m["total"]) for m in map(LINE.match, _lines(log.read_text())) if m}
    assert ("embedding new text", "20", "20") in seen and ("writing (one transaction)", "1", "1") in seen
    assert b"progress:" not in r.stdout  # the summary on stdout, progress on stderr
