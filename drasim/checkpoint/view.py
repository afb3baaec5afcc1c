"""Human and JSON views of a decoded checkpoint, for ``drasim checkpoint show``.

PURE: formatting only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from drasim.checkpoint.codec import CheckpointFormat, DecodedCheckpoint, entry_sort_key, entry_to_json
from drasim.checkpoint.legacy import LegacyClaimInfoState, LegacyLayout, legacy_entry_to_json
from drasim.state import ClaimInfoState

__all__ = ["render", "to_json"]

_NONE = "-"


def _checksum_line(decoded: DecodedCheckpoint) -> str:
    algorithm = "CRC-32" if decoded.format is CheckpointFormat.CURRENT else "FNV-1a-32"
    if decoded.checksum_ok:
        return f"OK ({algorithm} {decoded.stored_checksum})"
    return f"MISMATCH (stored {decoded.stored_checksum}, computed {decoded.computed_checksum}, {algorithm})"


def _format_line(decoded: DecodedCheckpoint) -> str:
    if decoded.format is CheckpointFormat.LEGACY:
        return f"legacy 1.26-1.30 (version v1, {decoded.variant} layout); a kubelet 1.31 or later refuses it"
    share = {True: "with ShareID", False: "without ShareID (1.31-1.34)", None: "no devices"}
    null = ", list is null (fresh checkpoint)" if decoded.list_is_null else ""
    devices = share[decoded.share_id_written]
    return f"current ({decoded.variant} list), {devices}{null}"


def _joined(values: Iterable[str] | None) -> str:
    if values is None:
        return _NONE
    items = list(values)
    return ",".join(items) if items else _NONE


def _current_rows(states: Sequence[ClaimInfoState]) -> list[list[str]]:
    rows: list[list[str]] = []
    for state in sorted(states, key=entry_sort_key):
        claim = [state.namespace, state.claim_name, state.claim_uid, _joined(sorted(state.pod_uids or ()))]
        device_rows: list[list[str]] = []
        for driver_name, driver_state in sorted((state.driver_state or {}).items()):
            skip = driver_state.skip_node_operations
            driver = f"{driver_name} (skip {skip})" if skip else driver_name
            if not driver_state.devices:
                device_rows.append([driver, _NONE, _NONE])
            for device in driver_state.devices or ():
                name = f"{device.pool_name}/{device.device_name}"
                if device.share_id is not None:
                    name += f" (share {device.share_id})"
                device_rows.append([driver, name, _joined(device.cdi_device_ids)])
        for index, device_row in enumerate(device_rows or [[_NONE, _NONE, _NONE]]):
            rows.append((claim if index == 0 else [""] * 4) + device_row)
    return rows


def _legacy_rows(states: Sequence[LegacyClaimInfoState]) -> list[list[str]]:
    rows: list[list[str]] = []
    for state in states:
        claim = [state.namespace, state.claim_name, state.claim_uid, _joined(sorted(state.pod_uids or ()))]
        cdi = sorted((state.cdi_devices or {}).items()) or [(_NONE, None)]
        for index, (driver, ids) in enumerate(cdi):
            head = [*claim, state.driver_name, state.class_name] if index == 0 else [""] * 6
            rows.append([*head, driver, _joined(ids)])
    return rows


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def render(path: str, decoded: DecodedCheckpoint) -> str:
    """The human-readable view: a header with format and checksum status, then a table."""
    if decoded.format is CheckpointFormat.LEGACY:
        count = len(decoded.legacy_entries)
        header = ["NAMESPACE", "CLAIM", "UID", "PODS", "DRIVER", "CLASS", "CDI DRIVER", "CDI IDS"]
        rows = _legacy_rows(decoded.legacy_entries)
    else:
        count = len(decoded.entries)
        header = ["NAMESPACE", "CLAIM", "UID", "PODS", "DRIVER", "DEVICE", "CDI IDS"]
        rows = _current_rows(decoded.entries)
    lines = [
        f"File:      {path}",
        f"Format:    {_format_line(decoded)}",
        f"Checksum:  {_checksum_line(decoded)}",
        f"Claims:    {count}",
    ]
    if rows:
        lines += ["", _table(header, rows)]
    return "\n".join(lines)


def to_json(path: str, decoded: DecodedCheckpoint) -> dict[str, Any]:
    """The ``--json`` view; claims use the checkpoint's own (Go) key names."""
    if decoded.format is CheckpointFormat.LEGACY:
        layout = LegacyLayout(decoded.variant)
        claims = [legacy_entry_to_json(e, layout) for e in decoded.legacy_entries]
    else:
        share_id = decoded.share_id_written is not False
        claims = [entry_to_json(e, share_id=share_id) for e in sorted(decoded.entries, key=entry_sort_key)]
    return {
        "file": path,
        "format": decoded.format.value,
        "variant": decoded.variant,
        "checksum": {
            "stored": decoded.stored_checksum,
            "computed": decoded.computed_checksum,
            "ok": decoded.checksum_ok,
        },
        "listIsNull": decoded.list_is_null,
        "shareIdWritten": decoded.share_id_written,
        "claims": claims,
    }
