"""Private by default (issue 42 item 3): the store, its ``-wal`` / ``-shm`` files and the snapshot were
created 0644 and ``.ngr`` 0755, so any local user could read every stored query; ``ngr serve --token X``
showed the token to every user in ``ps``.  Now files are 0600 and folders the project creates 0700 whatever
the umask, and the token comes from a file or ``NGR_TOKEN`` (``--token`` still works, with a warning)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import httpx
import pytest

from http_fixtures import build_store, ngr_command, served

pytest.importorskip("fastapi")

TOKEN = "s3cret-token-0123456789abc"

RECORDS = [
    {"kind": "node", "id": "adr:1", "type": "decision", "title": "Use Redis for the page cache", "text": "cache"},
    {"kind": "node", "id": "pr:10", "type": "pr", "title": "Add Redis page cache", "text": "Implements it."},
    {"kind": "edge", "src": "pr:10", "rel": "implements", "dst": "adr:1"},
]


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _umask0():
    os.umask(0)


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("NGR_TOKEN", None)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, preexec_fn=_umask0, **kw)


def test_store_side_files_and_folders_are_private_under_umask_000(tmp_path):
    data = tmp_path / "records.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    db = tmp_path / "work" / ".ngr" / "ngr.db"  # two folders the store creates
    r = _run(ngr_command(db, "ingest", str(data)))
    assert r.returncode == 0, r.stderr
    # a search (it stores a trace) from a second process, while a third holds the store open, so -wal
    # and -shm exist when the modes are read
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, sqlite3; c = sqlite3.connect(sys.argv[1]); "
            "c.execute('select count(*) from nodes').fetchone(); sys.stdin.read()",
            str(db),
        ],
        stdin=subprocess.PIPE,
        preexec_fn=_umask0,
    )
    try:
        r = _run(ngr_command(db, "search", "redis page cache", "--json"))
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["hits"]
        snap = _run(
            [
                sys.executable,
                "-c",
                "import sys, neurongraph as n; e = n.open(sys.argv[1], embedder='hashing'); "
                "e.save_snapshot(); e.close()",
                str(db),
            ]
        )
        assert snap.returncode == 0, snap.stderr
        files = [db, db.with_name("ngr.db-wal"), db.with_name("ngr.db-shm"), db.with_name("ngr.db.snapshot.npz")]
        for f in files:
            assert f.exists(), f
        modes = {f.name: oct(_mode(f)) for f in files}
        assert modes == {f.name: "0o600" for f in files}
        assert oct(_mode(db.parent)) == "0o700" and oct(_mode(db.parent.parent)) == "0o700"
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_a_copy_of_the_store_is_private_too(tmp_path):
    import neurongraph as ngr
    from neurongraph.store.sqlite import copy_database

    src = build_store(tmp_path / "s.db")
    old = os.umask(0)
    try:
        copy_database(src, tmp_path / "copy" / "c.db")
        eng = ngr.open(src, embedder="hashing")
        try:
            eng.store.copy_to(tmp_path / "c2.db")
        finally:
            eng.close()
    finally:
        os.umask(old)
    assert _mode(tmp_path / "copy" / "c.db") == 0o600 and _mode(tmp_path / "copy") == 0o700
    assert _mode(tmp_path / "c2.db") == 0o600


def test_an_existing_folder_keeps_its_mode(tmp_path):
    import neurongraph as ngr

    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o755)
    ngr.open(folder / "s.db", embedder="hashing").close()
    assert _mode(folder) == 0o755 and _mode(folder / "s.db") == 0o600


def _health(url: str, token: str | None) -> tuple[int, int]:
    h = httpx.get(f"{url}/api/health").json()
    assert h["token_required"] is True
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return (
        httpx.get(f"{url}/api/stats").status_code,
        httpx.get(f"{url}/api/stats", headers=headers).status_code,
    )


def test_serve_takes_the_token_from_the_environment_without_a_warning(tmp_path):
    db = build_store(tmp_path / "s.db")
    with served(db, env={"NGR_TOKEN": TOKEN}) as (url, proc):
        assert _health(url, TOKEN) == (401, 200)
        with open(f"/proc/{proc.pid}/cmdline", "rb") as fh:
            assert TOKEN.encode() not in fh.read()
        proc.terminate()
        proc.wait(timeout=15)
        assert "visible to other users" not in proc.stderr.read()


def test_serve_takes_the_token_from_a_file(tmp_path):
    db = build_store(tmp_path / "s.db")
    tf = tmp_path / "token"
    tf.write_text(TOKEN + "\n")
    tf.chmod(0o600)
    with served(db, "--token-file", str(tf)) as (url, proc):
        assert _health(url, TOKEN) == (401, 200)
        with open(f"/proc/{proc.pid}/cmdline", "rb") as fh:
            assert TOKEN.encode() not in fh.read()
        proc.terminate()
        proc.wait(timeout=15)
        assert "warning" not in proc.stderr.read()
    tf.chmod(0o644)  # readable by everyone: served, with a warning that says how to fix it
    with served(db, "--token-file", str(tf)) as (url, proc):
        assert _health(url, TOKEN) == (401, 200)
        proc.terminate()
        proc.wait(timeout=15)
        assert f"may be read by other users (mode 644); chmod 600 {tf}" in proc.stderr.read()


def test_token_on_the_command_line_still_works_but_warns_once(tmp_path):
    db = build_store(tmp_path / "s.db")
    with served(db, "--token", TOKEN) as (url, proc):
        assert _health(url, TOKEN) == (401, 200)
        proc.terminate()
        proc.wait(timeout=15)
        err = proc.stderr.read()
    assert err.count("--token is visible to other users") == 1


def test_token_options_mistakes_are_clear_errors(tmp_path):
    db = build_store(tmp_path / "s.db")
    r = _run(ngr_command(db, "serve", "--port", "0", "--token-file", str(tmp_path / "missing")))
    assert r.returncode == 2 and "error[file_not_found]" in r.stderr
    empty = tmp_path / "empty"
    empty.write_text("\n")
    r = _run(ngr_command(db, "serve", "--port", "0", "--token-file", str(empty)))
    assert r.returncode == 2 and "error[invalid_argument]" in r.stderr and "no token" in r.stderr
    tf = tmp_path / "token"
    tf.write_text(TOKEN)
    r = _run(ngr_command(db, "serve", "--port", "0", "--token-file", str(tf), "--token", TOKEN))
    assert r.returncode == 2 and "not both" in r.stderr
