"""Atomic file writes: readers see the old file or the new one, never half of either.

Write to a temporary file in the same directory, flush and fsync it, then rename it over
the target; with ``durable=True`` the directory is fsynced too, so the rename survives a
power loss. ``sync=False`` skips every fsync: the write is still atomic for readers and
survives the writer being killed (the page cache outlives a process), only not an operating
system crash or power loss. Scenario runs, which simulate crashes by killing processes and
throw the files away afterwards, write that way unless ``--fsync`` asks otherwise.

The kubelet checkpoint has its own writer (drasim.checkpoint.store) whose every step the
crash-consistency tests interrupt.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(
    path: str | os.PathLike[str], data: bytes, *, durable: bool = False, sync: bool = True
) -> Path:
    """Atomically replace ``path`` with ``data``; creates the parent directory. Returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        try:
            view = memoryview(data)
            while view:  # plain system calls: no file object or buffer in between
                view = view[os.write(fd, view) :]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable and sync:
        fsync_directory(target.parent)
    return target


def fsync_directory(directory: Path) -> None:
    """Make renames and removals in ``directory`` durable (ignored where directories cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"))
