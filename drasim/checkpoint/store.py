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

Only :mod:`pathlib` and :mod:`os` touch the disk, so the store works
under pyfakefs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from drasim.checkpoint import codec
from drasim.checkpoint.codec import CheckpointFormat, DecodedCheckpoint
from drasim.checkpoint.incremental import IncrementalEncoder
from drasim.errors import CheckpointError, CorruptCheckpointError
from drasim.fsutil import atomic_write_bytes
from drasim.interfaces import NullRecorder, Recorder
from drasim.kubelet.state import ClaimInfoState

__all__ = ["DRA_MANAGER_STATE_FILE", "FileCheckpointStore"]

#: The checkpoint's file name in the kubelet root directory (``draManagerStateFileName``).
DRA_MANAGER_STATE_FILE = "dra_manager_state"

#: Up to this many entries a ``checkpoint`` journal event carries the written entries; a
#: bigger write records only their number. A journal keeps every event of a run, and the
#: kubelet rewrites the whole file on every change: with N claims a run would otherwise
#: keep O(N^2) entry copies (about 2 GB for 1000 pods).
JOURNAL_ENTRIES_LIMIT = 64

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
    kubelet) makes each write durable against power loss.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        recorder: Recorder | None = None,
        write_share_id: bool = True,
        fsync: bool = True,
    ) -> None:
        self.path = Path(path)
        self.write_share_id = write_share_id
        self.fsync = fsync
        self._recorder: Recorder = recorder if recorder is not None else NullRecorder()
        self._lock = threading.Lock()
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
            blob = memo.encode()
            self._write_blob(blob, memo.items() if len(memo) <= JOURNAL_ENTRIES_LIMIT else len(memo))

    def _read(self) -> bytes:
        try:
            return self.path.read_bytes()
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
        listed = items or []
        self._write_blob(blob, listed if len(listed) <= JOURNAL_ENTRIES_LIMIT else len(listed))

    def _write_blob(self, blob: bytes, shown: list[dict[str, Any]] | int) -> None:
        """Replace the file with ``blob``; journal the entries ``shown`` (or their number)."""
        try:
            _atomic_write(self._path_text, blob, sync=self.fsync)
        except OSError as err:
            raise CheckpointError(f"{self.path}: cannot write checkpoint: {err.strerror or err}") from None
        if not isinstance(self._recorder, NullRecorder):
            self._recorder.record("checkpoint", path=self._path_text, entries=shown, size=len(blob))


def _atomic_write(path: str, blob: bytes, *, sync: bool = True) -> None:
    """Write ``blob`` to ``path`` via ``.<random>`` in the same directory, fsync, rename, fsync dir.

    ``sync=False`` leaves out both fsyncs.
    """
    atomic_write_bytes(path, blob, durable=True, sync=sync, temp_prefix=".")
