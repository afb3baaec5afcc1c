"""What the store checks on every write, as kube-apiserver's decoding and validation do.

Two layers, like upstream:

- :func:`shape_problem`: the JSON has the shape the typed object needs (``metadata`` an
  object, names strings, ``labels`` and ``annotations`` maps of strings, ...). Upstream
  finds these while decoding the body into its Go types: a create or update answers 400
  BadRequest, a patch whose result does not decode answers 422 Invalid.
- :func:`validate`: the object metadata rules of ``k8s.io/apimachinery/pkg/api/validation``
  (``ValidateObjectMeta``) with each kind's name rule from ``pkg/apis/core/validation`` and
  ``pkg/apis/resource/validation``, plus the size limits drasim enforces on specs. Every
  problem becomes one cause of a 422 Invalid Status.

Name rules per kind (upstream v1.37): Namespace names are DNS-1123 labels; Pod, Node,
ResourceClaim, ResourceClaimTemplate, ResourceSlice and DeviceClass names are DNS-1123
subdomains; core/v1 Event names only have to be usable as a path segment (upstream's
legacy event validation checks no name format, and the REST layer refuses ``.``, ``..``
and names holding ``/`` or ``%``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from drasim.apiserver.kinds import ResourceType
from drasim.apiserver.status import StatusError

# --------------------------------------------------------------- string rules
_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_LABEL = re.compile(_LABEL)
_DNS_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_QUALIFIED_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
ANNOTATIONS_MAX_BYTES = 256 * 1024
"""Total bytes of annotation keys and values (upstream ``TotalAnnotationSizeLimitB``)."""
STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
"""Finalizer names that need no domain prefix (upstream ``IsStandardFinalizerName``)."""

_SUBDOMAIN_RULE = (
    "must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.', "
    "starting and ending with a letter or digit"
)
_LABEL_RULE = (
    "must be a lowercase RFC 1123 label: lowercase letters, digits and '-', "
    "starting and ending with a letter or digit"
)
_QUALIFIED_RULE = (
    "must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit, "
    "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/my-name')"
)


def _too_long(limit: int) -> str:
    return f"must be no more than {limit} bytes"


def dns_subdomain(value: str) -> list[str]:
    """Problems of ``value`` as a DNS-1123 subdomain (empty when it is one)."""
    problems = [_too_long(DNS_SUBDOMAIN_MAX)] if len(value.encode()) > DNS_SUBDOMAIN_MAX else []
    if not _DNS_SUBDOMAIN.fullmatch(value):
        problems.append(_SUBDOMAIN_RULE)
    return problems


def dns_label(value: str) -> list[str]:
    """Problems of ``value`` as a DNS-1123 label (empty when it is one)."""
    problems = [_too_long(DNS_LABEL_MAX)] if len(value.encode()) > DNS_LABEL_MAX else []
    if not _DNS_LABEL.fullmatch(value):
        problems.append("must not contain dots" if _DNS_SUBDOMAIN.fullmatch(value) else _LABEL_RULE)
    return problems


def path_segment(value: str) -> list[str]:
    """Problems of ``value`` as one segment of a REST path."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def qualified_name(value: str) -> list[str]:
    """Problems of ``value`` as a qualified name (label key, annotation key, finalizer)."""
    parts = value.split("/")
    if len(parts) > 2:
        return [_QUALIFIED_RULE]
    problems: list[str] = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += [f"prefix part {p}" for p in dns_subdomain(prefix)]
    name = parts[-1]
    if not name:
        problems.append("name part must be non-empty")
    elif len(name.encode()) > QUALIFIED_NAME_MAX:
        problems.append(f"name part {_too_long(QUALIFIED_NAME_MAX)}")
    if not _QUALIFIED_PART.fullmatch(name):
        problems.append(f"name part {_QUALIFIED_RULE}")
    return problems


def label_value(value: str) -> list[str]:
    """Problems of ``value`` as a label value (the empty string is one)."""
    problems = [_too_long(LABEL_VALUE_MAX)] if len(value.encode()) > LABEL_VALUE_MAX else []
    if value and not _QUALIFIED_PART.fullmatch(value):
        problems.append(
            "must be empty or letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        )
    return problems


NameRule = Callable[[str], list[str]]


def name_rule(rtype: ResourceType) -> NameRule:
    """How a kind's ``metadata.name`` is checked (see the module docstring)."""
    if rtype.kind == "Namespace":
        return dns_label
    if rtype.kind == "Event":
        return path_segment
    return dns_subdomain


# ---------------------------------------------------------------------- shape
_STRING_META = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
)
_INT_META = ("generation", "deletionGracePeriodSeconds")
_OWNER_STRINGS = ("apiVersion", "kind", "name", "uid")


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


def shape_problem(obj: dict[str, Any], rtype: ResourceType) -> str | None:
    """Where ``obj`` does not have the shape of a ``rtype`` object, or ``None``.

    Metadata entries that are JSON ``null`` are dropped first (a Go client sends them
    for nil maps and the typed object has them unset).
    """
    md = obj.get("metadata")
    if md is None:
        problems: list[str | None] = []
    elif not isinstance(md, dict):
        return f"metadata: expected an object, got {_type_name(md)}"
    else:
        for key in [k for k, v in md.items() if v is None]:
            del md[key]
        problems = [_scalar_problem(md), _map_problem(md), _list_problem(md)]
    if rtype.kind != "Event":
        problems += [_object_problem(obj, field) for field in ("spec", "status")]
    return next((p for p in problems if p), None)


def _scalar_problem(md: dict[str, Any]) -> str | None:
    for key in _STRING_META:
        if key in md and not isinstance(md[key], str):
            return f"metadata.{key}: expected a string, got {_type_name(md[key])}"
    for key in _INT_META:
        value = md.get(key)
        if key in md and (isinstance(value, bool) or not isinstance(value, int)):
            return f"metadata.{key}: expected an integer, got {_type_name(value)}"
    return None


def _map_problem(md: dict[str, Any]) -> str | None:
    return _string_map(md.get("labels"), "metadata.labels") or _string_map(
        md.get("annotations"), "metadata.annotations"
    )


def _list_problem(md: dict[str, Any]) -> str | None:
    finalizers = md.get("finalizers", [])
    if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
        return "metadata.finalizers: expected an array of strings"
    for field in ("ownerReferences", "managedFields"):
        entries = md.get(field, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            return f"metadata.{field}: expected an array of objects"
    for index, ref in enumerate(md.get("ownerReferences", [])):
        for key in _OWNER_STRINGS:
            if key in ref and not isinstance(ref[key], str):
                return f"metadata.ownerReferences[{index}].{key}: expected a string"
    return None


def _object_problem(obj: dict[str, Any], field: str) -> str | None:
    value = obj.get(field)
    if value is not None and not isinstance(value, dict):
        return f"{field}: expected an object, got {_type_name(value)}"
    return None


def _string_map(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"{where}: expected an object of strings, got {_type_name(value)}"
    for key, item in value.items():
        if not isinstance(item, str):
            return f"{where}[{key}]: expected a string, got {_type_name(item)}"
    return None


def check_shape(obj: dict[str, Any], rtype: ResourceType) -> None:
    """:func:`shape_problem` as a 400 BadRequest (a create or update body)."""
    problem = shape_problem(obj, rtype)
    if problem:
        raise StatusError(400, "BadRequest", f"the body does not decode as a {rtype.kind}: {problem}")


def check_patched_shape(obj: dict[str, Any], rtype: ResourceType, name: str) -> None:
    """:func:`shape_problem` as a 422 Invalid on field ``patch`` (a patch result)."""
    problem = shape_problem(obj, rtype)
    if problem:
        raise invalid_causes(rtype, name, [("patch", f"the patched object does not decode: {problem}")])


# ----------------------------------------------------------------- validation
Cause = tuple[str, str]  # (field, message)


def _invalid_value(value: Any, problem: str) -> str:
    shown = value if len(value) <= 80 else value[:77] + "..."
    return f'Invalid value: "{shown}": {problem}'


def meta_causes(rtype: ResourceType, md: dict[str, Any]) -> list[Cause]:
    """Every ObjectMeta problem of an object about to be stored (name already generated)."""
    return (
        _name_causes(rtype, md)
        + _map_causes(md)
        + _finalizer_causes(md.get("finalizers") or [])
        + _owner_causes(md.get("ownerReferences") or [])
    )


def _name_causes(rtype: ResourceType, md: dict[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    name = md.get("name") or ""
    if not name:
        causes.append(("metadata.name", "Required value: name or generateName is required"))
    else:
        causes += [("metadata.name", _invalid_value(name, p)) for p in name_rule(rtype)(name)]
    namespace = md.get("namespace") or ""
    if rtype.namespaced:
        if not namespace:
            causes.append(("metadata.namespace", "Required value"))
        else:
            causes += [("metadata.namespace", _invalid_value(namespace, p)) for p in dns_label(namespace)]
    elif namespace:
        causes.append(("metadata.namespace", "Forbidden: not allowed on this type"))
    generation = md.get("generation", 0)
    if generation < 0:
        causes.append(
            ("metadata.generation", f"Invalid value: {generation}: must be greater than or equal to 0")
        )
    return causes


def _map_causes(md: dict[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    for key, value in (md.get("labels") or {}).items():
        causes += [("metadata.labels", _invalid_value(key, p)) for p in qualified_name(key)]
        causes += [("metadata.labels", _invalid_value(value, p)) for p in label_value(value)]
    annotations = md.get("annotations") or {}
    for key in annotations:
        causes += [("metadata.annotations", _invalid_value(key, p)) for p in qualified_name(key.lower())]
    total = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
    if total > ANNOTATIONS_MAX_BYTES:
        causes.append(
            ("metadata.annotations", f"Too long: may not be more than {ANNOTATIONS_MAX_BYTES} bytes")
        )
    return causes


def _owner_causes(refs: list[dict[str, Any]]) -> list[Cause]:
    return [
        (f"metadata.ownerReferences[{index}].{key}", "Required value: must not be empty")
        for index, ref in enumerate(refs)
        for key in _OWNER_STRINGS
        if not ref.get(key)
    ]


def _finalizer_causes(finalizers: list[str]) -> list[Cause]:
    causes: list[Cause] = []
    for index, finalizer in enumerate(finalizers):
        problems = qualified_name(finalizer)
        if not problems and "/" not in finalizer and finalizer not in STANDARD_FINALIZERS:
            problems = ["name is neither a standard finalizer name nor is it fully qualified"]
        causes += [(f"metadata.finalizers[{index}]", _invalid_value(finalizer, p)) for p in problems]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        causes.append(
            (
                "metadata.finalizers",
                "Invalid value: finalizer orphan and foregroundDeletion cannot be both set",
            )
        )
    return causes


RESOURCE_SLICE_MAX_DEVICES = 128
"""Devices in one ResourceSlice (upstream ``resourceapi.ResourceSliceMaxDevices``)."""


def spec_causes(rtype: ResourceType, obj: dict[str, Any]) -> list[Cause]:
    """The spec size limits drasim enforces."""
    if rtype.kind != "ResourceSlice":
        return []
    devices = (obj.get("spec") or {}).get("devices")
    if isinstance(devices, list) and len(devices) > RESOURCE_SLICE_MAX_DEVICES:
        return [
            (
                "spec.devices",
                f"Too many: {len(devices)}: must have at most {RESOURCE_SLICE_MAX_DEVICES} items",
            )
        ]
    return []


def validate(rtype: ResourceType, obj: dict[str, Any]) -> None:
    """Raise a 422 Invalid naming every problem of ``obj`` (a decoded, shape-checked object)."""
    md = obj.get("metadata") or {}
    causes = meta_causes(rtype, md) + spec_causes(rtype, obj)
    if causes:
        raise invalid_causes(rtype, str(md.get("name") or ""), causes)


def invalid_causes(rtype: ResourceType, name: str, causes: list[Cause]) -> StatusError:
    """A 422 Invalid Status with one cause per problem, worded as upstream's field errors."""
    details: dict[str, Any] = {"name": name, "kind": rtype.kind}
    if rtype.group:
        details["group"] = rtype.group
    details["causes"] = [
        {"reason": _reason(message), "message": message, "field": field} for field, message in causes
    ]
    listed = [f"{field}: {message}" for field, message in causes]
    summary = listed[0] if len(listed) == 1 else "[" + ", ".join(listed) + "]"
    return StatusError(422, "Invalid", f'{rtype.kind} "{name}" is invalid: {summary}', details=details)


_REASONS = {
    "Required value": "FieldValueRequired",
    "Forbidden": "FieldValueForbidden",
    "Too long": "FieldValueTooLong",
    "Too many": "FieldValueTooMany",
}


def _reason(message: str) -> str:
    return next((r for prefix, r in _REASONS.items() if message.startswith(prefix)), "FieldValueInvalid")
