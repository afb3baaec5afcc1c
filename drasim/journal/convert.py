"""Turn whatever a recorder is handed into plain JSON values.

Journal events are written as JSON lines and rendered into reports, so every
field must be JSON-ready. Callers pass dataclasses (``ClaimRef``,
``PrepareResult``), protobuf messages, tuples, bytes and exceptions; this module
converts them once, at :meth:`drasim.journal.Journal.record` time, so later
readers never see a live object that could change underneath them.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import enum
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

MAX_DEPTH = 40
"""Nesting deeper than this is replaced by a marker string (guards against cycles)."""


def to_jsonable(value: Any) -> Any:
    """A JSON-ready copy of ``value``.

    - ``None``, ``bool``, ``int``, ``str`` stay as they are; a non-finite float becomes its string.
    - dataclass instances become dicts of their fields (snake_case, like ``dataclasses.asdict``).
    - protobuf messages become dicts with the proto field names (``pool_name``,
      ``cdi_device_ids``), every field present, so they look like the dataclass form.
    - mappings become dicts with string keys; lists, tuples and sets become lists (sets sorted).
    - bytes become text when they are UTF-8, else ``"base64:<data>"``.
    - enums become their value, paths and exceptions their string, datetimes ISO-8601.
    - anything else becomes its ``repr``.
    """
    return _convert(value, 0)


_NOT_SCALAR = object()
_PLAIN = frozenset({str, int, bool, type(None)})
_STR = frozenset({str})
_INF = float("inf")


def _convert(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return "<nested too deeply>"
    # Fast paths for what most events carry: plain JSON values (exact types only, so
    # subclasses such as enums and named tuples still take the general path below).
    # In dicts and lists a plain leaf is taken inline, without a call.
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        return value if -_INF < value < _INF else str(value)
    if depth < MAX_DEPTH and (kind is dict or kind is list):
        return _plain_container(value, depth + 1)
    return _convert_other(value, depth)


def _plain_container(value: dict[Any, Any] | list[Any], child: int) -> Any:
    """A dict or list converted in one pass; one of plain values (and string keys) is copied in C."""
    if not isinstance(value, dict):
        if _PLAIN.issuperset(map(type, value)):
            return list(value)
        return [v if type(v) in _PLAIN else _convert(v, child) for v in value]
    if _PLAIN.issuperset(map(type, value.values())) and _STR.issuperset(map(type, value)):
        return dict(value)
    return {
        k if type(k) is str else str(k): v if type(v) in _PLAIN else _convert(v, child)
        for k, v in value.items()
    }


def _convert_other(value: Any, depth: int) -> Any:
    scalar = _scalar(value)
    if scalar is not _NOT_SCALAR:
        return scalar
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    else:
        proto = _proto_to_dict(value)
        value = value if proto is None else proto
    if isinstance(value, Mapping):
        return {str(k): _convert(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_convert(v, depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_convert(v, depth + 1) for v in value), key=repr)
    return repr(value)


def _scalar(value: Any) -> Any:
    """The JSON form of a leaf value, or ``_NOT_SCALAR``."""
    result: Any = _NOT_SCALAR
    if value is None or isinstance(value, bool | int | str):
        result = value
    elif isinstance(value, float):
        result = value if math.isfinite(value) else str(value)
    elif isinstance(value, bytes | bytearray | memoryview):
        result = _bytes_to_text(bytes(value))
    elif isinstance(value, enum.Enum):
        result = _scalar(value.value)
        result = repr(value.value) if result is _NOT_SCALAR else result
    elif isinstance(value, PurePath | BaseException):
        result = str(value)
    elif isinstance(value, datetime.datetime | datetime.date):
        result = value.isoformat()
    return result


def _bytes_to_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data).decode("ascii")


def _proto_to_dict(value: Any) -> dict[str, Any] | None:
    """A protobuf message as a dict, or ``None`` when ``value`` is not a message."""
    if not hasattr(value, "DESCRIPTOR") or not hasattr(value, "ListFields"):
        return None
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import Message

    if not isinstance(value, Message):
        return None
    return MessageToDict(value, always_print_fields_with_no_presence=True, preserving_proto_field_name=True)
