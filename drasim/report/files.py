"""Atomic file writes for report outputs (see :mod:`drasim.fsutil`)."""

from __future__ import annotations

from drasim.fsutil import atomic_write_text

__all__ = ["atomic_write_text"]
