"""``$(DRIVER)`` and ``$(NODE)`` in manifests, filled in when a scenario runs.

Scenario objects (and the claims the loader expands) use ``$(DRIVER)`` for the first
driver's name, so a library scenario written for the fake plugin also runs against a
real driver of another name; ``$(NODE)`` is the kubelet's node name. Unknown ``$(X)`` are
left alone, like Kubernetes does for container arguments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_VAR = re.compile(r"\$\(([A-Z_][A-Z0-9_]*)\)")


def expand_variables(value: Any, variables: Mapping[str, str]) -> Any:
    """A copy of ``value`` with ``$(NAME)`` replaced in every string (keys and values)."""
    if isinstance(value, str):
        return _VAR.sub(lambda m: variables.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {expand_variables(k, variables): expand_variables(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_variables(item, variables) for item in value]
    return value


def scenario_variables(*, driver: str, node: str) -> dict[str, str]:
    """The variables a runner provides."""
    return {"DRIVER": driver, "NODE": node}
