#!/usr/bin/env python3
"""Slow-client check of ``ngr serve`` (docs/http.md, "Slow clients"): open N connections that each send half a
request head and never finish it, then count how many the server still holds open after 1 s and after
12 s (the read deadline is 10 s, the connection cap 256).  Starts a real ``ngr serve --port 0`` over a
small store built in a temporary folder (the HTTP tests' corpus, hashing embedder) and stops it after.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/http_slow_clients.py --connections 1100
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from http_fixtures import build_store, served  # noqa: E402


def _still_open(socks: list[socket.socket]) -> int:
    n = 0
    for s in socks:
        if s.fileno() < 0:
            continue
        s.setblocking(False)
        try:
            s.recv(4096)  # an answer (503, 408) or the end of the stream: the server let go
            s.close()
        except BlockingIOError:
            n += 1
        except OSError:
            s.close()
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connections", type=int, default=1100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = build_store(Path(tmp) / "s.db")
        with served(db) as (url, _proc):
            port = int(url.rsplit(":", 1)[1])
            socks = []
            for _ in range(args.connections):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                socks.append(s)
            time.sleep(1)
            after_1s = _still_open(socks)
            time.sleep(11)
            after_12s = _still_open(socks)
            for s in socks:
                s.close()
    print(json.dumps({"connections": args.connections, "open_after_1s": after_1s, "open_after_12s": after_12s}))


if __name__ == "__main__":
    main()
