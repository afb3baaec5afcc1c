"""REST paths of the fake API server, and the discovery documents it serves.

Resource paths follow the Kubernetes layout::

    /api/v1/[watch/][namespaces/<ns>/]<resource>[/<name>[/status]]
    /apis/<group>/<version>/[watch/][namespaces/<ns>/]<resource>[/<name>[/status]]

Anything else is a 404 with a NotFound Status, as from a real server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from drasim.apiserver.kinds import ALL_VERBS, RESOURCE_GROUP, STATUS_VERBS, Registry, ResourceType
from drasim.errors import ApiError

NOT_FOUND = "the server could not find the requested resource"


@dataclass(frozen=True)
class Route:
    """A parsed resource path."""

    rtype: ResourceType
    group: str
    version: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    watch_path: bool = False

    @property
    def api_version(self) -> str:
        """``resource.k8s.io/v1`` or ``v1``."""
        return f"{self.group}/{self.version}" if self.group else self.version


def _not_found() -> ApiError:
    return ApiError(404, "NotFound", NOT_FOUND)


def parse_resource_path(parts: list[str], registry: Registry) -> Route:
    """Parse the path segments (without empty ones) of a resource URL; 404 for anything else."""
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise _not_found()
    if not registry.is_served(group, version):
        raise _not_found()
    watch_path = rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces" and _namespaced(registry, group, rest[2]):
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise _not_found()
    rtype = registry.resource(group, version, rest[0])
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if sub and (sub != "status" or not rtype.has_status):
        raise _not_found()
    if namespace and not rtype.namespaced:
        raise _not_found()
    return Route(rtype, group, version, namespace, name, sub, watch_path)


def _namespaced(registry: Registry, group: str, resource: str) -> bool:
    return any(t.resource == resource and t.namespaced for t in registry.types_in(group))


# ------------------------------------------------------------------ discovery
def server_version(registry: Registry) -> dict[str, Any]:
    """``/version``: the release whose resource.k8s.io versions match the served ones."""
    served = registry.served.get(RESOURCE_GROUP, ())
    minor = "34" if "v1" in served else "33" if "v1beta2" in served else "32"
    return {
        "major": "1",
        "minor": minor,
        "gitVersion": f"v1.{minor}.0-drasim",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def core_versions(address: str) -> dict[str, Any]:
    """``/api``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def _group(registry: Registry, group: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in registry.served[group]]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def group_list(registry: Registry) -> dict[str, Any]:
    """``/apis``."""
    groups = [_group(registry, g) for g in registry.groups() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def group(registry: Registry, name: str) -> dict[str, Any]:
    """``/apis/<group>``; 404 when not served."""
    if not name or name not in registry.served:
        raise _not_found()
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(registry, name)}


def resource_list(registry: Registry, group_name: str, version: str) -> dict[str, Any]:
    """``/api/v1`` or ``/apis/<group>/<version>``; 404 when not served."""
    if not registry.is_served(group_name, version):
        raise _not_found()
    resources: list[dict[str, Any]] = []
    for rtype in registry.types_in(group_name):
        entry: dict[str, Any] = {
            "name": rtype.resource,
            "singularName": rtype.singular,
            "namespaced": rtype.namespaced,
            "kind": rtype.kind,
            "verbs": list(ALL_VERBS),
        }
        if rtype.short_names:
            entry["shortNames"] = list(rtype.short_names)
        resources.append(entry)
        if rtype.has_status:
            resources.append(
                {
                    "name": f"{rtype.resource}/status",
                    "singularName": "",
                    "namespaced": rtype.namespaced,
                    "kind": rtype.kind,
                    "verbs": list(STATUS_VERBS),
                }
            )
    group_version = f"{group_name}/{version}" if group_name else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }


def discovery(parts: list[str], registry: Registry, address: str) -> dict[str, Any] | None:
    """The discovery document for a path, or ``None`` when the path is not a discovery path."""
    fixed = {"version": server_version, "apis": group_list}
    if len(parts) == 1 and parts[0] in fixed:
        return fixed[parts[0]](registry)
    if parts == ["api"]:
        return core_versions(address)
    if len(parts) == 2 and parts[0] == "api":
        return resource_list(registry, "", parts[1])
    if len(parts) == 2 and parts[0] == "apis":
        return group(registry, parts[1])
    if len(parts) == 3 and parts[0] == "apis":
        return resource_list(registry, parts[1], parts[2])
    return None
