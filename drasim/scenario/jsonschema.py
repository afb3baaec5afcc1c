"""JSON Schema (draft 2020-12) generated from the scenario dataclasses, for editors.

The committed copy is ``drasim/scenario/scenario.schema.json``; regenerate it with
``python -m drasim.scenario.schema > drasim/scenario/scenario.schema.json`` (a test fails
when it is stale).
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

from drasim.scenario import typeinfo as ti
from drasim.scenario.common import API_VERSION
from drasim.scenario.registry import STEP_TYPES, Step
from drasim.scenario.schema import Scenario

SCHEMA_PATH = Path(__file__).with_name("scenario.schema.json")
SCHEMA_ID = "https://drasim.dev/schemas/scenario-v1alpha1.json"


class _Builder:
    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def type_schema(self, tp: Any) -> dict[str, Any]:  # noqa: PLR0911
        simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
        if tp in simple:
            return {"type": simple[tp]}
        if tp is Any:
            return {}
        if tp is Step:
            return {"$ref": "#/$defs/Step"}
        if ti.is_literal(tp):
            return {"enum": list(typing.get_args(tp))}
        if dataclasses.is_dataclass(tp):
            return self.ref(typing.cast(type, tp))
        origin = typing.get_origin(tp)
        if origin is list:
            (item,) = typing.get_args(tp)
            return {"type": "array", "items": self.type_schema(item)}
        if origin is dict:
            _, value = typing.get_args(tp)
            return {"type": "object", "additionalProperties": self.type_schema(value)}
        if ti.is_union(tp):
            options = [self.type_schema(arg) for arg in ti.union_args(tp)]
            if ti.is_optional(tp):
                options.append({"type": "null"})
            return options[0] if len(options) == 1 else {"anyOf": options}
        msg = f"no JSON Schema for {tp!r}"
        raise TypeError(msg)

    def ref(self, cls: type) -> dict[str, Any]:
        name = cls.__name__
        if name not in self.defs:
            self.defs[name] = {}  # placeholder against recursion
            self.defs[name] = self.object_schema(cls)
        return {"$ref": f"#/$defs/{name}"}

    def object_schema(self, cls: type) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for info in ti.fields_of(cls):
            prop = dict(self.type_schema(info.tp))
            prop["description"] = info.description
            if info.minimum is not None:
                prop["minimum"] = info.minimum
            if info.maximum is not None:
                prop["maximum"] = info.maximum
            if info.max_items is not None:
                prop["maxItems"] = info.max_items
            if not info.required and _jsonable(info.default):
                prop["default"] = info.default
            properties[info.key] = prop
            if info.required:
                required.append(info.key)
        schema: dict[str, Any] = {
            "type": "object",
            "description": " ".join((cls.__doc__ or "").split()),
            "properties": properties,
            "additionalProperties": False,
        }
        if required:
            schema["required"] = required
        return schema

    def step_schema(self) -> dict[str, Any]:
        variants = []
        for name, st in STEP_TYPES.items():
            body = self.ref(st.cls)
            forms: list[dict[str, Any]] = [body]
            if all(not info.required for info in ti.fields_of(st.cls)):
                forms.append({"type": "null"})
            if st.shorthand:
                info = next(i for i in ti.fields_of(st.cls) if i.attr == st.shorthand)
                forms.append(self.type_schema(info.tp))
            if st.mapping_field:
                info = next(i for i in ti.fields_of(st.cls) if i.attr == st.mapping_field)
                forms.append(self.type_schema(info.tp))
            value = forms[0] if len(forms) == 1 else {"anyOf": forms}
            variants.append(
                {
                    "type": "object",
                    "description": st.summary,
                    "properties": {name: value},
                    "required": [name],
                    "additionalProperties": False,
                }
            )
        return {"description": "A mapping with exactly one key: the step name.", "oneOf": variants}


def _jsonable(value: Any) -> bool:
    if value is dataclasses.MISSING or dataclasses.is_dataclass(value):
        return False
    return isinstance(value, str | int | float | bool | list | dict) or value is None


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of one scenario document."""
    builder = _Builder()
    root = builder.object_schema(Scenario)
    root["properties"]["apiVersion"] = {"const": API_VERSION, "description": "Always " + API_VERSION + "."}
    root["properties"]["kind"] = {"const": "Scenario", "description": "Always Scenario."}
    builder.defs["Step"] = builder.step_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "drasim Scenario",
        **root,
        "$defs": dict(sorted(builder.defs.items())),
    }
