"""A small path-aware decoder from positioned YAML data into the schema dataclasses.

It never stops at the first mistake: every problem is recorded with its file, line,
column and YAML path, and decoding carries on with the rest. A value that could not be
decoded becomes :data:`INVALID`, so that the enclosing dataclass is not built.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import math
import typing
from pathlib import Path
from typing import Any

import yaml

from drasim.fsutil import read_regular_file
from drasim.limits import MAX_DECODED_VALUES, MAX_FILE_BYTES
from drasim.scenario import typeinfo as ti
from drasim.scenario.registry import STEP_TYPES, Step
from drasim.scenario.yamlsrc import Loc, YList, YMap, parse_documents, yaml_error_loc


class _Invalid:
    def __repr__(self) -> str:
        return "INVALID"


INVALID: Any = _Invalid()
MAX_NODES = MAX_DECODED_VALUES


@dataclasses.dataclass(frozen=True, order=True)
class Problem:
    """One mistake: where, at which YAML path, and what was expected."""

    loc: Loc
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.loc}: {self.path}: {self.message}" if self.path else f"{self.loc}: {self.message}"


def suggest(word: str, choices: typing.Iterable[str]) -> str:
    """`` Did you mean 'x'?`` or an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def number(value: float) -> str:
    """A number as a message shows it: ``86400`` not ``86400.0``; a huge integer by its size."""
    if isinstance(value, int):
        if value.bit_length() <= 96:
            return str(value)
        try:
            return f"an integer of {len(str(abs(value)))} digits"
        except ValueError:  # beyond Python's int-to-text limit
            return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}"


def _loc_of(value: Any, fallback: Loc) -> Loc:
    return getattr(value, "loc", fallback)


class Decoder:
    """Decodes one file's documents; ``problems`` collects every mistake.

    ``locations`` maps ``id(decoded object)`` to where it was written and its path, and
    ``field_locations`` maps ``(id(object), attribute)`` likewise, for the semantic checks.
    """

    def __init__(self, file: str, base_dir: Path | None = None) -> None:
        self.file = file
        self.base_dir = base_dir
        self.problems: list[Problem] = []
        self.locations: dict[int, tuple[Loc, str]] = {}
        self.field_locations: dict[tuple[int, str], tuple[Loc, str]] = {}
        self._nodes = 0
        self._too_big = False

    def problem(self, loc: Loc, path: str, message: str) -> None:
        """Record a mistake."""
        self.problems.append(Problem(loc, path, message))

    def type_error(self, tp: Any, value: Any, loc: Loc, path: str) -> Any:
        """Record 'expected X, got Y' and return INVALID."""
        self.problem(loc, path, f"expected {ti.describe(tp)}, got {ti.describe_value(value)}")
        return INVALID

    # -- dispatch -------------------------------------------------------------------------

    def _spend(self, loc: Loc, path: str) -> bool:
        """Count one decoded value; False (and one problem for the file) once the budget is spent."""
        self._nodes += 1
        if self._nodes <= MAX_NODES:
            return True
        if not self._too_big:
            self._too_big = True
            self.problem(
                loc,
                path,
                f"the file is too large: more than {MAX_NODES} values once YAML aliases are expanded",
            )
        return False

    def decode(self, value: Any, tp: Any, path: str, loc: Loc) -> Any:  # noqa: PLR0911
        """Decode ``value`` as ``tp``; INVALID (with problems recorded) on mismatch."""
        if not self._spend(_loc_of(value, loc), path):
            return INVALID
        if tp is Any:
            return self.plain(value, path, loc)
        if tp is Step:
            return self.decode_step(value, path, loc)
        if ti.is_union(tp):
            return self._decode_union(value, tp, path, loc)
        if dataclasses.is_dataclass(tp):
            return self.decode_dataclass(value, typing.cast(type, tp), path, loc)
        origin = typing.get_origin(tp)
        if origin is list:
            return self._decode_list(value, tp, path, loc)
        if origin is dict:
            return self._decode_dict(value, tp, path, loc)
        if ti.is_literal(tp):
            return self._decode_literal(value, tp, path, loc)
        return self._decode_scalar(value, tp, path, loc)

    def _decode_scalar(self, value: Any, tp: Any, path: str, loc: Loc) -> Any:
        if tp is bool:
            ok = isinstance(value, bool)
        elif tp is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif tp is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if ok and not (isinstance(value, float) and math.isfinite(value)):
                shown = number(value) if isinstance(value, int) else str(value)
                try:
                    value = float(value)
                except OverflowError:
                    value = math.inf
                if not math.isfinite(value):
                    self.problem(loc, path, f"expected a finite number, got {shown}")
                    return INVALID
        else:
            ok = isinstance(value, tp)
        return value if ok else self.type_error(tp, value, loc, path)

    def _decode_literal(self, value: Any, tp: Any, path: str, loc: Loc) -> Any:
        choices = typing.get_args(tp)
        if value in choices and type(value) is type(choices[0]):
            return value
        if not isinstance(value, str):
            return self.type_error(tp, value, loc, path)
        valid = ", ".join(str(c) for c in choices)
        self.problem(
            loc, path, f"{value!r} is not a valid value. Valid values: {valid}.{suggest(value, choices)}"
        )
        return INVALID

    def _decode_union(self, value: Any, tp: Any, path: str, loc: Loc) -> Any:
        if value is None and ti.is_optional(tp):
            return None
        shape = ti.shape_of_value(value)
        options = [a for a in ti.union_args(tp) if ti.shape_of_type(a) in (shape, "any")]
        if shape == "mapping":
            options += [a for a in ti.union_args(tp) if a is Step]
        if not options:
            return self.type_error(tp, value, loc, path)
        if len(options) == 1:
            return self.decode(value, options[0], path, loc)
        for option in options:
            trial = Decoder(self.file, self.base_dir)
            trial._nodes = self._nodes  # the trial spends this file's budget too
            trial.decode(value, option, path, loc)
            self._nodes = trial._nodes
            if not trial.problems:
                return self.decode(value, option, path, loc)
        if not self._spend(loc, path):
            return INVALID
        return self.type_error(tp, value, loc, path)

    def _decode_list(self, value: Any, tp: Any, path: str, loc: Loc) -> Any:
        if not isinstance(value, list):
            return self.type_error(tp, value, loc, path)
        (item_tp,) = typing.get_args(tp)
        locs = getattr(value, "item_locs", None) or [loc] * len(value)
        items = [self.decode(item, item_tp, f"{path}[{i}]", locs[i]) for i, item in enumerate(value)]
        return INVALID if any(item is INVALID for item in items) else items

    def _decode_dict(self, value: Any, tp: Any, path: str, loc: Loc) -> Any:
        if not isinstance(value, dict):
            return self.type_error(tp, value, loc, path)
        _, value_tp = typing.get_args(tp)
        key_locs = getattr(value, "key_locs", {})
        value_locs = getattr(value, "value_locs", {})
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                self.problem(
                    key_locs.get(key, loc), path, f"keys must be strings, got {ti.describe_value(key)}"
                )
                out[str(key)] = INVALID
                continue
            out[key] = self.decode(item, value_tp, f"{path}.{key}", value_locs.get(key, loc))
        return INVALID if any(v is INVALID for v in out.values()) else out

    # -- dataclasses ----------------------------------------------------------------------

    def decode_dataclass(self, value: Any, cls: type, path: str, loc: Loc) -> Any:  # noqa: C901 - one branch per YAML shape a field may take
        """Decode a mapping into ``cls``: unknown fields, missing fields and field types are checked."""
        if not isinstance(value, dict):
            return self.type_error(cls, value, loc, path)
        loc = _loc_of(value, loc)
        infos = ti.fields_of(cls)
        by_key = {info.key: info for info in infos}
        key_locs = getattr(value, "key_locs", {})
        value_locs = getattr(value, "value_locs", {})
        ok = True
        for key in value:
            if not isinstance(key, str):
                self.problem(
                    key_locs.get(key, loc), path, f"field names must be strings, got {ti.describe_value(key)}"
                )
                ok = False
            elif key not in by_key:
                valid = ", ".join(by_key) or "(none)"
                self.problem(
                    key_locs.get(key, loc),
                    path,
                    f"unknown field {key!r}. Valid fields: {valid}.{suggest(key, by_key)}",
                )
                ok = False
        kwargs: dict[str, Any] = {}
        field_locs: dict[str, tuple[Loc, str]] = {}
        for info in infos:
            if info.key not in value:
                if info.required:
                    self.problem(loc, path, f"missing required field {info.key!r} ({ti.describe(info.tp)})")
                    ok = False
                continue
            item_path = f"{path}.{info.key}" if path else info.key
            item_loc = value_locs.get(info.key, loc)
            decoded = self._decode_field(info, value[info.key], item_path, item_loc)
            if decoded is INVALID:
                ok = False
                continue
            kwargs[info.attr] = decoded
            field_locs[info.attr] = (item_loc, item_path)
        if not ok:
            return INVALID
        obj = cls(**kwargs)
        self.locations[id(obj)] = (loc, path)
        for attr, where in field_locs.items():
            self.field_locations[(id(obj), attr)] = where
        return obj

    def _decode_field(self, info: ti.FieldInfo, raw: Any, path: str, loc: Loc) -> Any:
        """One field's value: manifests inlined, list length and numeric range checked."""
        if info.manifests:
            raw = self.expand_manifest_files(raw, path, loc)
        if info.max_items is not None and isinstance(raw, list) and len(raw) > info.max_items:
            self.problem(loc, path, f"at most {info.max_items} items are allowed, got {len(raw)}")
            return INVALID
        decoded = self.decode(raw, info.tp, path, loc)
        if decoded is INVALID or not self._check_range(info, decoded, loc, path):
            return INVALID
        return decoded

    def _check_range(self, info: ti.FieldInfo, value: Any, loc: Loc, path: str) -> bool:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return True
        if info.minimum is not None and value < info.minimum:
            self.problem(loc, path, f"must be at least {number(info.minimum)}, got {number(value)}")
            return False
        if info.maximum is not None and value > info.maximum:
            self.problem(loc, path, f"must be at most {number(info.maximum)}, got {number(value)}")
            return False
        return True

    # -- steps ----------------------------------------------------------------------------

    def decode_step(self, value: Any, path: str, loc: Loc) -> Any:
        """A one-key mapping ``{stepName: arguments}`` -> :class:`Step`."""
        if not isinstance(value, dict) or len(value) != 1:
            if isinstance(value, dict):
                keys = ", ".join(str(k) for k in value) or "none"
                got = f"a mapping with {len(value)} keys ({keys})"
            else:
                got = ti.describe_value(value)
            self.problem(
                _loc_of(value, loc),
                path,
                f"a step is a mapping with exactly one key, the step name; got {got}",
            )
            return INVALID
        ((name, body),) = value.items()
        key_loc = getattr(value, "key_locs", {}).get(name, loc)
        if not isinstance(name, str) or name not in STEP_TYPES:
            ordered = sorted(STEP_TYPES, key=lambda n: STEP_TYPES[n].kind != "action")
            hint = suggest(str(name), STEP_TYPES) or f" Valid steps: {', '.join(ordered)}."
            self.problem(key_loc, path, f"unknown step {name!r}.{hint}")
            return INVALID
        body_loc = getattr(value, "value_locs", {}).get(name, key_loc)
        args = self._decode_step_body(STEP_TYPES[name], body, f"{path}.{name}", body_loc)
        if args is INVALID:
            return INVALID
        step = Step(name=name, args=args, file=self.file, line=key_loc.line, column=key_loc.column)
        self.locations[id(step)] = (key_loc, path)
        return step

    def _decode_step_body(self, st: Any, body: Any, path: str, loc: Loc) -> Any:
        if body is None:
            body = _synthetic({}, loc)
        elif st.mapping_field and isinstance(body, dict):
            body = _synthetic({st.mapping_field: body}, loc)
        elif st.shorthand and not isinstance(body, dict):
            info = next(i for i in ti.fields_of(st.cls) if i.attr == st.shorthand)
            if ti.shape_of_type(info.tp) not in (ti.shape_of_value(body), "any"):
                self.problem(
                    loc,
                    path,
                    f"expected a mapping ({st.cls.__name__}) or, as shorthand for {info.key!r}, "
                    f"{ti.describe(info.tp)}; got {ti.describe_value(body)}",
                )
                return INVALID
            body = _synthetic({info.key: body}, loc)
        return self.decode_dataclass(body, st.cls, path, loc)

    # -- free-form values -----------------------------------------------------------------

    def plain(self, value: Any, path: str, loc: Loc) -> Any:
        """Free-form data as plain JSON-like values (dates become strings); rejects recursive aliases."""
        try:
            return self._plain(value, set(), path, loc)
        except _TooBigError:
            return INVALID

    def _plain(self, value: Any, seen: set[int], path: str, loc: Loc) -> Any:
        if not self._spend(_loc_of(value, loc), path):
            raise _TooBigError
        if isinstance(value, dict | list):
            if id(value) in seen:
                self.problem(_loc_of(value, loc), path, "recursive YAML alias (an anchor used inside itself)")
                return INVALID
            seen = seen | {id(value)}
            if isinstance(value, dict):
                out = {self._key(k): self._plain(v, seen, f"{path}.{k}", loc) for k, v in value.items()}
                return INVALID if any(v is INVALID for v in out.values()) else out
            items = [self._plain(v, seen, f"{path}[{i}]", loc) for i, v in enumerate(value)]
            return INVALID if any(v is INVALID for v in items) else items
        if isinstance(value, datetime.date):
            return value.isoformat()
        if isinstance(value, bytes):
            return value.decode("latin-1")
        return value

    @staticmethod
    def _key(key: Any) -> Any:
        return key.isoformat() if isinstance(key, datetime.date) else key

    # -- {file: path} in manifest lists ---------------------------------------------------

    def expand_manifest_files(self, raw: Any, path: str, loc: Loc) -> Any:
        """Replace ``{file: path}`` items by the documents of that file; check each manifest."""
        if not isinstance(raw, list):
            return raw
        out = YList()
        out.loc = _loc_of(raw, loc)
        out.item_locs = []
        item_locs = getattr(raw, "item_locs", None) or [loc] * len(raw)
        for i, item in enumerate(raw):
            item_path = f"{path}[{i}]"
            if isinstance(item, dict) and list(item) == ["file"]:
                for doc, doc_loc in self._read_manifest_file(item, item_path, item_locs[i]):
                    out.append(doc)
                    out.item_locs.append(doc_loc)
                continue
            self.check_manifest(item, item_path, item_locs[i])
            out.append(item)
            out.item_locs.append(item_locs[i])
        return out

    def _read_manifest_file(self, item: Any, path: str, loc: Loc) -> list[tuple[Any, Loc]]:
        ref = item["file"]
        ref_loc = getattr(item, "value_locs", {}).get("file", loc)
        if not isinstance(ref, str) or not ref:
            self.problem(
                ref_loc, f"{path}.file", f"expected a file path (a string), got {ti.describe_value(ref)}"
            )
            return []
        target = (self.base_dir or Path.cwd()) / ref
        try:
            text = read_regular_file(target, MAX_FILE_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            self.problem(
                ref_loc, f"{path}.file", f"cannot read {ref!r}: {getattr(err, 'strerror', None) or err}"
            )
            return []
        try:
            documents, duplicates = parse_documents(text, str(target))
        except yaml.YAMLError as err:
            where, message = yaml_error_loc(err, str(target))
            self.problem(where, "", message)
            return []
        for dup_loc, key in duplicates:
            self.problem(dup_loc, "", f"duplicate key {key!r}")
        result = [(d.data, d.loc) for d in documents if d.data is not None]
        for n, (data, data_loc) in enumerate(result):
            self.check_manifest(data, f"{ref}[{n}]", data_loc)
        return result

    def check_manifest(self, manifest: Any, path: str, loc: Loc) -> None:
        """A manifest needs string apiVersion and kind, and metadata.name (or generateName)."""
        if not isinstance(manifest, dict):
            self.problem(
                _loc_of(manifest, loc),
                path,
                f"expected a Kubernetes manifest (a mapping), got {ti.describe_value(manifest)}",
            )
            return
        loc = _loc_of(manifest, loc)
        for key in ("apiVersion", "kind"):
            if not isinstance(manifest.get(key), str) or not manifest.get(key):
                self.problem(loc, path, f"a manifest needs {key!r} (a string)")
        meta = manifest.get("metadata")
        if not isinstance(meta, dict) or not (
            isinstance(meta.get("name"), str) or isinstance(meta.get("generateName"), str)
        ):
            self.problem(loc, path, "a manifest needs 'metadata.name' (a string)")


class _TooBigError(Exception):
    pass


def _synthetic(data: dict[str, Any], loc: Loc) -> YMap:
    out = YMap(data)
    out.loc = loc
    out.key_locs = dict.fromkeys(data, loc)
    out.value_locs = {k: _loc_of(v, loc) for k, v in data.items()}
    return out
