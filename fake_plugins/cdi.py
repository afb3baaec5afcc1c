"""Per-claim CDI spec files, as a driver writes them for the container runtime.

One transient spec per prepared claim, ``<cdi_dir>/<driver>-claim_<uid>.json``,
holding one CDI device per prepared device with environment edits that name the
driver, the claim and the device.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fake_plugins.files import remove_file, write_json_atomic

CDI_VERSION = "0.6.0"


def spec_path(cdi_dir: str | Path, driver: str, claim_uid: str) -> Path:
    """Where the spec for one claim lives."""
    return Path(cdi_dir) / f"{driver}-claim_{claim_uid}.json"


def device_id(kind: str, name: str) -> str:
    """A fully qualified CDI device ID: ``<vendor>/<class>=<name>``."""
    return f"{kind}={name}"


def build_spec(
    kind: str, driver: str, claim_uid: str, devices: Sequence[tuple[str, str, str]]
) -> dict[str, Any]:
    """The spec document. ``devices`` holds ``(cdi_name, pool, device)`` triples."""
    env_key = driver.split(".", 1)[0].upper().replace("-", "_")
    return {
        "cdiVersion": CDI_VERSION,
        "kind": kind,
        "devices": [
            {
                "name": cdi_name,
                "containerEdits": {
                    "env": [
                        f"DRA_DRIVER={driver}",
                        f"DRA_CLAIM_UID={claim_uid}",
                        f"{env_key}_DEVICE_{index}={pool}/{device}",
                    ]
                },
            }
            for index, (cdi_name, pool, device) in enumerate(devices)
        ],
    }


def write_spec(path: Path, spec: dict[str, Any], *, sync: bool = True) -> None:
    """Write atomically (``sync=False``: without fsync)."""
    write_json_atomic(path, spec, sync=sync)


def remove_spec(path: Path, *, sync: bool = True) -> bool:
    """Delete; True if a file was there."""
    return remove_file(path, sync=sync)
