"""Decode plain dicts (from YAML or JSON) into the fake driver's config dataclasses.

Keys may be camelCase (the scenario style) or snake_case (the Python style). Every
problem raises :class:`drasim.errors.ConfigError` naming the path of the bad field
and what was expected, with a suggestion for misspelt keys.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, Union

from drasim.errors import ConfigError

T = TypeVar("T")

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")

DECODERS: dict[type, Callable[[Any, str], Any]] = {}
"""Types decoded by their own function (``decoder(raw, path)``), e.g. fault rules, whose keys
in a behaviour file are not their field names (:mod:`fake_plugins.behaviour` registers it)."""


def snake(key: str) -> str:
    """``timeoutSeconds`` → ``timeout_seconds``; snake_case keys pass unchanged."""
    return _CAMEL.sub("_", key).lower()


def camel(name: str) -> str:
    """``timeout_seconds`` → ``timeoutSeconds``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def decode(cls: type[T], data: Any, where: str = "") -> T:
    """Build ``cls`` (a dataclass) from a mapping, checking every key and value type."""
    if isinstance(data, cls):
        return data
    hints = typing.get_type_hints(cls)
    fields = {f.name: hints[f.name] for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**decode_fields(fields, data, where))


def decode_fields(fields: Mapping[str, Any], data: Any, where: str = "") -> dict[str, Any]:
    """The values of a mapping whose keys (camelCase or snake_case) are ``fields`` (snake_case
    name -> type), by snake_case name, each checked against its type."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where or '<root>'}: expected a mapping, got {_kind(data)}")
    values: dict[str, Any] = {}
    for key, raw in data.items():
        name = snake(str(key))
        path = f"{where}.{key}" if where else str(key)
        if name not in fields:
            valid = sorted(camel(n) for n in fields)
            close = difflib.get_close_matches(camel(name), valid, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"{path}: unknown field.{hint} Valid fields: {', '.join(valid)}.")
        values[name] = _value(fields[name], raw, path)
    return values


def _value(tp: Any, raw: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if raw is None and type(None) in args:
            return None
        return _value(_member(args, raw), raw, path)
    if origin is list:
        if not isinstance(raw, list):
            raise ConfigError(f"{path}: expected a list, got {_kind(raw)}")
        (item,) = typing.get_args(tp)
        return [_value(item, v, f"{path}[{i}]") for i, v in enumerate(raw)]
    if origin is dict:
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: expected a mapping, got {_kind(raw)}")
        _, item = typing.get_args(tp)
        return {str(k): _value(item, v, f"{path}.{k}") for k, v in raw.items()}
    if tp in DECODERS or dataclasses.is_dataclass(tp):
        custom = DECODERS.get(tp)
        return custom(raw, path) if custom else decode(typing.cast(type[Any], tp), raw, path)
    return _scalar(tp, raw, path)


def _member(args: tuple[Any, ...], raw: Any) -> Any:
    """The union member a value decodes as (``int | list[str]``: a list goes to the list)."""
    members = [a for a in args if a is not type(None)]
    lists = [a for a in members if typing.get_origin(a) is list]
    if isinstance(raw, list) and lists:
        return lists[0]
    return ([a for a in members if typing.get_origin(a) is not list] or members)[0]


def _scalar(tp: Any, raw: Any, path: str) -> Any:
    if tp is Any:
        return raw
    if tp is bool:
        if not isinstance(raw, bool):
            raise ConfigError(f"{path}: expected true or false, got {_kind(raw)}")
        return raw
    if tp is int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise ConfigError(f"{path}: expected an integer, got {_kind(raw)}")
        return raw
    if tp is float:
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise ConfigError(f"{path}: expected a number of seconds, got {_kind(raw)}")
        return float(raw)
    if tp is str:
        if not isinstance(raw, str):
            raise ConfigError(f"{path}: expected a string, got {_kind(raw)}")
        return raw
    raise ConfigError(f"{path}: unsupported field type {tp!r}")  # pragma: no cover - programming error


def _kind(raw: Any) -> str:
    if raw is None:
        return "null"
    return f"{type(raw).__name__} {raw!r}"
