"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and a strategic merge subset.

Strategic merge patch is treated as a merge patch, except for the lists below,
which merge element-wise by their patch merge key as upstream's struct tags say
(``$patch: delete`` inside such an element removes it; ``$patch: replace`` on a
map replaces it). Every other list is replaced whole, and the other directives
(``$retainKeys``, ``$deleteFromPrimitiveList``, ``$setElementOrder``) are not
supported. Server-side apply (``application/apply-patch+yaml``) is not supported.

Patches are bounded as kube-apiserver bounds them (``k8s.io/apiserver``
``endpoints/handlers/patch.go`` and ``server/config.go``): a JSON patch holds at most
:data:`MAX_JSON_PATCH_OPERATIONS` operations (413) and its ``copy`` operations may add at
most :data:`MAX_COPY_BYTES` in total (422), checked before each copy is made. drasim adds
one bound of its own: a patched object whose JSON is larger than :data:`MAX_PATCHED_BYTES`
is refused (413) instead of stored, where a real cluster's etcd refuses large objects.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from drasim.apiserver.port import JSON_PATCH, MERGE_PATCH, PATCH_TYPES, STRATEGIC_PATCH
from drasim.apiserver.status import StatusError, bad_request

#: The content types a PATCH may carry (from the one table, :data:`drasim.apiserver.port.PATCH_TYPES`).
PATCH_CONTENT_TYPES = tuple(PATCH_TYPES.values())

# List field name -> merge key, for strategic merge patch (from upstream struct tags).
STRATEGIC_KEYS = {
    "ownerReferences": "uid",
    "conditions": "type",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "reservedFor": "uid",
    "taints": "key",
    "tolerations": "key",
    "resourceClaims": "name",
    "resourceClaimStatuses": "name",
}
_PRIMITIVE_SETS = ("finalizers",)

MAX_JSON_PATCH_OPERATIONS = 10_000
"""Operations in one JSON patch (upstream ``maxJSONPatchOperations``)."""
MAX_COPY_BYTES = 3 * 1024 * 1024
"""Bytes all ``copy`` operations of one JSON patch may add (upstream ``JSONPatchMaxCopyBytes``)."""
MAX_PATCHED_BYTES = 3 * 1024 * 1024
"""Largest JSON encoding of a patched object drasim stores (the request body limit)."""


def _encoded_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))


def _too_large(message: str) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def apply_patch(target: dict[str, Any], patch: Any, content_type: str) -> dict[str, Any]:
    """The patched copy of ``target``; raises a 400/413/415/422 StatusError for a bad patch."""
    if content_type == MERGE_PATCH:
        return _bounded(_as_object(merge_patch(target, patch)))
    if content_type == STRATEGIC_PATCH:
        return _bounded(_as_object(strategic_patch(target, patch, "")))
    if content_type == JSON_PATCH:
        return _bounded(_as_object(json_patch(target, patch)))
    raise StatusError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(PATCH_CONTENT_TYPES),
    )


def _bounded(patched: dict[str, Any]) -> dict[str, Any]:
    size = _encoded_size(patched)
    if size > MAX_PATCHED_BYTES:
        raise _too_large(f"the patched object would be {size} bytes, above the limit of {MAX_PATCHED_BYTES}")
    return patched


def _as_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad_request("the patch turned the object into something that is not a JSON object")
    return value


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def strategic_patch(target: Any, patch: Any, field: str) -> Any:
    """Merge patch, plus keyed list merging for the fields in :data:`STRATEGIC_KEYS`."""
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
        out = dict(target) if isinstance(target, dict) else {}
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = strategic_patch(out.get(key), value, key)
        return out
    if isinstance(patch, list) and isinstance(target, list):
        if field in STRATEGIC_KEYS:
            return _merge_keyed_list(target, patch, STRATEGIC_KEYS[field])
        if field in _PRIMITIVE_SETS:
            return list(target) + [v for v in patch if v not in target]
    return copy.deepcopy(patch)


def _merge_keyed_list(target: list[Any], patch: list[Any], key: str) -> list[Any]:
    out = [copy.deepcopy(item) for item in target]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise bad_request(f"strategic merge patch: list items need the merge key {key!r}")
        index = next(
            (i for i, cur in enumerate(out) if isinstance(cur, dict) and cur.get(key) == item[key]), None
        )
        if item.get("$patch") == "delete":
            if index is not None:
                del out[index]
        elif index is None:
            out.append({k: copy.deepcopy(v) for k, v in item.items() if k != "$patch"})
        else:
            out[index] = strategic_patch(out[index], item, "")
    return out


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: add, remove, replace, move, copy and test, applied in order."""
    if not isinstance(operations, list):
        raise bad_request("json patch: expected a list of operations")
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise _too_large(
            f"a JSON patch may hold at most {MAX_JSON_PATCH_OPERATIONS} operations, got {len(operations)}"
        )
    for number, op in enumerate(operations):
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise bad_request(f"json patch operation {number}: needs 'op' and 'path'")
        if not isinstance(op["op"], str) or not isinstance(op["path"], str):
            raise bad_request(f"json patch operation {number}: 'op' and 'path' must be strings")
    doc = copy.deepcopy(target)
    copied = [0]
    for op in operations:
        doc = _json_patch_op(doc, op, copied)
    return doc


def _bounded_copy(value: Any, copied: list[int]) -> Any:
    """A copy of ``value`` for a ``copy`` operation, counted against :data:`MAX_COPY_BYTES`
    first (``copied[0]`` holds what the patch's earlier copies added)."""
    try:
        encoded = json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError):  # not plain JSON (a YAML timestamp, ...): copy it the slow way
        encoded = None
    copied[0] += len(encoded) if encoded is not None else _encoded_size(str(value))
    if copied[0] > MAX_COPY_BYTES:
        raise StatusError(
            422,
            "Invalid",
            f"json patch: the copy operations would add {copied[0]} bytes, "
            f"above the limit of {MAX_COPY_BYTES}",
        )
    return json.loads(encoded) if encoded is not None else copy.deepcopy(value)


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise bad_request(f"json patch: path {path!r} must start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _resolve(doc: Any, parts: list[str], path: str) -> Any:
    current = doc
    for part in parts:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            raise bad_request(f"json patch: path {path!r} does not exist")
    return current


def _json_patch_op(doc: Any, op: dict[str, Any], copied: list[int]) -> Any:
    kind, path = op["op"], op["path"]
    parts = _pointer(path)
    if kind == "test":
        if _resolve(doc, parts, path) != op.get("value"):
            raise StatusError(422, "Invalid", f"json patch: test failed at {path!r}")
        return doc
    if kind in ("move", "copy"):
        source = op.get("from", "")
        if not isinstance(source, str):
            raise bad_request(f"json patch: 'from' of {kind} at {path!r} must be a string")
        found = _resolve(doc, _pointer(source), source)
        value = _bounded_copy(found, copied) if kind == "copy" else copy.deepcopy(found)
        if kind == "move":
            doc = _remove(doc, _pointer(source), source)
        return _add(doc, parts, value, path)
    if kind == "remove":
        return _remove(doc, parts, path)
    if kind in ("add", "replace"):
        if "value" not in op:
            raise bad_request(f"json patch: {kind} at {path!r} needs a value")
        if kind == "replace":
            _resolve(doc, parts, path)
            doc = _remove(doc, parts, path)
        return _add(doc, parts, copy.deepcopy(op["value"]), path)
    raise bad_request(f"json patch: unknown operation {kind!r}")


def _add(doc: Any, parts: list[str], value: Any, path: str) -> Any:
    if not parts:
        return value
    parent = _resolve(doc, parts[:-1], path)
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise bad_request(f"json patch: index in {path!r} is out of range")
    else:
        raise bad_request(f"json patch: cannot add at {path!r}")
    return doc


def _remove(doc: Any, parts: list[str], path: str) -> Any:
    if not parts:
        raise bad_request("json patch: cannot remove the whole document")
    parent = _resolve(doc, parts[:-1], path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
    else:
        raise bad_request(f"json patch: path {path!r} does not exist")
    return doc
