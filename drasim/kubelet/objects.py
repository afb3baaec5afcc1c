"""Typed, read-only views of the Pod and ResourceClaim fields the kubelet DRA manager reads.

Kubernetes objects reach the kubelet as JSON-shaped dicts (camelCase keys, as the
REST API serves them). This module pulls out exactly the fields that
pkg/kubelet/cm/dra reads (see the reference, section 7.1) and checks their types,
so that the manager works on small frozen values and a malformed object gets a
specific error naming the object and the field instead of a traceback.

Missing fields take Go's zero values (``""``, ``None`` for pointers, empty lists),
which is how the kubelet sees them after decoding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from drasim.errors import ConfigError, KubeletError

__all__ = [
    "ClaimView",
    "ConsumerRef",
    "ContainerClaim",
    "ContainerView",
    "ExtendedResourceClaimStatus",
    "MalformedObjectError",
    "OwnerRef",
    "PodResourceClaim",
    "PodView",
    "RequestMapping",
    "claim_view",
    "container_view",
    "is_dra_extended_resource_name",
    "pod_view",
    "quantity_is_zero",
]


class MalformedObjectError(KubeletError, ConfigError):
    """A Pod or ResourceClaim dict does not have the shape the Kubernetes API defines."""


@dataclass(frozen=True)
class PodResourceClaim:
    """One ``pod.spec.resourceClaims[]`` entry (``v1.PodResourceClaim``)."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(frozen=True)
class ContainerClaim:
    """One ``container.resources.claims[]`` entry (``v1.ResourceClaim``)."""

    name: str
    request: str = ""


@dataclass(frozen=True)
class ContainerView:
    """The parts of a container the DRA manager reads."""

    name: str
    claims: tuple[ContainerClaim, ...] = ()
    # resources.requests: resource name -> quantity (string or number, as in JSON)
    requests: tuple[tuple[str, str | int | float], ...] = ()


@dataclass(frozen=True)
class RequestMapping:
    """``status.extendedResourceClaimStatus.requestMappings[]`` (``v1.ContainerExtendedResourceRequest``)."""

    container_name: str
    resource_name: str
    request_name: str


@dataclass(frozen=True)
class ExtendedResourceClaimStatus:
    """``pod.status.extendedResourceClaimStatus`` (``v1.PodExtendedResourceClaimStatus``)."""

    resource_claim_name: str
    request_mappings: tuple[RequestMapping, ...] = ()


@dataclass(frozen=True)
class PodView:
    """The parts of a Pod the DRA manager reads."""

    name: str
    namespace: str
    uid: str
    resource_claims: tuple[PodResourceClaim, ...] = ()
    # status.resourceClaimStatuses[]: (name, resourceClaimName or None)
    claim_statuses: tuple[tuple[str, str | None], ...] = ()
    extended_status: ExtendedResourceClaimStatus | None = None
    pod_group_name: str | None = None
    containers: tuple[ContainerView, ...] = ()

    @property
    def ref(self) -> str:
        """``<namespace>/<name>``, as klog.KObj prints a pod."""
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class OwnerRef:
    """One ``metadata.ownerReferences[]`` entry."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool


@dataclass(frozen=True)
class ConsumerRef:
    """One ``status.reservedFor[]`` entry (``ResourceClaimConsumerReference``)."""

    api_group: str
    resource: str
    name: str
    uid: str


@dataclass(frozen=True)
class ClaimView:
    """The parts of a ResourceClaim the DRA manager reads."""

    name: str
    namespace: str
    uid: str
    owner_references: tuple[OwnerRef, ...] = ()
    allocated: bool = False
    # status.allocation.devices.results[].driver, in order, duplicates kept
    result_drivers: tuple[str, ...] = ()
    reserved_for: tuple[ConsumerRef, ...] = ()


#: A field path as text, or ``(list path, index, field)`` formatted only for an error
#: message (``spec.resourceClaims[0].name``; ``field`` may be ``""``): the paths of the
#: fields read from a valid object are never needed, and formatting them showed in profiles.
FieldPath = str | tuple[str, int, str]


def _path_text(path: FieldPath) -> str:
    if isinstance(path, str):
        return path
    base, index, name = path
    return f"{base}[{index}].{name}" if name else f"{base}[{index}]"


class _Reader:
    """Walks one object, raising :class:`MalformedObjectError` with the field path on bad types.

    ``what`` (``pod default/p``) is worked out only when an error is raised.
    """

    __slots__ = ("_kind", "_obj", "_parent", "_where")

    def __init__(
        self, kind: str, obj: Any = None, parent: _Reader | None = None, where: FieldPath = ""
    ) -> None:
        self._kind = kind
        self._obj = obj
        self._parent = parent
        self._where = where

    @property
    def what(self) -> str:
        if self._parent is not None:
            return f"{self._parent.what}: {_path_text(self._where)}"
        return _describe(self._kind, self._obj) if self._obj is not None else self._kind

    def fail(self, path: FieldPath, expected: str, value: Any) -> MalformedObjectError:
        return MalformedObjectError(
            f"{self.what}: {_path_text(path)}: expected {expected}, got {type(value).__name__} {value!r}"
        )

    def obj(self, parent: Any, key: str, path: FieldPath) -> dict[str, Any] | None:
        value = parent.get(key)
        if value is None or isinstance(value, dict):
            return value
        raise self.fail(path, "an object", value)

    def items(self, parent: Any, key: str, path: str) -> list[dict[str, Any]]:
        value = parent.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, "a list", value)
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail((path, index, ""), "an object", item)
        return value

    def opt_str(self, parent: Any, key: str, path: FieldPath) -> str | None:
        value = parent.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self.fail(path, "a string", value)

    def text(self, parent: Any, key: str, path: FieldPath) -> str:
        value = parent.get(key)
        if type(value) is str:  # the usual case, without a second call
            return value
        return self.opt_str(parent, key, path) or ""


def _metadata(reader: _Reader, obj: Any) -> tuple[str, str, str]:
    if not isinstance(obj, dict):
        raise reader.fail("(object)", "an object", obj)
    meta = reader.obj(obj, "metadata", "metadata") or {}
    return (
        reader.text(meta, "name", "metadata.name"),
        reader.text(meta, "namespace", "metadata.namespace"),
        reader.text(meta, "uid", "metadata.uid"),
    )


def _describe(kind: str, obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict):
        return f"{kind} {meta.get('namespace') or ''}/{meta.get('name') or ''}"
    return kind


def container_view(raw: Any, what: str = "container") -> ContainerView:
    """Read one container dict (``name``, ``resources.claims``, ``resources.requests``)."""
    return _container(_Reader(what), raw)


def _container(reader: _Reader, raw: Any) -> ContainerView:
    if not isinstance(raw, dict):
        raise reader.fail("(container)", "an object", raw)
    resources = reader.obj(raw, "resources", "resources") or {}
    claims = tuple(
        ContainerClaim(
            name=reader.text(claim, "name", ("resources.claims", i, "name")),
            request=reader.text(claim, "request", ("resources.claims", i, "request")),
        )
        for i, claim in enumerate(reader.items(resources, "claims", "resources.claims"))
    )
    requests_raw = reader.obj(resources, "requests", "resources.requests") or {}
    requests: list[tuple[str, str | int | float]] = []
    for key, value in requests_raw.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise reader.fail(f"resources.requests[{key}]", "a quantity", value)
        requests.append((str(key), value))
    return ContainerView(name=reader.text(raw, "name", "name"), claims=claims, requests=tuple(requests))


def pod_view(pod: Any) -> PodView:
    """Read a Pod dict; raises :class:`MalformedObjectError` naming the bad field."""
    view = _plain_pod_view(pod)
    if view is not None:
        return view
    reader = _Reader("pod", pod)
    name, namespace, uid = _metadata(reader, pod)
    spec = reader.obj(pod, "spec", "spec") or {}
    status = reader.obj(pod, "status", "status") or {}
    path = "spec.resourceClaims"
    claims = tuple(
        PodResourceClaim(
            name=reader.text(entry, "name", (path, i, "name")),
            resource_claim_name=reader.opt_str(entry, "resourceClaimName", (path, i, "resourceClaimName")),
            resource_claim_template_name=reader.opt_str(
                entry, "resourceClaimTemplateName", (path, i, "resourceClaimTemplateName")
            ),
        )
        for i, entry in enumerate(reader.items(spec, "resourceClaims", path))
    )
    path = "status.resourceClaimStatuses"
    statuses = tuple(
        (
            reader.text(entry, "name", (path, i, "name")),
            reader.opt_str(entry, "resourceClaimName", (path, i, "resourceClaimName")),
        )
        for i, entry in enumerate(reader.items(status, "resourceClaimStatuses", path))
    )
    group = reader.obj(spec, "schedulingGroup", "spec.schedulingGroup") or {}
    containers: list[ContainerView] = []
    for field in ("initContainers", "containers"):
        path = "spec." + field
        for i, raw in enumerate(reader.items(spec, field, path)):
            containers.append(_container(_Reader("", parent=reader, where=(path, i, "")), raw))
    return PodView(
        name=name,
        namespace=namespace,
        uid=uid,
        resource_claims=claims,
        claim_statuses=statuses,
        extended_status=_extended_status(reader, status),
        pod_group_name=reader.opt_str(group, "podGroupName", "spec.schedulingGroup.podGroupName"),
        containers=tuple(containers),
    )


def _plain_pod_view(pod: Any) -> PodView | None:
    """:func:`pod_view` of the usual pod, read inline; ``None`` when anything is unusual.

    Every field read has exactly the type the API gives it (``str``, ``dict``, ``list``, no
    subclass), or is absent or ``null`` where the general reader allows that; otherwise (a
    missing name, an extended-resource status, a scheduling group, ``resources.requests``,
    anything wrong) the general reader takes over, so the result and every error are
    :func:`pod_view`'s.
    """
    if type(pod) is not dict:
        return None
    meta, spec, status = pod.get("metadata"), pod.get("spec"), pod.get("status", _EMPTY)
    if (
        type(meta) is not dict
        or type(spec) is not dict
        or type(status) is not dict
        or "extendedResourceClaimStatus" in status
        or "schedulingGroup" in spec
    ):
        return None
    name, namespace, uid = meta.get("name"), meta.get("namespace"), meta.get("uid")
    if type(name) is not str or type(namespace) is not str or type(uid) is not str:
        return None
    claims = _plain_pod_claims(spec.get("resourceClaims"))
    statuses = _plain_claim_statuses(status.get("resourceClaimStatuses"))
    containers = _plain_containers(spec)
    if claims is None or statuses is None or containers is None:
        return None
    return PodView(name, namespace, uid, claims, statuses, None, None, containers)


_EMPTY: dict[str, Any] = {}


def _plain_list(value: Any) -> list[Any] | None:
    """A list field as :meth:`_Reader.items` takes it: a list (its items are checked by the caller),
    ``[]`` for null; else ``None``."""
    if value is None:
        return []
    return value if type(value) is list else None


def _plain_pod_claims(value: Any) -> tuple[PodResourceClaim, ...] | None:
    entries = _plain_list(value)
    if entries is None:
        return None
    claims = []
    for entry in entries:
        if type(entry) is not dict:
            return None
        name = entry.get("name")
        of_claim, of_template = entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName")
        if (
            type(name) is not str
            or (of_claim is not None and type(of_claim) is not str)
            or (of_template is not None and type(of_template) is not str)
        ):
            return None
        claims.append(PodResourceClaim(name, of_claim, of_template))
    return tuple(claims)


def _plain_claim_statuses(value: Any) -> tuple[tuple[str, str | None], ...] | None:
    entries = _plain_list(value)
    if entries is None:
        return None
    statuses = []
    for entry in entries:
        if type(entry) is not dict:
            return None
        name, of_claim = entry.get("name"), entry.get("resourceClaimName")
        if type(name) is not str or (of_claim is not None and type(of_claim) is not str):
            return None
        statuses.append((name, of_claim))
    return tuple(statuses)


def _plain_containers(spec: dict[str, Any]) -> tuple[ContainerView, ...] | None:
    containers = []
    for field in ("initContainers", "containers"):
        entries = spec.get(field)
        if entries is None:
            continue
        if type(entries) is not list:
            return None
        for raw in entries:
            container = _plain_container(raw) if type(raw) is dict else None
            if container is None:
                return None
            containers.append(container)
    return tuple(containers)


def _plain_container(raw: dict[str, Any]) -> ContainerView | None:
    """:func:`_container` of a usual container (no ``resources.requests``), or ``None``."""
    name, resources = raw.get("name"), raw.get("resources", _EMPTY)
    if type(name) is not str or type(resources) is not dict or "requests" in resources:
        return None
    entries = resources.get("claims")
    if entries is None:
        return ContainerView(name, ())
    if type(entries) is not list:
        return None
    claims = []
    for claim in entries:
        if type(claim) is not dict:
            return None
        claim_name, request = claim.get("name"), claim.get("request", "")
        if type(claim_name) is not str or type(request) is not str:
            return None
        claims.append(ContainerClaim(claim_name, request))
    return ContainerView(name, tuple(claims))


def _extended_status(reader: _Reader, status: dict[str, Any]) -> ExtendedResourceClaimStatus | None:
    path = "status.extendedResourceClaimStatus"
    raw = reader.obj(status, "extendedResourceClaimStatus", path)
    if raw is None:
        return None
    mappings_path = path + ".requestMappings"
    mappings = tuple(
        RequestMapping(
            container_name=reader.text(m, "containerName", (mappings_path, i, "containerName")),
            resource_name=reader.text(m, "resourceName", (mappings_path, i, "resourceName")),
            request_name=reader.text(m, "requestName", (mappings_path, i, "requestName")),
        )
        for i, m in enumerate(reader.items(raw, "requestMappings", mappings_path))
    )
    return ExtendedResourceClaimStatus(
        resource_claim_name=reader.text(raw, "resourceClaimName", f"{path}.resourceClaimName"),
        request_mappings=mappings,
    )


def claim_view(claim: Any) -> ClaimView:
    """Read a ResourceClaim dict; raises :class:`MalformedObjectError` naming the bad field."""
    reader = _Reader("ResourceClaim", claim)
    name, namespace, uid = _metadata(reader, claim)
    meta = reader.obj(claim, "metadata", "metadata") or {}
    owners: list[OwnerRef] = []
    path = "metadata.ownerReferences"
    for i, ref in enumerate(reader.items(meta, "ownerReferences", path)):
        controller = ref.get("controller")
        if controller is not None and not isinstance(controller, bool):
            raise reader.fail((path, i, "controller"), "a boolean", controller)
        owners.append(
            OwnerRef(
                api_version=reader.text(ref, "apiVersion", (path, i, "apiVersion")),
                kind=reader.text(ref, "kind", (path, i, "kind")),
                name=reader.text(ref, "name", (path, i, "name")),
                uid=reader.text(ref, "uid", (path, i, "uid")),
                controller=bool(controller),
            )
        )
    status = reader.obj(claim, "status", "status") or {}
    allocation = reader.obj(status, "allocation", "status.allocation")
    drivers: list[str] = []
    if allocation is not None:
        devices = reader.obj(allocation, "devices", "status.allocation.devices") or {}
        path = "status.allocation.devices.results"
        for i, result in enumerate(reader.items(devices, "results", path)):
            drivers.append(reader.text(result, "driver", (path, i, "driver")))
    path = "status.reservedFor"
    reserved = tuple(
        ConsumerRef(
            api_group=reader.text(ref, "apiGroup", (path, i, "apiGroup")),
            resource=reader.text(ref, "resource", (path, i, "resource")),
            name=reader.text(ref, "name", (path, i, "name")),
            uid=reader.text(ref, "uid", (path, i, "uid")),
        )
        for i, ref in enumerate(reader.items(status, "reservedFor", path))
    )
    return ClaimView(
        name=name,
        namespace=namespace,
        uid=uid,
        owner_references=tuple(owners),
        allocated=allocation is not None,
        result_drivers=tuple(drivers),
        reserved_for=reserved,
    )


_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:[eE][+-]?[0-9]+|[a-zA-Z]*)$")


def quantity_is_zero(value: str | int | float) -> bool:
    """Whether a resource quantity is zero (``resource.Quantity.IsZero``); suffixes do not matter."""
    if isinstance(value, int | float):
        return value == 0
    match = _QUANTITY.match(value.strip())
    if match is None:
        raise MalformedObjectError(
            f"quantity {value!r}: expected a Kubernetes quantity such as 1, 500m or 2Gi"
        )
    try:
        return Decimal(match.group(1)) == 0
    except InvalidOperation as err:  # pragma: no cover - the regex admits only decimals
        raise MalformedObjectError(f"quantity {value!r}: {err}") from err


_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"


def _is_qualified_name(value: str) -> bool:
    prefix, sep, name = value.rpartition("/")
    if sep and (not prefix or len(prefix) > 253 or not all(_DNS_LABEL.match(p) for p in prefix.split("."))):
        return False
    return 0 < len(name) <= 63 and bool(_NAME_PART.match(name))


def is_dra_extended_resource_name(name: str) -> bool:
    """Mirrors ``schedutil.IsDRAExtendedResourceName`` (extended resource or device-class name)."""
    if name.startswith(_DEVICE_CLASS_PREFIX):
        return True
    # v1helper.IsExtendedResourceName: not native, not "requests.*", valid as "requests.<name>".
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return _is_qualified_name("requests." + name)
