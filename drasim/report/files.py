"""Atomic file writes for report outputs (see :mod:`drasim.fsutil`)."""

from __future__ import annotations

import os
from pathlib import Path

from drasim.fsutil import USER_FILE_MODE
from drasim.fsutil import atomic_write_text as _atomic_write_text

__all__ = ["atomic_write_text"]


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write a report atomically, readable as the umask allows (0644 under the usual 022)."""
    return _atomic_write_text(path, text, mode=USER_FILE_MODE)
