"""Scenario dataclasses back to plain YAML data, the inverse of the scenario loader's decoding."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from drasim.scenario.common import ErrorMatch
from drasim.scenario.registry import Step
from drasim.scenario.typeinfo import fields_of


def encode(value: Any) -> Any:
    """Scenario dataclasses → plain YAML data (camelCase keys, defaults left out)."""
    if isinstance(value, Step):
        return {value.name: encode(value.args)}
    if isinstance(value, ErrorMatch):
        return value.contains if not value.matches else {"matches": value.matches}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for info in fields_of(type(value)):
            item = getattr(value, info.attr)
            if info.default is not dataclasses.MISSING and item == info.default:
                continue
            out[info.key] = encode(item)
        return out
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value


def step_text(step: Step) -> str:
    """One line in YAML flow style: ``startPod: {name: pod-0, claims: [claim-0]}``."""
    args = encode(step.args)
    if not args:
        return step.name
    return f"{step.name}: {_flow(args)}"


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        plain = value and all(c.isalnum() or c in "-_./:=$() " for c in value) and ": " not in value
        return value if plain else json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value)
