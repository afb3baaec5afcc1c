"""The resource types the fake API server knows, and which versions it serves.

Objects are stored once per (group, resource, namespace, name), independent of the
API version. Each group is served under a configurable list of versions; an object
read through another version only gets its ``apiVersion`` rewritten. There is no
deep schema conversion (a v1beta1 ResourceClaim created through v1 keeps its v1
shape), which is enough for drivers that ask for a version and read the fields
that exist in every served version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from drasim.errors import ApiError

RESOURCE_GROUP = "resource.k8s.io"
RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1", "v1alpha3")

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class ResourceType:
    """One REST resource: ``pods``, ``resourceclaims``, ...

    ``field_labels`` are the field selector keys the resource supports besides
    ``metadata.name`` (and ``metadata.namespace`` for namespaced resources), as
    dotted paths into the JSON object.
    """

    group: str
    resource: str
    kind: str
    namespaced: bool
    has_status: bool = False
    short_names: tuple[str, ...] = ()
    field_labels: tuple[str, ...] = ()
    singular: str = field(default="")

    @property
    def qualified(self) -> str:
        """``resourceclaims.resource.k8s.io`` or ``pods`` (the form Kubernetes error messages use)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def list_kind(self) -> str:
        """``ResourceClaimList``."""
        return f"{self.kind}List"

    def selectable_fields(self) -> tuple[str, ...]:
        """All field selector keys: object metadata plus the resource's own."""
        meta = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        return meta + self.field_labels


_POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

RESOURCE_TYPES: tuple[ResourceType, ...] = (
    ResourceType("", "pods", "Pod", True, True, ("po",), _POD_FIELDS, "pod"),
    ResourceType("", "nodes", "Node", False, True, ("no",), ("spec.unschedulable",), "node"),
    ResourceType("", "events", "Event", True, False, ("ev",), _EVENT_FIELDS, "event"),
    ResourceType("", "namespaces", "Namespace", False, True, ("ns",), ("status.phase",), "namespace"),
    ResourceType(RESOURCE_GROUP, "resourceclaims", "ResourceClaim", True, True, (), (), "resourceclaim"),
    ResourceType(
        RESOURCE_GROUP,
        "resourceclaimtemplates",
        "ResourceClaimTemplate",
        True,
        False,
        (),
        (),
        "resourceclaimtemplate",
    ),
    ResourceType(
        RESOURCE_GROUP,
        "resourceslices",
        "ResourceSlice",
        False,
        False,
        (),
        ("spec.nodeName", "spec.driver"),
        "resourceslice",
    ),
    ResourceType(RESOURCE_GROUP, "deviceclasses", "DeviceClass", False, False, (), (), "deviceclass"),
)


def default_served_versions() -> dict[str, tuple[str, ...]]:
    """Core v1 and resource.k8s.io v1 only, like a current cluster with betas switched off."""
    return {"": ("v1",), RESOURCE_GROUP: ("v1",)}


class Registry:
    """Looks resource types up by (group, resource) or (group, kind) and knows the served versions.

    ``served`` maps a group to its versions, preferred first. Only ``resource.k8s.io``
    may be configured (``v1``, ``v1beta2``, ``v1beta1``, ``v1alpha3``); the core group is always ``v1``.
    """

    def __init__(self, served: Mapping[str, Sequence[str]] | None = None) -> None:
        versions = default_served_versions()
        for group, vers in (served or {}).items():
            versions[group] = _check_versions(group, vers)
        self.served: dict[str, tuple[str, ...]] = versions
        self._by_resource = {(t.group, t.resource): t for t in RESOURCE_TYPES}
        self._by_kind = {(t.group, t.kind): t for t in RESOURCE_TYPES}

    def groups(self) -> list[str]:
        """Served API groups, core group first."""
        return list(self.served)

    def types_in(self, group: str) -> list[ResourceType]:
        """Every resource type of a group."""
        return [t for t in RESOURCE_TYPES if t.group == group]

    def is_served(self, group: str, version: str) -> bool:
        """Whether ``group/version`` is served."""
        return version in self.served.get(group, ())

    def resource(self, group: str, version: str, resource: str) -> ResourceType:
        """The type behind a URL; a 404 NotFound like a real server for anything unknown or unserved."""
        rtype = self._by_resource.get((group, resource))
        if rtype is None or not self.is_served(group, version):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return rtype

    def by_kind(self, api_version: str, kind: str) -> tuple[ResourceType, str]:
        """The type and version for a manifest's ``apiVersion``/``kind`` (404 when not served)."""
        group, _, version = api_version.rpartition("/")
        rtype = self._by_kind.get((group, kind))
        if rtype is None or not self.is_served(group, version):
            raise ApiError(
                404, "NotFound", f'no matches for kind "{kind}" in version "{api_version}" on this server'
            )
        return rtype, version


def api_version_of(group: str, version: str) -> str:
    """``v1`` for the core group, ``resource.k8s.io/v1`` otherwise."""
    return f"{group}/{version}" if group else version


def split_api_version(api_version: str) -> tuple[str, str]:
    """(group, version) of ``resource.k8s.io/v1`` or ``v1``."""
    group, _, version = api_version.rpartition("/")
    return group, version


def _check_versions(group: str, versions: Sequence[str]) -> tuple[str, ...]:
    allowed = RESOURCE_VERSIONS if group == RESOURCE_GROUP else ("v1",)
    if group not in ("", RESOURCE_GROUP):
        msg = f"unknown API group {group!r}; the fake API server serves '' (core) and {RESOURCE_GROUP!r}"
        raise ValueError(msg)
    if not versions:
        msg = f"API group {group or 'core'!r} needs at least one served version"
        raise ValueError(msg)
    bad = [v for v in versions if v not in allowed]
    if bad:
        msg = f"API group {group or 'core'!r} cannot serve {bad}; valid versions: {list(allowed)}"
        raise ValueError(msg)
    return tuple(versions)
