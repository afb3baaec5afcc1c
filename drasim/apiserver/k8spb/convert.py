"""Convert between protobuf messages and Kubernetes JSON-shaped dicts.

The conversion is driven by the message descriptors of our own ``.proto``
definitions (whose field names are the JSON names, as upstream's are), plus the
handful of apimachinery types that have a custom JSON form:

* ``Time`` as RFC 3339 with seconds (``2006-01-02T15:04:05Z``), ``MicroTime`` with
  microseconds; a zero time is left out (Go shows ``null``);
* ``Quantity`` as its string (``"80Gi"``);
* ``RawExtension`` and ``FieldsV1`` as the embedded JSON value.

Zero values follow the rules in :mod:`drasim.apiserver.k8spb.fields`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from drasim.apiserver.k8spb.fields import inline_fields, is_pointer, keeps_zero
from drasim.errors import DrasimError

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
TIME = _META + "Time"
MICRO_TIME = _META + "MicroTime"
FIELDS_V1 = _META + "FieldsV1"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"

_INT_TYPES = frozenset(
    {
        FieldDescriptor.CPPTYPE_INT32,
        FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32,
        FieldDescriptor.CPPTYPE_UINT64,
    }
)


class ConversionError(DrasimError):
    """A value does not fit the message it is decoded from or encoded into.

    The message starts with the JSON path of the offending field.
    """


# ---------------------------------------------------------------- protobuf -> JSON


def message_to_json(msg: Message, path: str = "") -> dict[str, Any]:
    """The JSON dict the Kubernetes REST API shows for ``msg`` (unset fields left out)."""
    name = msg.DESCRIPTOR.full_name
    inline = inline_fields(name)
    out: dict[str, Any] = {}
    for fd, value in msg.ListFields():
        where = f"{path}.{fd.name}" if path else fd.name
        if fd.name in inline:
            out.update(message_to_json(value, path))
        elif _is_map(fd):
            out[fd.name] = _map_to_json(fd, value, where)
        elif fd.is_repeated:
            items = [_value_to_json(fd, v, f"{where}[{i}]") for i, v in enumerate(value)]
            out[fd.name] = [v for v in items if v is not _OMIT]
        else:
            converted = _value_to_json(fd, value, where)
            if converted is _OMIT:
                continue
            if fd.message_type is None and not converted and not keeps_zero(name, fd.name):
                continue
            out[fd.name] = converted
    return out


_OMIT: Any = object()


def _is_map(fd: FieldDescriptor) -> bool:
    return fd.message_type is not None and fd.message_type.GetOptions().map_entry


def _map_value_field(fd: FieldDescriptor) -> FieldDescriptor:
    entry = fd.message_type
    assert entry is not None  # only called for map fields
    return entry.fields_by_name["value"]


def _map_to_json(fd: FieldDescriptor, value: Any, path: str) -> dict[str, Any]:
    value_fd = _map_value_field(fd)
    result: dict[str, Any] = {}
    for key in sorted(value):
        converted = _value_to_json(value_fd, value[key], f"{path}[{key!r}]")
        result[key] = None if converted is _OMIT else converted
    return result


def _value_to_json(fd: FieldDescriptor, value: Any, path: str) -> Any:
    if fd.message_type is None:
        if fd.type == FieldDescriptor.TYPE_BYTES:
            return base64.b64encode(value).decode("ascii")
        return value
    special = _SPECIAL_TO_JSON.get(fd.message_type.full_name)
    if special is not None:
        return special(value, path)
    return message_to_json(value, path)


def _time_to_json(msg: Any, _path: str) -> Any:
    if msg.seconds == 0 and msg.nanos == 0:
        return _OMIT
    # Go's metav1.Time drops the nanoseconds when it reads protobuf.
    return datetime.fromtimestamp(msg.seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_time_to_json(msg: Any, _path: str) -> Any:
    if msg.seconds == 0 and msg.nanos == 0:
        return _OMIT
    stamp = datetime.fromtimestamp(msg.seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{msg.nanos // 1000:06d}Z"


def _quantity_to_json(msg: Any, _path: str) -> Any:
    return msg.string


def _embedded_json(raw: bytes, path: str) -> Any:
    if not raw:
        return _OMIT
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConversionError(f"{path}: embedded object is not valid JSON ({exc})") from None


def _raw_extension_to_json(msg: Any, path: str) -> Any:
    return _embedded_json(msg.raw, path)


def _fields_v1_to_json(msg: Any, path: str) -> Any:
    return _embedded_json(msg.Raw, path)


_SPECIAL_TO_JSON: dict[str, Callable[[Any, str], Any]] = {
    TIME: _time_to_json,
    MICRO_TIME: _micro_time_to_json,
    QUANTITY: _quantity_to_json,
    RAW_EXTENSION: _raw_extension_to_json,
    FIELDS_V1: _fields_v1_to_json,
}


# ---------------------------------------------------------------- JSON -> protobuf


def json_to_message(obj: Any, msg: Message, path: str = "", *, go_zero_fields: bool = False) -> None:
    """Fill ``msg`` from a JSON dict; unknown keys and wrong types raise :class:`ConversionError`.

    With ``go_zero_fields`` every non-pointer scalar that the dict leaves out is
    written as zero, the way Go's generated marshaller does.
    """
    desc = msg.DESCRIPTOR
    if not isinstance(obj, Mapping):
        raise ConversionError(f"{path or '<root>'}: expected an object for {desc.name}, got {_kind(obj)}")
    msg.SetInParent()
    inline = _inline_targets(desc)
    embedded: dict[str, dict[str, Any]] = {}
    for key, value in obj.items():
        where = f"{path}.{key}" if path else str(key)
        fd = cast("FieldDescriptor | None", desc.fields_by_name.get(key))
        if fd is None and key in inline:
            embedded.setdefault(inline[key], {})[key] = value
            continue
        if fd is None:
            raise ConversionError(f"{where}: unknown field for {desc.name}")
        if value is None:
            continue
        _set_field(msg, fd, value, where, go_zero_fields)
    for field_name, fields in embedded.items():
        json_to_message(fields, getattr(msg, field_name), path, go_zero_fields=go_zero_fields)
    if go_zero_fields:
        _write_go_zero_fields(msg)


def _inline_targets(desc: Any) -> dict[str, str]:
    """JSON key -> name of the inline field that carries it, for ``desc``."""
    targets: dict[str, str] = {}
    for field_name in inline_fields(desc.full_name):
        for sub in desc.fields_by_name[field_name].message_type.fields:
            targets[sub.name] = field_name
    return targets


def _write_go_zero_fields(msg: Message) -> None:
    desc = msg.DESCRIPTOR
    for field in desc.fields:
        if field.is_repeated or msg.HasField(field.name) or is_pointer(desc.full_name, field.name):
            continue
        if field.message_type is None:
            setattr(msg, field.name, field.default_value)
        elif field.message_type.full_name == TIME:
            getattr(msg, field.name).SetInParent()


def _set_field(msg: Message, fd: FieldDescriptor, value: Any, path: str, go_zero: bool) -> None:
    if _is_map(fd):
        if not isinstance(value, Mapping):
            raise ConversionError(f"{path}: expected an object, got {_kind(value)}")
        container = getattr(msg, fd.name)
        value_fd = _map_value_field(fd)
        for key, item in value.items():
            where = f"{path}[{key!r}]"
            if value_fd.message_type is None:
                container[key] = _scalar(value_fd, item, where)
            else:
                _fill_message(container[key], item, where, go_zero)
    elif fd.is_repeated:
        if not isinstance(value, list):
            raise ConversionError(f"{path}: expected a list, got {_kind(value)}")
        container = getattr(msg, fd.name)
        for i, item in enumerate(value):
            if fd.message_type is None:
                container.append(_scalar(fd, item, f"{path}[{i}]"))
            else:
                _fill_message(container.add(), item, f"{path}[{i}]", go_zero)
    elif fd.message_type is None:
        setattr(msg, fd.name, _scalar(fd, value, path))
    else:
        _fill_message(getattr(msg, fd.name), value, path, go_zero)


def _fill_message(sub: Message, value: Any, path: str, go_zero: bool) -> None:
    special = _SPECIAL_FROM_JSON.get(sub.DESCRIPTOR.full_name)
    sub.SetInParent()
    if special is not None:
        special(sub, value, path)
    else:
        json_to_message(value, sub, path, go_zero_fields=go_zero)


def _scalar(fd: FieldDescriptor, value: Any, path: str) -> Any:
    cpp = fd.cpp_type
    if cpp == FieldDescriptor.CPPTYPE_BOOL:
        if isinstance(value, bool):
            return value
        raise ConversionError(f"{path}: expected a boolean, got {_kind(value)}")
    if cpp in _INT_TYPES:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConversionError(f"{path}: expected an integer, got {_kind(value)}")
    if fd.type == FieldDescriptor.TYPE_BYTES:
        if isinstance(value, str):
            return base64.b64decode(value)
        raise ConversionError(f"{path}: expected base64 text, got {_kind(value)}")
    if isinstance(value, str):
        return value
    raise ConversionError(f"{path}: expected a string, got {_kind(value)}")


def _parse_time(value: Any, path: str) -> datetime:
    if not isinstance(value, str):
        raise ConversionError(f"{path}: expected an RFC 3339 time string, got {_kind(value)}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ConversionError(f"{path}: {value!r} is not an RFC 3339 time") from None
    if parsed.tzinfo is None:
        raise ConversionError(f"{path}: {value!r} has no time zone (expected e.g. a trailing Z)")
    return parsed


def _time_from_json(sub: Any, value: Any, path: str) -> None:
    parsed = _parse_time(value, path)
    sub.seconds = int(parsed.timestamp() // 1)
    sub.nanos = parsed.microsecond * 1000


def _quantity_from_json(sub: Any, value: Any, path: str) -> None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConversionError(f"{path}: expected a quantity string such as '80Gi', got {_kind(value)}")
    sub.string = str(value)


def _raw_extension_from_json(sub: Any, value: Any, _path: str) -> None:
    sub.raw = json.dumps(value, separators=(",", ":")).encode()


def _fields_v1_from_json(sub: Any, value: Any, _path: str) -> None:
    sub.Raw = json.dumps(value, separators=(",", ":")).encode()


_SPECIAL_FROM_JSON: dict[str, Callable[[Any, Any, str], None]] = {
    TIME: _time_from_json,
    MICRO_TIME: _time_from_json,
    QUANTITY: _quantity_from_json,
    RAW_EXTENSION: _raw_extension_from_json,
    FIELDS_V1: _fields_v1_from_json,
}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
