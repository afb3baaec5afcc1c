"""Atomic file writes: readers see the old file or the new one, never half of either.

Write to a temporary file in the same directory, fsync it, then rename it over
the target; with ``durable=True`` the directory is fsynced too, so the rename survives a
power loss. ``sync=False`` skips every fsync: the write is still atomic for readers and
survives the writer being killed (the page cache outlives a process), only not an operating
system crash or power loss. Scenario runs, which simulate crashes by killing processes and
throw the files away afterwards, write that way unless ``--fsync`` asks otherwise.

The kubelet checkpoint (drasim.checkpoint.store) writes through here too; the
crash-consistency tests interrupt every step of such a write.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    durable: bool = False,
    sync: bool = True,
    temp_prefix: str | None = None,
    mode: int | None = None,
) -> Path:
    """Atomically replace ``path`` with ``data``; creates the parent directory. Returns the path.

    The temporary file is ``<temp_prefix><random>`` next to the target (default prefix
    ``.<name>.``). The file is private (0600) unless ``mode`` is given: then it gets
    ``mode`` less the process umask, as ``open()`` would give a new file (``mode=0o666``:
    0644 under the usual umask 022). Files a user reads (reports, reproducers, journals)
    pass :data:`USER_FILE_MODE`.
    """
    # Plain strings, not pathlib: this runs several times per prepare/unprepare cycle.
    target = os.fspath(path)
    directory, name = os.path.split(target)
    directory = directory or os.curdir
    prefix = f".{name}." if temp_prefix is None else temp_prefix
    try:
        fd, tmp = create_temp_file(directory, prefix)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = create_temp_file(directory, prefix)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode & ~current_umask())
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
        fsync_directory(directory)
    return Path(target)


USER_FILE_MODE = 0o666
"""The ``mode`` for files written for people and tools (less the umask, as for any new file)."""


def current_umask() -> int:
    """The process umask, read without changing it (``os.umask`` sets it, racing other threads).

    Linux reports it in ``/proc/self/status``; elsewhere it is set and restored at once.
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def create_temp_file(directory: str, prefix: str) -> tuple[int, str]:
    """Create ``<directory>/<prefix><random>`` exclusively, mode 0600; return (fd, path).

    What :func:`tempfile.mkstemp` does, without its per-call overhead (parameter
    normalisation, a locked name generator), which showed in the cost of every
    checkpoint write.
    """
    for _ in range(10000):
        name = os.path.join(directory, prefix + secrets.token_hex(5))
        try:
            return os.open(name, _TEMP_FLAGS, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", directory)


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make renames and removals in ``directory`` durable (ignored where directories cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int | None = None) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


class UnsuitableFileError(OSError):
    """A file that is not a regular file, or larger than the reader accepts (``str()`` says which)."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, checked before anything is read.

    A FIFO, device, socket or directory, or a file above ``limit`` (by its size, or by what
    reading finds, for files that grow or report no size), raises :class:`UnsuitableFileError`
    with the reason; other failures raise :class:`OSError` as ``open`` does. Opening does not
    block on a FIFO without a writer.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        kind = next((name for test, name in _KINDS if test(mode)), None)
        if kind is not None or not stat.S_ISREG(mode):
            raise UnsuitableFileError(f"not a regular file: it is {kind or 'a special file'}")
        size = os.fstat(fd).st_size
        if size > limit:
            raise UnsuitableFileError(f"the file is {size} bytes, more than the limit of {limit} bytes")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnsuitableFileError(f"the file is more than the limit of {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


@contextlib.contextmanager
def exclusive_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the ``with`` block: one
    process at a time, across processes (two runs building or starting the same thing)."""
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
