"""How a scenario's names become a real cluster's: run prefix, renamed classes, kubeconfig copies.

Used by the kubeconfig backend (:class:`drasim.runner.backends.KubeconfigBackend`).
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drasim.errors import ConfigError
from drasim.scenario.registry import walk_steps

if TYPE_CHECKING:
    from drasim.scenario.schema import Scenario

RUN_LABEL = "drasim.dev/run"
"""Label on every object the kubeconfig backend creates (``kubectl delete ns,node -l drasim.dev/run``)."""
MANAGED_BY = {"app.kubernetes.io/managed-by": "drasim"}
# The kinds a scenario may define that are not namespaced (everything else is).
CLUSTER_SCOPED = frozenset({"Node", "Namespace", "ResourceSlice", "DeviceClass"})
_NOT_DNS = re.compile(r"[^a-z0-9-]+")


_FILE_KEYS = ("certificate-authority", "client-certificate", "client-key", "tokenFile")


def with_current_context(source: Path, context: str, target: Path) -> Path:
    """Write ``source`` to ``target`` (mode 0600) with ``current-context: context``."""
    import yaml

    from drasim.fsutil import atomic_write_text

    try:
        data = yaml.safe_load(source.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"cannot read kubeconfig {source}: {err}") from None
    if not isinstance(data, dict) or context not in [c.get("name") for c in data.get("contexts") or []]:
        raise ConfigError(f"kubeconfig {source} has no context {context!r}")
    data["current-context"] = context
    for section, key in (("clusters", "cluster"), ("users", "user")):
        for entry in data.get(section) or []:
            body = entry.get(key) if isinstance(entry, dict) else None
            if not isinstance(body, dict):
                continue
            for name in _FILE_KEYS:
                value = body.get(name)
                if isinstance(value, str) and value and not os.path.isabs(value):
                    body[name] = str(source.parent.resolve() / value)
    return atomic_write_text(target, yaml.safe_dump(data, sort_keys=False))


def run_prefix(scenario_name: str) -> str:
    """``drasim-<scenario>-<5 random>``: a DNS label (at most 63 characters), unique per run."""
    slug = _NOT_DNS.sub("-", scenario_name.lower()).strip("-")[:40].rstrip("-")
    suffix = secrets.token_hex(3)[:5]
    return f"drasim-{slug}-{suffix}" if slug else f"drasim-{suffix}"


def defined_names(scenario: Scenario, kind: str) -> set[str]:
    """Names of the objects of ``kind`` the scenario itself defines (objects, apply and create steps)."""
    names: set[str] = set()
    manifests: list[Any] = list(scenario.spec.objects)
    for step in walk_steps(scenario.spec.steps):
        manifests += list(getattr(step.args, "objects", None) or [])
    for obj in manifests:
        if isinstance(obj, dict) and obj.get("kind") == kind:
            name = (obj.get("metadata") or {}).get("name")
            if name:
                names.add(str(name))
    return names


def rename_classes(value: Any, names: Mapping[str, str]) -> None:
    """Rewrite every ``deviceClassName`` that names one of ``names`` (claims, templates, requests)."""
    if not names:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "deviceClassName" and isinstance(item, str) and item in names:
                value[key] = names[item]
            else:
                rename_classes(item, names)
    elif isinstance(value, list):
        for item in value:
            rename_classes(item, names)
