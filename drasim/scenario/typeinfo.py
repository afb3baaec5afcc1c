"""Type introspection shared by the decoder, the JSON Schema generator and the docs.

Field types are resolved with :func:`typing.get_type_hints` (the modules use
``from __future__ import annotations``, so raw annotations are strings).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, Literal, Union

from drasim.scenario.registry import Step

NONE_TYPE = type(None)


def camel(name: str) -> str:
    """``snake_case`` -> ``camelCase``."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclasses.dataclass(frozen=True)
class FieldInfo:
    """One dataclass field as YAML sees it."""

    attr: str
    key: str
    tp: Any
    required: bool
    default: Any
    description: str
    minimum: float | None
    maximum: float | None
    max_items: int | None
    manifests: bool


@functools.cache
def fields_of(cls: type) -> tuple[FieldInfo, ...]:
    """The YAML-visible fields of a dataclass, in declaration order."""
    hints = typing.get_type_hints(cls)
    infos: list[FieldInfo] = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("internal"):
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        infos.append(
            FieldInfo(
                attr=f.name,
                key=f.metadata.get("yaml") or camel(f.name),
                tp=hints[f.name],
                required=required,
                default=default,
                description=f.metadata.get("description", ""),
                minimum=f.metadata.get("minimum"),
                maximum=f.metadata.get("maximum"),
                max_items=f.metadata.get("max_items"),
                manifests=bool(f.metadata.get("manifests")) or _is_manifest_list(hints[f.name]),
            )
        )
    return tuple(infos)


def _is_manifest_list(tp: Any) -> bool:
    return typing.get_origin(tp) is list and typing.get_args(tp) == (dict[str, Any],)


def is_union(tp: Any) -> bool:
    """``X | Y`` or ``Optional[X]``."""
    return typing.get_origin(tp) in (Union, types.UnionType)


def union_args(tp: Any) -> tuple[Any, ...]:
    """The alternatives of a union, ``None`` excluded."""
    return tuple(arg for arg in typing.get_args(tp) if arg is not NONE_TYPE)


def is_optional(tp: Any) -> bool:
    """Whether ``None`` is allowed."""
    return is_union(tp) and NONE_TYPE in typing.get_args(tp)


def is_literal(tp: Any) -> bool:
    """``Literal[...]``."""
    return typing.get_origin(tp) is Literal


def shape_of_type(tp: Any) -> str:
    """mapping, list, scalar, step or any."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return "any"
    if tp is Step:
        return "step"
    if dataclasses.is_dataclass(tp) or origin is dict:
        return "mapping"
    if origin is list:
        return "list"
    return "scalar"


def shape_of_value(value: Any) -> str:
    """mapping, list, null or scalar."""
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    if value is None:
        return "null"
    return "scalar"


_SCALAR_NAMES: dict[Any, tuple[str, str]] = {
    str: ("a string", "strings"),
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    bool: ("a boolean (true or false)", "booleans"),
}


def describe(tp: Any, *, plural: bool = False) -> str:  # noqa: PLR0911
    """A type in words: 'a list of strings', 'a mapping (PodClaim)', "one of 'a', 'b'"."""
    if tp in _SCALAR_NAMES:
        return _SCALAR_NAMES[tp][1 if plural else 0]
    if tp is Any:
        return "values" if plural else "any value"
    if tp is Step:
        return "steps" if plural else "a step (a mapping with one key, the step name)"
    if is_literal(tp):
        choices = ", ".join(repr(a) for a in typing.get_args(tp))
        return f"values among {choices}" if plural else f"one of {choices}"
    if dataclasses.is_dataclass(tp):
        name = getattr(tp, "__name__", "object")
        return f"{name} mappings" if plural else f"a mapping ({name})"
    origin = typing.get_origin(tp)
    if origin is list:
        (item,) = typing.get_args(tp)
        return "lists" if plural else f"a list of {describe(item, plural=True)}"
    if origin is dict:
        _, value = typing.get_args(tp)
        return "mappings" if plural else f"a mapping of names to {describe(value, plural=True)}"
    if is_union(tp):
        words = [describe(arg, plural=plural) for arg in union_args(tp)]
        if is_optional(tp):
            words.append("null")
        return " or ".join(words)
    return getattr(tp, "__name__", str(tp))


def describe_value(value: Any) -> str:  # noqa: PLR0911
    """A YAML value in words, for 'got ...'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__} ({value})"
