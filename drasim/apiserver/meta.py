"""Object metadata rules the store applies on create and update (what the generic registry does)."""

from __future__ import annotations

import copy
import random
import time
from typing import Any

from drasim.apiserver.kinds import ResourceType, api_version_of

# k8s.io/apimachinery/pkg/util/rand: no vowels and no confusable characters.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LEN = 5

# Metadata no update can change.
IMMUTABLE_META = ("uid", "creationTimestamp", "name", "namespace", "deletionTimestamp", "generateName")


def generated_name(prefix: str, rng: random.Random) -> str:
    """``generateName`` plus five random characters, as the API server does."""
    return prefix + "".join(rng.choice(NAME_ALPHABET) for _ in range(GENERATED_SUFFIX_LEN))


def timestamp(now: float | None = None) -> str:
    """RFC 3339 in UTC with second precision (``metav1.Time``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None else now))


def content(obj: dict[str, Any], rtype: ResourceType) -> dict[str, Any]:
    """Everything but metadata (and status, for kinds with a status subresource): what bumps generation."""
    skip = {"metadata", "apiVersion", "kind"}
    if rtype.has_status:
        skip.add("status")
    return {k: v for k, v in obj.items() if k not in skip}


_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def clone(value: Any) -> Any:
    """A deep copy of a JSON-like value: dicts and lists are copied, leaves shared when immutable.

    Objects in the store are what YAML, JSON and protobuf decoding produce: dicts, lists
    and scalars. This copies them several times faster than :func:`copy.deepcopy`, which
    matters because every read and write of the store copies its objects; anything else
    (a tuple, a datetime from a YAML timestamp, ...) goes through :func:`copy.deepcopy`.
    """
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if kind is dict:
        return {k: clone(v) for k, v in value.items()}
    if kind is list:
        return [clone(v) for v in value]
    return copy.deepcopy(value)


def render(obj: dict[str, Any], rtype: ResourceType, version: str) -> dict[str, Any]:
    """A deep copy served under ``version``: apiVersion rewritten, kind set."""
    out: dict[str, Any] = {"apiVersion": api_version_of(rtype.group, version), "kind": rtype.kind}
    out.update((k, clone(v)) for k, v in obj.items() if k not in ("apiVersion", "kind"))
    return out


def initial_status(rtype: ResourceType, obj: dict[str, Any]) -> None:
    """Reset status on create where the upstream strategy does (claims start unallocated)."""
    if rtype.resource == "resourceclaims":
        obj.pop("status", None)
    elif rtype.resource == "pods":
        obj["status"] = {"phase": "Pending"}
    elif rtype.resource == "namespaces":
        obj["status"] = {"phase": "Active"}


def merge_update(
    old: dict[str, Any], new: dict[str, Any], rtype: ResourceType, *, status: bool
) -> dict[str, Any]:
    """The object an update stores: ``new`` with the fields it may not change taken from ``old``.

    A main-resource update keeps the old ``.status`` (for kinds with a status
    subresource); a status update keeps everything of ``old`` except ``.status``.
    """
    merged: dict[str, Any]
    if status:
        merged = clone(old)
        if "status" in new:
            merged["status"] = clone(new["status"])
        else:
            merged.pop("status", None)
        return merged
    merged = clone(new)
    meta = merged.setdefault("metadata", {})
    for key in IMMUTABLE_META:
        if key in old["metadata"]:
            meta[key] = old["metadata"][key]
        else:
            meta.pop(key, None)
    if rtype.has_status:
        if "status" in old:
            merged["status"] = clone(old["status"])
        else:
            merged.pop("status", None)
    return merged
