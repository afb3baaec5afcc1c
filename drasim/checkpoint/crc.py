"""CRC-32/IEEE of a concatenation from the CRCs of its parts.

PURE: no file or network I/O (importing it loads zlib's shared library). The checkpoint's
checksum covers the whole ``Data`` text, but a write usually changes one entry.
:func:`combine` gives ``crc32(a + b)`` from ``crc32(a)``, ``crc32(b)`` and ``len(b)`` without
reading the bytes again: it is zlib's ``crc32_combine``, reached through :mod:`ctypes` in the
zlib library that Python's own :mod:`zlib` module uses. Where that library cannot be loaded
(or fails its self-check), :data:`AVAILABLE` is false and callers run :func:`zlib.crc32` over
the bytes instead.
"""

from __future__ import annotations

import ctypes
import zlib
from collections.abc import Callable

__all__ = ["AVAILABLE", "combine"]


def _load() -> Callable[[int, int, int], int] | None:
    for name in ("libz.so.1", "libz.so", "libz.1.dylib", "libz.dylib", "zlib1.dll"):
        try:
            library = ctypes.CDLL(name)
            function = library.crc32_combine
        except (OSError, AttributeError):
            continue
        function.restype = ctypes.c_ulong
        function.argtypes = (ctypes.c_ulong, ctypes.c_ulong, ctypes.c_long)
        first, second = b"drasim checkpoint ", b"crc32_combine self-check \x00\xff" * 3
        try:
            ok = function(zlib.crc32(first), zlib.crc32(second), len(second)) == zlib.crc32(first + second)
        except (OSError, ctypes.ArgumentError):  # pragma: no cover - a broken library
            ok = False
        if ok:
            return function
    return None  # pragma: no cover - every CPython build on Linux has a loadable libz


_COMBINE = _load()

#: Whether :func:`combine` is usable.
AVAILABLE = _COMBINE is not None


def combine(crc1: int, crc2: int, len2: int) -> int:
    """``crc32(a + b)`` given ``crc1 = crc32(a)``, ``crc2 = crc32(b)`` and ``len2 = len(b)``.

    Only call it when :data:`AVAILABLE` is true.
    """
    assert _COMBINE is not None
    return _COMBINE(crc1, crc2, len2) & 0xFFFFFFFF
