"""The generated part of docs/scenarios.md: one table per step and per nested type.

``python -m drasim.scenario.docs --write`` rewrites the text between the markers in
docs/scenarios.md; a test fails when it is stale.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from pathlib import Path
from typing import Any

from drasim.scenario import typeinfo as ti
from drasim.scenario.common import CRASH_POINT_MEANING
from drasim.scenario.decoder import number
from drasim.scenario.registry import STEP_TYPES, Step
from drasim.scenario.schema import Scenario

BEGIN = "<!-- BEGIN GENERATED REFERENCE (python -m drasim.scenario.docs --write) -->"
END = "<!-- END GENERATED REFERENCE -->"
DOC_PATH = Path(__file__).resolve().parent.parent.parent / "docs" / "scenarios.md"


def _type_words(tp: Any) -> str:  # noqa: PLR0911
    if ti.is_literal(tp):
        return " \\| ".join(f"`{a}`" for a in typing.get_args(tp))
    if tp is Step:
        return "step"
    if dataclasses.is_dataclass(tp):
        name = getattr(tp, "__name__", "object")
        return f"[{name}](#{name.lower()})"
    origin = typing.get_origin(tp)
    if origin is list:
        return f"list of {_type_words(typing.get_args(tp)[0])}"
    if origin is dict:
        return f"map of {_type_words(typing.get_args(tp)[1])}"
    if ti.is_union(tp):
        words = [_type_words(a) for a in ti.union_args(tp)]
        return " or ".join(words)
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(tp, "any")


def _default(info: ti.FieldInfo) -> str:
    if info.required:
        return "**required**"
    value = info.default
    if value is None:
        return ""
    if dataclasses.is_dataclass(value):
        return "(defaults)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`" if value not in ("", [], {}) else ""


def _limits(info: ti.FieldInfo) -> str:
    """`` *Range: 0 to 86400.*`` / `` *At most 64 items.*`` from the field's declared bounds."""
    words = []
    low, high = info.minimum, info.maximum
    if high is not None:
        words.append(
            f"Range: {number(low)} to {number(high)}." if low is not None else f"At most {number(high)}."
        )
    elif low is not None:
        words.append(f"At least {number(low)}.")
    if info.max_items is not None:
        words.append(f"At most {info.max_items} items.")
    return f" *{' '.join(words)}*" if words else ""


def _table(cls: type) -> list[str]:
    infos = ti.fields_of(cls)
    if not infos:
        return ["No fields: write `{}` (or nothing)."]
    lines = ["| Field | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for info in infos:
        desc = (info.description + _limits(info)).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{info.key}` | {_type_words(info.tp)} | {_default(info)} | {desc} |")
    return lines


def _nested_types() -> list[type]:
    seen: dict[str, type] = {}

    def visit(tp: Any) -> None:
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            if tp.__name__ in seen:
                return
            seen[tp.__name__] = tp
            for info in ti.fields_of(tp):
                visit(info.tp)
        for arg in typing.get_args(tp):
            visit(arg)

    visit(Scenario)
    for st in STEP_TYPES.values():
        for info in ti.fields_of(st.cls):
            visit(info.tp)
    step_classes = {st.cls for st in STEP_TYPES.values()}
    return [cls for name, cls in sorted(seen.items()) if cls not in step_classes]


def render_reference() -> str:
    """The generated Markdown (without the markers)."""
    out: list[str] = ["## Step reference", ""]
    for kind, title in (("action", "Actions"), ("expectation", "Expectations")):
        out += [f"### {title}", ""]
        for name, st in STEP_TYPES.items():
            if st.kind != kind:
                continue
            out += [f"#### `{name}`", "", " ".join((st.cls.__doc__ or "").split()), ""]
            if st.shorthand:
                key = next(i.key for i in ti.fields_of(st.cls) if i.attr == st.shorthand)
                out += [f"Shorthand: a value that is not a mapping fills `{key}`.", ""]
            if st.mapping_field:
                out += ["The whole mapping is the value of its only field.", ""]
            out += [*_table(st.cls), ""]
    out += ["## Crash points (`restartKubelet.crashAt`)", ""]
    out += ["| Point | State when the kubelet dies |", "| --- | --- |"]
    out += [f"| `{point}` | {meaning} |" for point, meaning in CRASH_POINT_MEANING.items()]
    out += ["", "## Types", ""]
    for cls in _nested_types():
        out += [f"### {cls.__name__}", "", " ".join((cls.__doc__ or "").split()), "", *_table(cls), ""]
    return "\n".join(out).rstrip() + "\n"


def splice(document: str) -> str:
    """``document`` with the generated part replaced."""
    start, end = document.index(BEGIN) + len(BEGIN), document.index(END)
    return document[:start] + "\n\n" + render_reference() + "\n" + document[end:]


def main(argv: list[str]) -> int:
    """``--write`` updates docs/scenarios.md; otherwise print the generated part."""
    if "--write" in argv:
        DOC_PATH.write_text(splice(DOC_PATH.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        sys.stdout.write(render_reference())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
