"""Process checks the tests share: is a pid still running (a zombie is not), and wait until it is not."""

from __future__ import annotations

import time


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def wait_dead(pid: int, s: float = 5.0) -> bool:
    end = time.monotonic() + s
    while time.monotonic() < end:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return False
