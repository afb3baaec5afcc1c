"""Request bodies: JSON objects (parsed, never evaluated, depth-limited) and Kubernetes protobuf."""

from __future__ import annotations

import json
from typing import Any

from drasim.apiserver.routes import Route
from drasim.apiserver.status import StatusError, bad_request

JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"


def decode_protobuf(body: bytes, *, group: str, version: str, kind: str) -> dict[str, Any]:
    """Decode a Kubernetes protobuf body through :mod:`drasim.apiserver.k8spb` (imported lazily)."""
    try:
        from drasim.apiserver.k8spb import decode_request_body
    except ImportError:
        raise StatusError(
            415,
            "UnsupportedMediaType",
            f"this drasim build cannot decode {PROTOBUF} request bodies; send {JSON}",
        ) from None
    return decode_request_body(body, group=group, version=version, kind=kind)


def json_object(body: bytes) -> dict[str, Any]:
    """Parse a JSON object body (never evaluated otherwise); 400 when it is not one."""
    try:
        obj = json.loads(body or b"{}")
    except (ValueError, RecursionError) as err:
        raise bad_request(f"couldn't get version/kind; json parse error: {err}") from None
    if not isinstance(obj, dict):
        raise bad_request("the request body must be a JSON object")
    check_depth(obj)
    return obj


MAX_DEPTH = 100


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Refuse JSON nested deeper than ``limit`` (400): deeper objects are never real manifests."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise bad_request(f"the request body is nested deeper than {limit} levels")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def check_kind(route: Route, obj: dict[str, Any]) -> None:
    kind = obj.get("kind")
    if kind and kind != route.rtype.kind:
        raise bad_request(f"the kind in the data ({kind}) does not match the URL ({route.rtype.kind})")
    api_version = obj.get("apiVersion")
    if api_version and api_version != route.api_version:
        raise bad_request(
            f"the API version in the data ({api_version}) does not match "
            f"the expected API version ({route.api_version})"
        )
