"""Atomic file writes for the fake driver's state and CDI specs (see :mod:`drasim.fsutil`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from drasim.fsutil import atomic_write_bytes, fsync_directory


def write_json_atomic(path: Path, data: Any, *, sync: bool = True) -> None:
    """Replace ``path`` with the JSON of ``data``; readers see the old or the new file, never half.

    ``sync=False`` skips the fsyncs (see :func:`drasim.fsutil.atomic_write_bytes`).
    """
    payload = json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"
    atomic_write_bytes(path, payload, durable=True, sync=sync)


def remove_file(path: Path, *, sync: bool = True) -> bool:
    """Delete ``path`` if it exists; True if something was removed."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    if sync:
        fsync_directory(path.parent)
    return True
