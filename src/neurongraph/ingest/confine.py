"""Reading files only inside the folder an ingest was given (issue 27).

Why: a folder is what the user chose to make searchable; a symbolic link in it (``link.md -> /etc/passwd``)
or a special file (a FIFO named ``x.md``, a link to ``/dev/zero``) must not turn something else into a
node served over MCP and HTTP.  A file is read only when its fully resolved path lies under the resolved
folder and it is a regular file; it is opened by that resolved path with ``O_NOFOLLOW`` (a link swapped in
after the check is refused by the kernel, not followed) and ``O_NONBLOCK`` (a FIFO never blocks the read).
A regular file with more than one hard link (``os.link('/etc/hostname', 'x.md')``) is refused too: a hard
link is the file itself, not a pointer, so nothing about its path says where its other names are; the
count is read with ``fstat`` on the descriptor that is then read, so the file checked is the file read.
Everything refused is skipped with a reason the sync summary names.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["Refused", "inside", "read_confined"]


class Refused(Exception):
    """A file the reader will not read; ``str(exc)`` is the reason the summary shows."""


def inside(base: Path, path: Path) -> Path:
    """``path`` fully resolved, when it lies under the resolved ``base``; else :class:`Refused`."""
    root = base.resolve()
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # a dangling link, a link loop
        raise Refused(f"cannot resolve: {getattr(exc, 'strerror', None) or exc}") from None
    if real != root and not real.is_relative_to(root):
        what = "a symbolic link" if path.is_symlink() or real != path.absolute() else "a path"
        raise Refused(f"{what} to {real}, outside the folder {root}: not read")
    return real


def read_confined(base: Path, path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path`` if it is a regular file under ``base`` of at most ``max_bytes``; else Refused."""
    real = inside(base, path)
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Refused(f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not a regular file (a device, FIFO or socket): not read")
        if st.st_nlink > 1:
            raise Refused(f"hard link: may point outside the folder ({st.st_nlink} names for one file): not read")
        if st.st_size > max_bytes:
            raise Refused(f"file is {st.st_size} bytes, larger than the {max_bytes}-byte limit")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while it was read
        raise Refused(f"file is over the {max_bytes}-byte limit")
    return data
