"""Go ``encoding/json`` byte rules and decoding semantics, as far as checkpoints need them.

PURE: no I/O. Writing: compact output, struct fields in declaration order (the
caller builds insertion-ordered dicts), map keys sorted by the caller, and Go's
default HTML-safe escaping of ``<``, ``>``, ``&``, U+2028 and U+2029. Reading: a
JSON document becomes nested :class:`JsonObject` (key/value pairs in document
order), lists, strings, :class:`JsonNumber` (the literal text), booleans and
``None``; :func:`struct_fields` then matches keys to Go struct fields the way
``json.Unmarshal`` does (exact name first, then case-insensitive; unknown keys
ignored; the last duplicate wins). Every problem becomes a
:class:`~drasim.errors.CorruptCheckpointError` whose message names the JSON path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from drasim.errors import CorruptCheckpointError

__all__ = [
    "JsonNumber",
    "JsonObject",
    "as_object",
    "as_string",
    "as_string_list",
    "as_uint",
    "escaped_marshalled",
    "fold_name",
    "go_marshal",
    "go_string",
    "key_path",
    "parse",
    "struct_fields",
]

_HTML_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_HTML_RE = re.compile("[<>&\u2028\u2029]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")
_UINT_RE = re.compile(r"(?:0|[1-9][0-9]*)\Z")
# One encoder for every call: json.dumps with options builds a new JSONEncoder each time,
# which cost more than encoding a checkpoint entry.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# And, where CPython's C accelerator is there, its iterator built once with the same options
# (JSONEncoder.encode builds a new one per call). It does not look for reference cycles: the
# values written here are trees the codec builds.
_C_ENCODE = (
    None
    if c_make_encoder is None
    else c_make_encoder(None, _ENCODER.default, encode_basestring, None, ":", ",", False, False, True)
)


def go_string(value: str) -> str:
    """``value`` as a Go string holds it: lone surrogates (invalid UTF-8 in Go) become U+FFFD."""
    if value.isascii():  # the common case, and O(1) in CPython: no surrogate can be in it
        return value
    return _SURROGATE_RE.sub("\ufffd", value)


def go_marshal(value: Any) -> str:
    """Compact JSON exactly as Go's ``json.Marshal`` writes ``value``.

    Dicts are written in insertion order (sort map keys before calling); strings
    get Go's escaping, including the HTML-safe escapes Go applies by default.
    """
    if _C_ENCODE is not None and type(value) is not str:
        text = "".join(_C_ENCODE(value, 0))
    else:
        text = _ENCODER.encode(value)
    # A few C-speed scans beat the regex (the last two only where a non-ASCII character is).
    if (
        "<" not in text
        and ">" not in text
        and "&" not in text
        and (text.isascii() or ("\u2028" not in text and "\u2029" not in text))
    ):
        return text
    return _HTML_RE.sub(lambda m: _HTML_ESCAPES[m.group(0)], text)


def escaped_marshalled(text: str) -> str:
    """``go_marshal(text)[1:-1]`` for a ``text`` that :func:`go_marshal` wrote: JSON nested in a string.

    When ``text`` holds no backslash, none of its characters needs an escape but ``"`` (a JSON
    text from :func:`go_marshal` has no control character, and its ``<``, ``>``, ``&``,
    U+2028 and U+2029 are already ``\\u`` escapes, which hold a backslash): a plain replace.
    """
    if "\\" not in text:
        return text.replace('"', '\\"')
    return go_marshal(text)[1:-1]


class JsonObject(list[tuple[str, Any]]):
    """A decoded JSON object: its key/value pairs in document order, duplicates kept."""


class JsonNumber:
    """A decoded JSON number, kept as its literal text so that Go's typing rules apply."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal

    def __repr__(self) -> str:
        return f"JsonNumber({self.literal!r})"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


_DECODER = json.JSONDecoder(
    object_pairs_hook=JsonObject,
    parse_int=JsonNumber,
    parse_float=JsonNumber,
    parse_constant=_reject_constant,
)


def _position(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {column} (char {pos})"


def parse(text: str, where: str) -> Any:
    """Parse one JSON document; ``where`` names it in errors (e.g. ``"file"``, ``"Data"``).

    Strings come back as Go would hold them (see :func:`go_string`).
    """
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as err:
        if not text.strip() or err.pos >= len(text.rstrip()):
            reason = "unexpected end of JSON input"
        else:
            reason = err.msg
        raise CorruptCheckpointError(
            f"invalid JSON in {where} at {_position(text, err.pos)}: {reason}"
        ) from None
    except RecursionError:
        raise CorruptCheckpointError(f"invalid JSON in {where}: nested too deeply") from None
    except ValueError as err:
        raise CorruptCheckpointError(f"invalid JSON in {where}: {err}") from None
    if not _SURROGATE_ESCAPE_RE.search(text) and not _SURROGATE_RE.search(text):
        return value
    try:
        return _sanitize(value)
    except RecursionError:
        raise CorruptCheckpointError(f"invalid JSON in {where}: nested too deeply") from None


def _sanitize(value: Any) -> Any:
    """Replace lone surrogates in every string and key, as Go's decoder does."""
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, JsonObject):
        return JsonObject((go_string(k), _sanitize(v)) for k, v in value)
    if isinstance(value, list):
        return [_sanitize(v) for v in value]
    return value


def describe(value: Any) -> str:
    """How an error message names a JSON value's kind (with a short excerpt)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, JsonNumber):
        return f"number {value.literal[:40]}"
    if isinstance(value, str):
        excerpt = value if len(value) <= 40 else value[:37] + "..."
        return f"string {json.dumps(excerpt, ensure_ascii=False)}"
    if isinstance(value, JsonObject):
        return "object"
    return "array"


def _type_error(path: str, expected: str, value: Any) -> CorruptCheckpointError:
    return CorruptCheckpointError(f"{path}: expected {expected}, got {describe(value)}")


_FOLD_SPECIAL = {"\u212a": "k", "\u017f": "s"}  # KELVIN SIGN, LATIN SMALL LETTER LONG S


def fold_name(name: str) -> str:
    """Go's case-insensitive key folding, for matching against ASCII field names.

    Go compares with Unicode simple folding; for ASCII field names that means ASCII
    case plus the two non-ASCII runes that fold to ASCII letters.
    """
    return "".join(_FOLD_SPECIAL.get(c, c.lower() if c.isascii() else c) for c in name)


def struct_fields(obj: JsonObject, names: Iterable[str]) -> dict[str, Any]:
    """Match an object's keys to Go struct fields ``names``; returns field name -> value.

    Mirrors ``encoding/json`` (Go 1.21+): an exact match wins, otherwise a
    case-insensitive one; keys matching no field are ignored; for repeated keys the
    last one wins. Fields not present are absent from the result.
    """
    exact = set(names)
    folded = {fold_name(n): n for n in exact}
    result: dict[str, Any] = {}
    for key, value in obj:
        name = key if key in exact else folded.get(fold_name(key))
        if name is not None:
            result[name] = value
    return result


def as_object(value: Any, path: str, *, expected: str = "an object or null") -> JsonObject | None:
    """An object, or ``None`` for null (Go leaves a nil map or zero struct)."""
    if value is None or isinstance(value, JsonObject):
        return value
    raise _type_error(path, expected, value)


def as_list(value: Any, path: str) -> list[Any] | None:
    """An array, or ``None`` for null (a nil Go slice)."""
    if value is None or (isinstance(value, list) and not isinstance(value, JsonObject)):
        return value
    raise _type_error(path, "an array or null", value)


def as_string(value: Any, path: str) -> str:
    """A string; null decodes to Go's zero value ``""``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise _type_error(path, "a string", value)


def as_optional_string(value: Any, path: str) -> str | None:
    """A string or null (a Go ``*string``-like pointer)."""
    if value is None or isinstance(value, str):
        return value
    raise _type_error(path, "a string or null", value)


def as_string_list(value: Any, path: str) -> tuple[str, ...] | None:
    """An array of strings, or ``None`` for null; null elements become ``""`` as in Go."""
    items = as_list(value, path)
    if items is None:
        return None
    return tuple(as_string(item, f"{path}[{i}]") for i, item in enumerate(items))


def as_uint(value: Any, bits: int, path: str) -> int:
    """An unsigned integer of ``bits`` bits; null decodes to 0. Rejects 1.0, -1, 1e3 as Go does."""
    if value is None:
        return 0
    if isinstance(value, JsonNumber) and _UINT_RE.match(value.literal):
        number = int(value.literal) if len(value.literal) <= 40 else 1 << 200
        if number < 1 << bits:
            return number
        raise CorruptCheckpointError(f"{path}: number {value.literal[:40]} overflows uint{bits}")
    raise _type_error(path, f"an unsigned {bits}-bit integer", value)


def key_path(path: str, key: str) -> str:
    """The path of a map member, e.g. ``PodUIDs["uid-1"]``."""
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def elements(items: Sequence[Any], path: str) -> Iterable[tuple[str, Any]]:
    """``(path[i], item)`` for each item of a decoded array."""
    for index, item in enumerate(items):
        yield f"{path}[{index}]", item
