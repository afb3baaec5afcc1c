"""The ``dra_manager_state`` file: load, verify and atomically replace it.

Mirrors the kubelet's checkpointer (pkg/kubelet/cm/dra/state/checkpointer.go) on top
of its file store (pkg/kubelet/util/store/filestore.go): every write replaces the
whole file through a temporary file named ``.<random>`` in the same directory,
written, fsynced and renamed over the target (mode 0600, as Go's ``os.CreateTemp``).
drasim also fsyncs the directory afterwards so that the rename itself is durable.
With ``fsync=False`` both fsyncs are skipped: the file's content and the temp-file-then-rename
sequence are unchanged, so readers and a killed writer still see the old or the new file;
only an operating-system crash or power loss could lose the write. Scenario runs use that
(see ``drasim run --fsync``).

A write hands the encoded pieces to one ``os.writev`` (``os.pwritev`` when recycling; no
joined copy of the file in Python). Without fsync the store also recycles the replaced
file: before the rename it keeps the current file under a second name,
``.dra_manager_state.spare-<random>``, and the next write overwrites that inode
(``ftruncate`` to the new size when it was longer) as its temporary file instead of
creating a new one. On tmpfs a new file costs a page allocation per 4 KiB and the
replaced one a free, three to four times the copy itself, and the kubelet rewrites its
whole file three times per pod. Where the file system supports it (tmpfs, ext4, xfs, btrfs
on Linux), the rename is a ``renameat2(RENAME_EXCHANGE)`` of the spare and the checkpoint
(through :mod:`ctypes`): readers see the old or the new file as with a rename, and the
replaced file keeps the spare's name, so no second name needs to be linked first; where
it is refused, the store links and renames. The store keeps a descriptor open on the file it wrote
last and on the spare, so a write needs no ``open``/``close``: it checks the spare by
``stat`` of its name, which must still lead to the kept descriptor's inode (device and
inode number) and have no other name (``st_nlink == 1``), so two stores on one file
never write into each other's current file, and nothing is written into a file whose
name moved away. A spare the store did not write itself (the file it found at start) is
opened by name and checked the same way. :meth:`FileCheckpointStore.close` (called when a
scenario's kubelet stops) closes the descriptors and removes the spare; a store dropped
without it closes them when it is garbage-collected. Readers that go through a
:class:`FileCheckpointStore` (``drasim checkpoint``, scenario checks) take the same
per-file lock as writers of this process; a reader in another process that keeps the
file open across two further writes could see it change, which a fresh temporary file
rules out (``fsync=True``, as a real node).

Only :mod:`pathlib` and :mod:`os` touch the disk (and ``renameat2`` where ``os`` is the real
module), so the store works under pyfakefs.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import sys
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from drasim.checkpoint import codec
from drasim.checkpoint.codec import CheckpointFormat, DecodedCheckpoint
from drasim.checkpoint.incremental import IncrementalEncoder
from drasim.errors import CheckpointError, CorruptCheckpointError
from drasim.fsutil import create_temp_file, fsync_directory, read_regular_file
from drasim.interfaces import NullRecorder, Recorder, ready_recording
from drasim.state import ClaimInfoState

__all__ = ["DRA_MANAGER_STATE_FILE", "FileCheckpointStore"]

#: The checkpoint's file name in the kubelet root directory (``draManagerStateFileName``).
DRA_MANAGER_STATE_FILE = "dra_manager_state"

#: Up to this many entries a ``checkpoint`` journal event carries the written entries; a
#: bigger write records only their number. A journal keeps every event of a run, and the
#: kubelet rewrites the whole file on every change: with N claims a run would otherwise
#: keep O(N^2) entry copies (about 2 GB for 1000 pods).
JOURNAL_ENTRIES_LIMIT = 64
MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024
"""The largest checkpoint file drasim reads (checked before reading): a kubelet's holds a few
hundred bytes per prepared claim, so this is far above any node's, and far below what would
exhaust memory."""

#: Without fsync, a file of at least this many bytes is written from the first piece the
#: spare does not already hold; a smaller one is written whole (one ``pwritev`` either way),
#: which spares the ``fstat`` that the reuse check needs after every write.
REUSE_MIN_SIZE = 64 * 1024

_LEGACY_ADVICE = (
    "legacy 1.26-1.30 checkpoint format ({variant} layout): a kubelet 1.31 or later cannot load it "
    "and refuses to start; drain the node and remove the file"
)


class FileCheckpointStore:
    """A :class:`~drasim.interfaces.CheckpointStore` backed by one file at ``path``.

    ``write_share_id`` selects whether devices are written with the 1.35+ ``ShareID``
    key (the default, as today's kubelet) or without it (1.31-1.34). Each write is
    reported to ``recorder`` as a ``checkpoint`` event (with the written entries, or their
    number beyond :data:`JOURNAL_ENTRIES_LIMIT`). ``fsync`` (default on, as the
    kubelet) makes each write durable against power loss. ``record_bytes`` adds the bytes
    written to each event (``drasim diff`` compares every write; off by default, as a run
    would keep every version of the file).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        recorder: Recorder | None = None,
        write_share_id: bool = True,
        fsync: bool = True,
        record_bytes: bool = False,
    ) -> None:
        # Without fsync: the replaced file, kept under a second name for the next write, and the
        # file this store wrote last. Each with the descriptor the store keeps open on it (-1:
        # none), its identity right after the store wrote it and the pieces it holds.
        self._spare: str | None = None
        self._spare_held: _Held | None = None
        self._current: _Held | None = None
        # Whether the rename over the checkpoint swaps the two names (renameat2 with
        # RENAME_EXCHANGE), keeping the replaced file under the spare's name; off for good
        # once the file system refuses it (then a second name is linked first).
        self._exchanging = _RENAMEAT2 is not None
        self.path = Path(path)
        self.write_share_id = write_share_id
        self.fsync = fsync
        self.record_bytes = record_bytes
        self._recorder: Recorder = recorder if recorder is not None else NullRecorder()
        self._record_ready = ready_recording(self._recorder)
        # What store_changes() last wrote for its caller: the encoded entries and the
        # caller's token. Another caller, a plain store() or a failed update starts over.
        self._memo: IncrementalEncoder | None = None
        self._memo_owner: object | None = None

    @property
    def path(self) -> Path:
        """The checkpoint file."""
        return self._path

    @path.setter
    def path(self, value: str | os.PathLike[str]) -> None:
        self._path = Path(value)
        self._path_text = os.fspath(self._path)  # for every write, without pathlib's per-call cost
        self._dir_text = os.path.dirname(self._path_text) or os.curdir
        self._lock = _file_lock(self._path_text)
        self._draw_spare_names()
        self._drop_spare()

    def close(self) -> None:
        """Give up the recycled files: close the descriptors kept on them, remove the spare.

        The store stays usable: its next write starts with a new temporary file. A store that
        is dropped without ``close()`` closes its descriptors when it is garbage-collected
        (the spare file then stays, as a killed kubelet's would).
        """
        with self._lock:
            self._drop_spare()

    def __del__(self) -> None:
        for held in (getattr(self, "_spare_held", None), getattr(self, "_current", None)):
            if held is not None and held.fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(held.fd)

    def _draw_spare_names(self) -> None:
        """Two random names for spares, used in turn: the spare being written still holds one
        of them when the current file gets the other (``_link_current``). A spare given up
        (another name appeared on it, or it vanished) takes its names with it."""
        stem = f"{self._dir_text}/.{os.path.basename(self._path_text)}.spare-"
        self._spare_names = (stem + secrets.token_hex(5), stem + secrets.token_hex(5))

    def load(self, *, verify: bool = True) -> DecodedCheckpoint:
        """Read and decode the file (either format) for inspection.

        Raises :class:`CheckpointError` when it cannot be read (including a missing
        file) and :class:`CorruptCheckpointError`, naming the file, when it is bad.
        """
        with self._lock:
            try:
                blob = self._read()
            except FileNotFoundError:
                raise CheckpointError(f"{self.path}: no such file") from None
            return self._decode(blob, verify=verify)

    def get_or_create(self) -> list[ClaimInfoState]:
        """The checkpointed claims; a missing file is created with a ``null`` list (``GetOrCreate``).

        A legacy-format or damaged file raises :class:`CorruptCheckpointError`: the
        kubelet fails to start on it.
        """
        with self._lock:
            try:
                blob = self._read()
            except FileNotFoundError:
                self._write(None)
                return []
            decoded = self._decode(blob, verify=True)
            if decoded.format is CheckpointFormat.LEGACY:
                raise CorruptCheckpointError(
                    f"{self.path}: " + _LEGACY_ADVICE.format(variant=decoded.variant)
                )
            return decoded.entries

    def store(self, entries: Sequence[ClaimInfoState]) -> None:
        """Atomically replace the file with ``entries`` (``syncToCheckpoint``)."""
        with self._lock:
            self._write(list(entries))

    def store_changes(
        self,
        owner: object,
        changes: Mapping[str, ClaimInfoState | None],
        entries: Callable[[], Sequence[ClaimInfoState]],
    ) -> None:
        """Atomically replace the file, re-encoding only the entries that changed.

        ``owner`` is a token of the caller (the claim-info cache); ``changes`` maps the
        ``namespace/name`` key of every entry added, changed or removed (``None``) since the
        caller's previous call; ``entries`` returns all of the caller's entries (keys
        unique). The file gets exactly the bytes :meth:`store` would write for
        ``entries()``: the first call of an owner, and any call after another owner's
        call, a :meth:`store` or a failed encoding, encodes ``entries()`` in full; later
        calls re-encode the changed entries only and copy the rest.
        """
        with self._lock:
            memo = self._memo
            try:
                if memo is None or self._memo_owner is not owner or memo.share_id != self.write_share_id:
                    self._memo = self._memo_owner = None
                    memo = IncrementalEncoder(share_id=self.write_share_id)
                    memo.update((state.key, state) for state in entries())
                else:
                    memo.update(changes.items())
            except BaseException:
                self._memo = self._memo_owner = None
                raise
            self._memo, self._memo_owner = memo, owner
            pieces = memo.encode_pieces()
            # The memo's entry dicts are never changed once built: the journal keeps them as they are.
            shown = memo.items() if len(memo) <= JOURNAL_ENTRIES_LIMIT else len(memo)
            self._write_pieces(pieces, shown)

    def _read(self) -> bytes:
        try:
            return read_regular_file(self.path, MAX_CHECKPOINT_BYTES)
        except FileNotFoundError:
            raise
        except OSError as err:
            raise CheckpointError(f"{self.path}: cannot read checkpoint: {err.strerror or err}") from None

    def _decode(self, blob: bytes, *, verify: bool) -> DecodedCheckpoint:
        try:
            return codec.decode(blob, verify=verify)
        except CorruptCheckpointError as err:
            raise CorruptCheckpointError(f"{self.path}: {err}") from None

    def _write(self, entries: list[ClaimInfoState] | None) -> None:
        self._memo = self._memo_owner = None  # store_changes() starts over after a full write
        # The entries' JSON form is built once: for the file and for the journal event.
        items = codec.entries_to_json(entries, share_id=self.write_share_id)
        blob = codec.envelope(codec.data_from_items(items))
        listed = items or []  # fresh dicts, kept by nobody else
        self._write_pieces([blob], listed if len(listed) <= JOURNAL_ENTRIES_LIMIT else len(listed))

    def _write_pieces(self, pieces: list[bytes], shown: list[dict[str, Any]] | int) -> None:
        """Replace the file with ``pieces`` joined; journal the entries ``shown`` (or their number)."""
        size = sum(map(len, pieces))
        try:
            if self.fsync:
                self._replace_durably(pieces)
            elif not self._swap_kept(pieces, size):
                self._replace_recycling(pieces, size)
        except OSError as err:
            raise CheckpointError(f"{self.path}: cannot write checkpoint: {err.strerror or err}") from None
        event: dict[str, Any] = {"path": self._path_text, "entries": shown, "size": size}
        if self.record_bytes:
            event["bytes"] = b"".join(pieces).decode("utf-8", errors="replace")
        self._record_ready("checkpoint", event)

    def _replace_durably(self, pieces: list[bytes]) -> None:
        """A new ``.<random>`` temp file: write, fsync, rename over the target, fsync the directory."""
        _release(self._current)
        self._current = None
        fd, tmp = _create_temp(self._dir_text, ".")
        try:
            try:
                _write_all(fd, pieces)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self._path_text)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        fsync_directory(self._dir_text)

    def _replace_recycling(self, pieces: list[bytes], size: int) -> None:
        """Write into the spare (or a new temp file), keep the current file as the next spare, rename.

        The spare holds what this store wrote two writes ago; in a file of at least
        :data:`REUSE_MIN_SIZE` bytes the leading pieces it already holds at the same offsets
        (the very same ``bytes`` objects: unchanged blocks of entries) are not written
        again. The descriptors of both files stay open between writes, so a write makes
        three system calls: ``stat`` of the spare's name, ``pwritev`` and the exchange
        (``link`` and ``rename`` where the file system has no exchange); a file that shrank
        is cut with ``ftruncate``, and a big one's identity after the write (size and
        modification time, which the next reuse of its pieces compares) is taken with ``fstat``.
        """
        fd, tmp, held, info = self._take_spare()
        if fd < 0:
            fd, tmp = self._new_spare()
        small = size < REUSE_MIN_SIZE  # written whole; its pieces are never reused
        ident = _which_file(info) if small and info is not None else _NO_IDENTITY  # else taken after
        self._fill(_Held(fd, ident, pieces), tmp, size, info, None if small else held)

    def _swap_kept(self, pieces: list[bytes], size: int) -> bool:
        """The usual write, straight through: a file under :data:`REUSE_MIN_SIZE` written whole
        into the kept spare, whose name is then exchanged with the checkpoint's.

        Returns ``False``, having done nothing, when the write is not the usual one (no kept
        spare or its name moved, no exchange here, pyfakefs, ...): :meth:`_replace_recycling`
        then does it. The checks and the outcome are that method's.
        """
        kept, name = self._spare_held, self._spare
        if kept is None or name is None or size >= REUSE_MIN_SIZE or not self._exchanging:
            return False
        info = _kept_spare(name, kept)
        if info is None:
            return False
        self._fill(_Held(kept.fd, _which_file(info), pieces), name, size, info, None)
        return True

    def _fill(
        self, written: _Held, tmp: str, size: int, info: os.stat_result | None, held: list[bytes] | None
    ) -> None:
        """Write ``written``'s pieces into its file under the name ``tmp`` and put it in place of
        the checkpoint; the replaced file becomes the spare (:meth:`_keep`).

        ``written`` owns the descriptor from here on (the kept spare, if that is the file, is
        forgotten first). The pieces go from the first one ``held`` does not already hold (all of
        them when ``None``); a file longer than ``size`` before (``info``: its ``stat`` then) is cut.
        Without an identity yet (:data:`_NO_IDENTITY`), the file's is taken after the write.
        """
        spare: str | None = None
        try:
            self._spare = self._spare_held = None  # inside: an interrupt here still cleans up
            fd, pieces = written.fd, written.pieces
            if held is None:
                _write_at(fd, pieces, 0)
            else:
                skip, offset = _common_prefix(pieces, held)
                _write_at(fd, pieces[skip:] if skip else pieces, offset)
            if info is not None and info.st_size > size:  # a longer spare: cut its tail
                os.ftruncate(fd, size)
            if written.ident == _NO_IDENTITY:
                written.ident = _identity(os.fstat(fd))
            spare = self._put_in_place(tmp)
        except BaseException:
            self._abandon(written, tmp, spare)
            raise
        self._keep(written, spare)

    def _abandon(self, written: _Held, tmp: str | None, spare: str | None) -> None:
        """After a failed write: close the file written and forget the current one; remove the
        names ``tmp`` and ``spare`` (the temporary file, the replaced file's second name)."""
        _release(written)
        for name in (tmp, spare):
            if name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(name)
        _release(self._current)
        self._current = None

    def _keep(self, written: _Held, spare: str | None) -> None:
        """After a write: ``written`` is the current file, the replaced one the spare (under ``spare``)."""
        replaced, self._current = self._current, written
        if spare is None:
            _release(replaced)
        else:
            # Its descriptor and pieces hold only if the file linked is the one this store
            # wrote last: the next write's check compares the name's inode with the descriptor's.
            self._spare, self._spare_held = spare, replaced

    def _new_spare(self) -> tuple[int, str]:
        """A new empty file under the first spare name (mode 0600), opened for writing."""
        for _ in range(3):
            name = self._spare_names[0]
            try:
                return os.open(name, _NEW_FILE_FLAGS, 0o600), name
            except FileExistsError:  # taken by something else: other names
                self._draw_spare_names()
            except FileNotFoundError:
                os.makedirs(self._dir_text, exist_ok=True)
        return _create_temp(self._dir_text, ".")

    def _put_in_place(self, tmp: str) -> str | None:
        """Rename ``tmp`` over the checkpoint; return the name the replaced file keeps, if any.

        Where the file system can, one ``renameat2(RENAME_EXCHANGE)`` swaps the two names: the
        checkpoint's name leads to the new file and ``tmp`` to the replaced one, which becomes
        the spare. Readers see the old or the new file, as with a rename. Elsewhere (or without
        the real ``os`` module, as under pyfakefs) the current file gets a second name first
        (``link``), then the rename replaces it.
        """
        if self._exchanging and isinstance(os, types.ModuleType):
            try:
                _exchange(tmp, self._path_text)
                return tmp
            except FileNotFoundError:  # no checkpoint yet (the first write): a plain rename
                os.replace(tmp, self._path_text)
                return None
            except OSError as err:
                if err.errno not in _EXCHANGE_UNSUPPORTED:
                    raise
                self._exchanging = False
        spare = self._link_current(tmp)
        try:
            os.replace(tmp, self._path_text)
        except BaseException:
            if spare is not None:  # the current file stays; its second name goes
                with contextlib.suppress(OSError):
                    os.unlink(spare)
            raise
        return spare

    def _take_spare(self) -> tuple[int, str, list[bytes] | None, os.stat_result | None]:
        """The spare, ready to be overwritten: its descriptor, name, the pieces it holds (``None``:
        unknown) and its ``stat`` (taken before the write); or ``(-1, "", None, None)``: none to reuse.

        It is reused only while its name still leads to it and it has no other name
        (``st_nlink == 1``): nobody else can see it. Its pieces count only while it has the size
        and modification time it had right after this store wrote it.
        """
        spare, held = self._spare, self._spare_held
        self._spare = self._spare_held = None
        if spare is None:
            _release(held)
            return -1, "", None, None
        info: os.stat_result | None = None
        pieces: list[bytes] | None = None
        if held is not None and held.fd >= 0:
            fd = held.fd
            info, pieces = _check_kept(spare, held)
        else:  # a file this store did not write (the first write after a start): opened by name
            try:
                fd = os.open(spare, _SPARE_FLAGS)
            except OSError:
                fd = -1
            if fd >= 0:
                with contextlib.suppress(OSError):
                    info = os.fstat(fd)
        if fd >= 0:
            if info is not None and info.st_nlink == 1:  # only our name: nobody else can see it
                try:
                    if info.st_mode & 0o777 != 0o600:  # a target someone else created
                        os.fchmod(fd, 0o600)
                    return fd, spare, pieces, info
                except OSError:
                    pass
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(spare)
        self._draw_spare_names()
        return -1, "", None, None

    def _link_current(self, tmp: str) -> str | None:
        """A second name for the current file, to become the spare once it is replaced.

        The name is whichever of the store's two spare names ``tmp`` (the file about to
        replace it) is not; one taken by something else gets a fresh random name.
        """
        first, second = self._spare_names
        name = second if tmp == first else first
        try:
            os.link(self._path_text, name)
        except FileExistsError:
            name = f"{self._dir_text}/.{os.path.basename(self._path_text)}.spare-{secrets.token_hex(5)}"
            try:
                os.link(self._path_text, name)
            except OSError:
                return None
        except OSError:  # the first write (no file), or no hard links here: a new file next time
            return None
        return name

    def _drop_spare(self) -> None:
        spare, self._spare = self._spare, None
        _release(self._spare_held)
        _release(self._current)
        self._spare_held = self._current = None
        if spare is not None:
            with contextlib.suppress(OSError):
                os.unlink(spare)


def _kept_spare(name: str, held: _Held) -> os.stat_result | None:
    """``stat`` of the spare ``name`` when it can be written at once: it still leads to the kept
    file ``held`` (descriptor open), has no other name and mode 0600, and ``os`` is the real module
    (the checks :meth:`FileCheckpointStore._take_spare` makes); else ``None``."""
    if held.fd < 0 or not isinstance(os, types.ModuleType):
        return None
    info, _ = _check_kept(name, held)
    if info is None or info.st_nlink != 1 or info.st_mode & 0o777 != 0o600:
        return None
    return info


def _check_kept(name: str, held: _Held) -> tuple[os.stat_result | None, list[bytes] | None]:
    """``stat`` of ``name`` if it still leads to the kept file ``held`` (else ``None``), and the
    pieces that file holds if it is unchanged since the store wrote it (else ``None``)."""
    try:
        info = os.stat(name)
    except OSError:
        return None, None
    ident = held.ident
    if info.st_ino != ident[1] or info.st_dev != ident[0]:
        return None, None  # the name leads elsewhere now
    if info.st_size == ident[2] and info.st_mtime_ns == ident[3]:
        return info, held.pieces
    return info, None


class _Held:
    """A file the store wrote and keeps open: descriptor, identity after the write, pieces written."""

    __slots__ = ("fd", "ident", "pieces")

    def __init__(self, fd: int, ident: _Identity, pieces: list[bytes]) -> None:
        self.fd = fd
        self.ident = ident
        self.pieces = pieces


def _release(held: _Held | None) -> None:
    """Close a kept descriptor (once: it is marked closed)."""
    if held is not None and held.fd >= 0:
        fd, held.fd = held.fd, -1
        with contextlib.suppress(OSError):
            os.close(fd)


_SPARE_FLAGS = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
_NEW_FILE_FLAGS = _SPARE_FLAGS | os.O_CREAT | os.O_EXCL


def _load_renameat2() -> Any:
    """libc's ``renameat2`` (Linux 3.15+, glibc 2.28+), or ``None`` where it is not there."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _load_renameat2()
_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
#: What a file system (or a kernel) without RENAME_EXCHANGE answers.
_EXCHANGE_UNSUPPORTED = frozenset(
    {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}
)


def _exchange(first: str, second: str) -> None:
    """Swap two names atomically: each then leads to the other's file (``RENAME_EXCHANGE``)."""
    if _RENAMEAT2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available", first, None, second)
    # os.fsencode's own encoding, without its Python-level call
    encoded = first.encode(_FS_ENCODING, _FS_ERRORS), second.encode(_FS_ENCODING, _FS_ERRORS)
    if _RENAMEAT2(_AT_FDCWD, encoded[0], _AT_FDCWD, encoded[1], _RENAME_EXCHANGE):
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number), first, None, second)


def _iov_max() -> int:
    try:
        return max(16, min(os.sysconf("SC_IOV_MAX"), 1024))
    except (AttributeError, ValueError, OSError):
        return 16


_IOV_MAX = _iov_max()
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _file_lock(path: str) -> threading.Lock:
    """One lock per checkpoint file in this process, shared by every store on it."""
    key = os.path.abspath(path)
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = threading.Lock()
        return lock


_Identity = tuple[int, int, int, int]
_NO_IDENTITY: _Identity = (-1, -1, -1, -1)


def _identity(info: os.stat_result) -> _Identity:
    """Which file, and whether it changed since: device, inode, size, modification time (ns).

    A file rewritten in place by someone else (``Path.write_bytes``, as the
    ``corruptCheckpoint`` step does) keeps its inode but not its modification time.
    """
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _which_file(info: os.stat_result) -> _Identity:
    """The identity of a small file: device and inode alone (its pieces are never reused, so its
    size and modification time are not compared)."""
    return (info.st_dev, info.st_ino, -1, -1)


def _common_prefix(pieces: list[bytes], held: list[bytes] | None) -> tuple[int, int]:
    """How many leading ``pieces`` are the very objects ``held`` starts with, and their bytes."""
    count = offset = 0
    if held is not None:
        for new, old in zip(pieces, held, strict=False):
            if new is not old:
                break
            count += 1
            offset += len(new)
    return count, offset


def _create_temp(directory: str, prefix: str) -> tuple[int, str]:
    try:
        return create_temp_file(directory, prefix)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        return create_temp_file(directory, prefix)


def _write_all(fd: int, pieces: list[bytes]) -> None:
    """Write the pieces in order: ``os.writev`` (batches of at most IOV_MAX), resumed after short writes.

    Where ``os`` is not the real module (pyfakefs in tests), the pieces are joined and
    written with ``os.write``.
    """
    if len(pieces) == 1 or not isinstance(os, types.ModuleType) or not hasattr(os, "writev"):
        view = memoryview(pieces[0] if len(pieces) == 1 else b"".join(pieces))
        while view:
            view = view[os.write(fd, view) :]
        return
    if len(pieces) <= _IOV_MAX:
        written = os.writev(fd, pieces)
        if written == sum(map(len, pieces)):  # all of it (the common case)
            return
        if written <= 0:
            raise OSError(5, "writev wrote nothing")
        pieces = [b"".join(pieces)[written:]]  # resume after a short write
    pending: list[bytes | memoryview] = [piece for piece in pieces if piece]
    start = 0
    while start < len(pending):
        batch = pending[start : start + _IOV_MAX]
        written = os.writev(fd, batch)
        if written <= 0:
            raise OSError(5, "writev wrote nothing")
        for piece in batch:
            if written < len(piece):
                pending[start] = memoryview(piece)[written:]
                break
            written -= len(piece)
            start += 1


def _write_at(fd: int, pieces: list[bytes], offset: int) -> None:
    """Write the pieces in order from ``offset``: one ``os.pwritev`` in the common case.

    Without ``pwritev`` (or where ``os`` is not the real module: pyfakefs in tests), or after
    a short write, the file offset is set with ``os.lseek`` and :func:`_write_all` goes on.
    """
    if _HAS_PWRITEV and isinstance(os, types.ModuleType) and 0 < len(pieces) <= _IOV_MAX:
        written = os.pwritev(fd, pieces, offset)
        if written == sum(map(len, pieces)):  # all of it (the common case)
            return
        if written <= 0:
            raise OSError(5, "pwritev wrote nothing")
        pieces = [b"".join(pieces)[written:]]
        offset += written
    os.lseek(fd, offset, os.SEEK_SET)
    _write_all(fd, pieces)


_HAS_PWRITEV = hasattr(os, "pwritev")
