"""Atomic file writes for the fake driver's state and CDI specs (see :mod:`drasim.fsutil`)."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from drasim.fsutil import atomic_write_bytes, fsync_directory


def write_json_atomic(path: Path, data: Any, *, sync: bool = True) -> None:
    """Replace ``path`` with the JSON of ``data``; readers see the old or the new file, never half.

    ``sync=False`` skips the fsyncs (see :func:`drasim.fsutil.atomic_write_bytes`).
    """
    payload = dumps_indented(data).encode() + b"\n"
    atomic_write_bytes(path, payload, durable=True, sync=sync)


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2, sort_keys=True)``, byte for byte, but faster.

    With ``indent`` the standard library falls back to its pure-Python encoder; a CDI spec
    and a state entry are written on every prepare. Plain JSON trees (str-keyed dicts, lists,
    tuples, str, int, bool, None) take a direct path; anything else goes to :func:`json.dumps`.
    """
    out: list[str] = []
    try:
        _indented(value, out, "\n")
    except _NotPlainError:
        return json.dumps(value, indent=2, sort_keys=True)
    return "".join(out)


class _NotPlainError(Exception):
    """A value the direct path does not write exactly as json.dumps does."""


def _indented(value: Any, out: list[str], newline: str) -> None:
    kind = type(value)
    if kind is str:
        out.append(encode_basestring_ascii(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        if any(type(key) is not str for key in value):
            raise _NotPlainError
        inner = newline + "  "
        separator = "{" + inner
        for key in sorted(value):
            out.append(separator)
            separator = "," + inner
            out.append(encode_basestring_ascii(key))
            out.append(": ")
            _indented(value[key], out, inner)
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        separator = "[" + inner
        for item in value:
            out.append(separator)
            separator = "," + inner
            _indented(item, out, inner)
        out.append(newline + "]")
    else:
        out.append(_scalar(value, kind))


_LITERALS = {None: "null", True: "true", False: "false"}


def _scalar(value: Any, kind: type) -> str:
    if kind is int:
        return int.__repr__(value)
    if kind is bool or value is None:
        return _LITERALS[value]
    raise _NotPlainError


def remove_file(path: Path, *, sync: bool = True) -> bool:
    """Delete ``path`` if it exists; True if something was removed."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    if sync:
        fsync_directory(path.parent)
    return True
