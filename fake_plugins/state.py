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

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drasim.errors import CheckpointError
from drasim.values import Device
from fake_plugins.files import write_json_atomic

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


class DriverState:
    """Prepared claims in memory, optionally persisted to ``path``."""

    def __init__(self, driver: str, path: Path | None, *, sync: bool = True) -> None:
        self.driver = driver
        self.path = path
        self.sync = sync
        self.claims: dict[str, PreparedClaim] = {}

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
        write_json_atomic(self.path, self.to_json(), sync=self.sync)

    def to_json(self) -> dict[str, Any]:
        """The file content."""
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "driver": self.driver,
            "preparedClaims": {
                uid: {
                    "namespace": c.namespace,
                    "name": c.name,
                    "devices": [device_to_json(d) for d in c.devices],
                }
                for uid, c in sorted(self.claims.items())
            },
        }

    def holder_of(self, pool: str, device: str, share_id: str | None, *, except_uid: str) -> str | None:
        """The UID of another prepared claim using this device (and share), if any."""
        for uid, claim in self.claims.items():
            if uid == except_uid:
                continue
            for d in claim.devices:
                if d.pool_name == pool and d.device_name == device and d.share_id == share_id:
                    return uid
        return None
