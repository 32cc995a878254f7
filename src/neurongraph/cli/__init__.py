"""The ``ngr`` command line (main.py mounts the commands; one module per command).

A one-shot read (``ngr search``, ``ask``, ``show``, ``neighbors``, ``trace``) runs numpy's OpenBLAS on one
thread, set here before numpy is loaded: at load OpenBLAS starts a thread per core, and each spins for
a while before it sleeps, 0.04-0.08 s of CPU in a process that spends about 0.4 s; those commands' matrix
products run on one BLAS thread anyway (index/vectors.py, below 50k rows).  Nothing changes when numpy is
already loaded (tests, a library caller), when the user set a BLAS thread count, or for the other
commands (ingest's larger products keep their threads).
"""

from __future__ import annotations

import os
import sys

__all__: list[str] = []

ONE_SHOT_READS = frozenset({"search", "ask", "show", "neighbors", "trace"})
_ROOT_VALUE_OPTIONS = ("--db", "--embedder")  # the root options that take a value (main.py's _root)
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def _command(argv: list[str]) -> str | None:
    """The command word of an ``ngr`` command line (after the root options), or None."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _ROOT_VALUE_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


if "numpy" not in sys.modules and not any(v in os.environ for v in _THREAD_VARS):
    if _command(sys.argv[1:]) in ONE_SHOT_READS:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
