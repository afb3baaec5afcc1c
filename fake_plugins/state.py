"""The fake driver's own checkpoint: which claims it prepared, with which devices.

The state lets a restarted driver answer a repeated prepare with the same devices and
unprepare claims it prepared before the restart. It is a directory,
``<stateDir>/prepared-claims/``, with one file per prepared claim, so a call writes only
the claims it changed (as the CDI specs are one file per claim): a prepare writes the
claim's file atomically (temporary file, rename), an unprepare deletes it. Each file is
``json.dumps(doc, indent=2, sort_keys=True)`` of::

    {"apiVersion": "fake-plugins.drasim.dev/v1", "kind": "FakeDriverPreparedClaim",
     "driver": "gpu.example.com", "uid": "<uid>", "namespace": "...", "name": "...",
     "devices": [{"requestNames": [...], "poolName": "...", "deviceName": "...",
                  "cdiDeviceIDs": [...], "shareID": null}]}

named :func:`claim_file_name` of the UID. Names starting with ``.`` are temporary files
of an interrupted write and are ignored. Any other file that is not such a document (or
whose name does not match its ``uid``) makes loading fail with a
:class:`~drasim.errors.CheckpointError` naming the file.

Older drasim wrote one file, ``<stateDir>/checkpoint.json`` (kind ``FakeDriverCheckpoint``,
``preparedClaims`` by UID), rewritten whole on every call. A driver that finds it migrates
it when it starts: every claim in it gets its own file, then the old file is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from drasim.errors import CheckpointError
from drasim.fsutil import atomic_write_bytes, fsync_directory
from drasim.values import Device
from fake_plugins.files import dumps_indented

API_VERSION = "fake-plugins.drasim.dev/v1"
#: The kind of one prepared claim's file.
CLAIM_KIND = "FakeDriverPreparedClaim"
#: The kind of the single state file of older drasim versions (read once, for migration).
LEGACY_KIND = "FakeDriverCheckpoint"
#: The directory of claim files under the state directory.
CLAIMS_DIR = "prepared-claims"
#: The single state file of older drasim versions, under the state directory.
LEGACY_FILE = "checkpoint.json"

_MAX_NAME = 200  # encoded UIDs longer than this are named by their SHA-256


@dataclass(frozen=True)
class PreparedClaim:
    """One prepared claim as the driver remembers it."""

    namespace: str
    name: str
    devices: tuple[Device, ...]


def device_to_json(device: Device) -> dict[str, Any]:
    """camelCase JSON of a device (the same keys the kubelet checkpoint uses)."""
    return {
        "requestNames": list(device.request_names or ()),
        "poolName": device.pool_name,
        "deviceName": device.device_name,
        "cdiDeviceIDs": list(device.cdi_device_ids or ()),
        "shareID": device.share_id,
    }


def device_from_json(data: dict[str, Any]) -> Device:
    """Inverse of :func:`device_to_json`."""
    return Device(
        pool_name=str(data["poolName"]),
        device_name=str(data["deviceName"]),
        request_names=tuple(data.get("requestNames") or ()),
        cdi_device_ids=tuple(data.get("cdiDeviceIDs") or ()),
        share_id=data.get("shareID"),
    )


def claim_file_name(uid: str) -> str:
    """The file name of a claim's state: the UID percent-encoded (a leading ``.`` too), ``.json``.

    UIDs are usually UUIDs, which stay as they are; an encoded UID longer than 200
    characters is replaced by ``sha256-<hex of the UID>``.
    """
    encoded = quote(uid, safe="")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if not encoded or len(encoded) > _MAX_NAME:
        encoded = "sha256-" + hashlib.sha256(uid.encode("utf-8", "surrogatepass")).hexdigest()
    return encoded + ".json"


def claim_document(driver: str, uid: str, claim: PreparedClaim) -> dict[str, Any]:
    """The JSON document of one claim's file."""
    return {
        "apiVersion": API_VERSION,
        "kind": CLAIM_KIND,
        "driver": driver,
        "uid": uid,
        "namespace": claim.namespace,
        "name": claim.name,
        "devices": [device_to_json(d) for d in claim.devices],
    }


def claim_file_bytes(driver: str, uid: str, claim: PreparedClaim) -> bytes:
    """A claim file's content: ``json.dumps(claim_document(...), indent=2, sort_keys=True)`` and a newline."""
    return dumps_indented(claim_document(driver, uid, claim)).encode("ascii") + b"\n"


class PreparedClaims(dict[str, PreparedClaim]):
    """The prepared claims by UID: a dict that notes which UIDs changed since :meth:`take_changed`.

    Every mutating dict method is overridden, so any change (``claims[uid] = ...``,
    ``pop``, ``del``, ``update``, ...) is seen. A device index (pool, device, share ID ->
    UIDs) is kept with it, for :meth:`DriverState.holder_of`.
    """

    def __init__(self) -> None:
        super().__init__()
        self._changed: set[str] = set()
        self._order: dict[str, int] = {}  # UID -> insertion number (the dict's iteration order)
        self._inserted = 0
        self._holders: dict[tuple[str, str, str | None], set[str]] = {}

    def _forget(self, uid: str) -> None:
        old = dict.get(self, uid)
        if old is None:
            return
        for key in {(d.pool_name, d.device_name, d.share_id) for d in old.devices}:
            holders = self._holders[key]
            holders.discard(uid)
            if not holders:
                del self._holders[key]

    def __setitem__(self, uid: str, claim: PreparedClaim) -> None:
        self._forget(uid)
        if not dict.__contains__(self, uid):
            self._order[uid] = self._inserted
            self._inserted += 1
        dict.__setitem__(self, uid, claim)
        for d in claim.devices:
            self._holders.setdefault((d.pool_name, d.device_name, d.share_id), set()).add(uid)
        self._changed.add(uid)

    def __delitem__(self, uid: str) -> None:
        self._forget(uid)
        dict.__delitem__(self, uid)
        del self._order[uid]
        self._changed.add(uid)

    _MISSING: Any = object()

    def pop(self, uid: str, default: Any = _MISSING) -> Any:
        if dict.__contains__(self, uid):
            claim = dict.__getitem__(self, uid)
            del self[uid]
            return claim
        if default is PreparedClaims._MISSING:
            raise KeyError(uid)
        return default

    def popitem(self) -> tuple[str, PreparedClaim]:
        uid = next(reversed(self))
        return uid, self.pop(uid)

    def setdefault(self, uid: str, default: Any = None) -> Any:
        if not dict.__contains__(self, uid):
            self[uid] = default
        return dict.__getitem__(self, uid)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for uid, claim in dict(*args, **kwargs).items():
            self[uid] = claim

    def clear(self) -> None:
        for uid in list(self):
            del self[uid]

    def __ior__(self, other: Any) -> PreparedClaims:  # type: ignore[override,misc]
        self.update(other)
        return self

    @property
    def pending(self) -> bool:
        """Whether a claim changed since the last :meth:`take_changed`."""
        return bool(self._changed)

    def mark_changed(self, uids: set[str]) -> None:
        """Note ``uids`` as changed again (their files could not be written)."""
        self._changed |= uids

    def take_changed(self) -> set[str]:
        """The UIDs set or removed since the previous call."""
        changed, self._changed = self._changed, set()
        return changed

    def holders(self, pool: str, device: str, share_id: str | None) -> list[str]:
        """UIDs of the claims holding this device (and share), in the dict's order."""
        return sorted(self._holders.get((pool, device, share_id), ()), key=self._order.__getitem__)


class DriverState:
    """Prepared claims in memory, optionally persisted under the state directory ``directory``.

    :meth:`save` writes the file of every claim set since the previous save and deletes
    the file of every claim removed; the other claims' files are not touched.
    """

    def __init__(self, driver: str, directory: Path | None, *, sync: bool = True) -> None:
        self.driver = driver
        self.directory = directory
        self.sync = sync
        self.claims: PreparedClaims = PreparedClaims()

    @property
    def claims_dir(self) -> Path | None:
        """Where the claim files are (None: not persisted)."""
        return None if self.directory is None else self.directory / CLAIMS_DIR

    @classmethod
    def load(cls, driver: str, directory: Path | None, *, sync: bool = True) -> DriverState:
        """Read the claim files (none = nothing prepared); migrate an old ``checkpoint.json``.

        Bad content raises :class:`CheckpointError` naming the file. ``sync`` is whether
        later saves fsync.
        """
        state = cls(driver, directory, sync=sync)
        if directory is None:
            return state
        legacy = directory / LEGACY_FILE
        migrating = legacy.exists()
        if migrating:
            state.claims.update(read_legacy_file(legacy))
        state.claims.update(read_claims_dir(directory / CLAIMS_DIR))
        if migrating:
            state.save(every_claim=True)
            os.unlink(legacy)
            if sync:
                fsync_directory(directory)
        state.claims.take_changed()
        return state

    def save(self, *, every_claim: bool = False) -> None:
        """Write the changed claims' files and delete the removed ones' (no-op without a directory).

        ``every_claim`` writes every claim's file (migration).
        """
        changed = self.claims.take_changed()
        folder = self.claims_dir
        if folder is None:
            return
        if every_claim:
            changed |= set(self.claims)
        done: set[str] = set()
        path = folder
        try:
            for uid in sorted(changed):
                path = folder / claim_file_name(uid)
                claim = self.claims.get(uid)
                if claim is None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
                else:
                    # durable=False: the directory is fsynced once below, not once per file.
                    blob = claim_file_bytes(self.driver, uid, claim)
                    atomic_write_bytes(path, blob, durable=False, sync=self.sync)
                done.add(uid)
            if self.sync and changed:
                path = folder
                fsync_directory(folder)  # the renames and removals
        except OSError as err:
            self.claims.mark_changed(changed - done)  # written by the next save that succeeds
            reason = err.strerror or str(err)
            raise CheckpointError(f"{path}: cannot write fake driver checkpoint: {reason}") from None

    def to_json(self) -> dict[str, Any]:
        """Every prepared claim as its file's document, by UID (sorted)."""
        return {uid: claim_document(self.driver, uid, c) for uid, c in sorted(self.claims.items())}

    def holder_of(self, pool: str, device: str, share_id: str | None, *, except_uid: str) -> str | None:
        """The UID of another prepared claim using this device (and share), if any."""
        for uid in self.claims.holders(pool, device, share_id):
            if uid != except_uid:
                return uid
        return None


def _claim_from_json(entry: Any) -> PreparedClaim:
    return PreparedClaim(
        namespace=str(entry["namespace"]),
        name=str(entry["name"]),
        devices=tuple(device_from_json(d) for d in entry.get("devices") or ()),
    )


def _corrupt(path: Path, err: object) -> CheckpointError:
    return CheckpointError(f"{path}: fake driver checkpoint is corrupted: {err}")


def read_claim_file(path: Path) -> tuple[str, PreparedClaim]:
    """One claim file: ``(uid, claim)``; a bad file raises :class:`CheckpointError`."""
    try:
        doc = json.loads(path.read_bytes())
        if not isinstance(doc, dict):
            msg = f"expected a JSON object, got {type(doc).__name__}"
            raise ValueError(msg)
        if doc.get("kind") != CLAIM_KIND or doc.get("apiVersion") != API_VERSION:
            msg = f"expected kind {CLAIM_KIND} apiVersion {API_VERSION}"
            raise ValueError(msg)
        uid = doc["uid"]
        if not isinstance(uid, str) or claim_file_name(uid) != path.name:
            expected = claim_file_name(str(uid))
            msg = f"uid {uid!r} does not belong in a file named {path.name!r} (expected {expected!r})"
            raise ValueError(msg)
        return uid, _claim_from_json(doc)
    except OSError as err:
        raise CheckpointError(f"{path}: cannot read fake driver checkpoint: {err.strerror or err}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise _corrupt(path, err) from None


def read_claims_dir(folder: Path) -> dict[str, PreparedClaim]:
    """Every claim file in ``folder`` by UID (a missing folder: none); temp files are skipped."""
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return {}
    except NotADirectoryError:
        raise _corrupt(folder, "not a directory") from None
    claims: dict[str, PreparedClaim] = {}
    for name in names:
        if name.startswith("."):
            continue  # a temporary file of an interrupted write
        uid, claim = read_claim_file(folder / name)
        claims[uid] = claim
    return claims


def read_legacy_file(path: Path) -> dict[str, PreparedClaim]:
    """The claims of an old single-file ``checkpoint.json``; a bad file raises :class:`CheckpointError`."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("kind") != LEGACY_KIND or doc.get("apiVersion") != API_VERSION:
            msg = f"expected kind {LEGACY_KIND} apiVersion {API_VERSION}"
            raise ValueError(msg)
        return {str(uid): _claim_from_json(entry) for uid, entry in (doc.get("preparedClaims") or {}).items()}
    except OSError as err:
        raise CheckpointError(f"{path}: cannot read fake driver checkpoint: {err.strerror or err}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise _corrupt(path, err) from None
