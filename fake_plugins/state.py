"""The fake driver's own checkpoint: which claims it prepared, with which devices.

The file lets a restarted driver answer a repeated prepare with the same devices
and unprepare claims it prepared before the restart. It is written atomically
after every change. Format (JSON)::

    {"apiVersion": "fake-plugins.drasim.dev/v1", "kind": "FakeDriverCheckpoint",
     "driver": "gpu.example.com",
     "preparedClaims": {"<uid>": {"namespace": "...", "name": "...",
        "devices": [{"requestNames": [...], "poolName": "...", "deviceName": "...",
                     "cdiDeviceIDs": [...], "shareID": null}]}}}
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drasim.errors import CheckpointError
from drasim.fsutil import atomic_write_bytes
from drasim.values import Device
from fake_plugins.files import dumps_indented

API_VERSION = "fake-plugins.drasim.dev/v1"
KIND = "FakeDriverCheckpoint"


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

    def take_changed(self) -> set[str]:
        """The UIDs set or removed since the previous call."""
        changed, self._changed = self._changed, set()
        return changed

    def holders(self, pool: str, device: str, share_id: str | None) -> list[str]:
        """UIDs of the claims holding this device (and share), in the dict's order."""
        return sorted(self._holders.get((pool, device, share_id), ()), key=self._order.__getitem__)


def _member_text(uid: str, claim: PreparedClaim) -> bytes:
    """One ``preparedClaims`` member exactly as ``json.dumps(doc, indent=2, sort_keys=True)`` writes it."""
    body = dumps_indented(_claim_json(claim)).replace("\n", "\n    ")
    return f"    {json.dumps(uid)}: {body}".encode()


def _claim_json(claim: PreparedClaim) -> dict[str, Any]:
    return {
        "namespace": claim.namespace,
        "name": claim.name,
        "devices": [device_to_json(d) for d in claim.devices],
    }


class DriverState:
    """Prepared claims in memory, optionally persisted to ``path``.

    The file is rewritten whole on every save (as the reference driver's checkpoint
    is), but the text of each claim is kept between saves and only changed claims are
    encoded again, so a save costs the bytes copied rather than re-encoding every claim.
    """

    def __init__(self, driver: str, path: Path | None, *, sync: bool = True) -> None:
        self.driver = driver
        self.path = path
        self.sync = sync
        self.claims: PreparedClaims = PreparedClaims()
        self._sorted: list[str] = []  # the UIDs written, sorted
        self._texts: list[bytes] = []  # their member texts (ASCII), in the same order
        self._head_text: tuple[str, bytes] | None = None  # (driver, the file with no claims)

    @classmethod
    def load(cls, driver: str, path: Path | None, *, sync: bool = True) -> DriverState:
        """Read the file if it exists (no file = nothing prepared); bad content raises CheckpointError.

        ``sync`` is whether later saves fsync.
        """
        state = cls(driver, path, sync=sync)
        if path is None or not path.exists():
            return state
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("kind") != KIND or doc.get("apiVersion") != API_VERSION:
                msg = f"expected kind {KIND} apiVersion {API_VERSION}"
                raise ValueError(msg)
            for uid, entry in (doc.get("preparedClaims") or {}).items():
                state.claims[uid] = PreparedClaim(
                    namespace=str(entry["namespace"]),
                    name=str(entry["name"]),
                    devices=tuple(device_from_json(d) for d in entry.get("devices") or ()),
                )
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise CheckpointError(f"{path}: fake driver checkpoint is corrupted: {err}") from err
        return state

    def save(self) -> None:
        """Write the file atomically (no-op without a path)."""
        if self.path is None:
            return
        atomic_write_bytes(self.path, self.encode(), durable=True, sync=self.sync)

    def encode(self) -> bytes:
        """The file content: what ``write_json_atomic`` writes for :meth:`to_json`, byte for byte."""
        claims = self.claims
        uids, texts = self._sorted, self._texts
        for uid in claims.take_changed():
            claim = claims.get(uid)
            position = bisect.bisect_left(uids, uid)
            known = position < len(uids) and uids[position] == uid
            if claim is None:
                if known:
                    del uids[position], texts[position]
            elif known:
                texts[position] = _member_text(uid, claim)
            else:
                uids.insert(position, uid)
                texts.insert(position, _member_text(uid, claim))
        if self._head_text is None or self._head_text[0] != self.driver:
            head = dumps_indented(self._head())
            assert head.endswith("{}\n}")
            self._head_text = (self.driver, head.encode())
        head_bytes = self._head_text[1]
        if not uids:
            return head_bytes + b"\n"
        return b"".join((head_bytes[:-4], b"{\n", b",\n".join(texts), b"\n  }\n}\n"))

    def _head(self) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": KIND, "driver": self.driver, "preparedClaims": {}}

    def to_json(self) -> dict[str, Any]:
        """The file content."""
        doc = self._head()
        doc["preparedClaims"] = {uid: _claim_json(c) for uid, c in sorted(self.claims.items())}
        return doc

    def holder_of(self, pool: str, device: str, share_id: str | None, *, except_uid: str) -> str | None:
        """The UID of another prepared claim using this device (and share), if any."""
        for uid in self.claims.holders(pool, device, share_id):
            if uid != except_uid:
                return uid
        return None
