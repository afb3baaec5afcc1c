"""LIST answers for the HTTP face: List objects, ``limit``/``continue`` paging, deletecollection.

Paging is real but simple: items are ordered by (namespace, name) and the
``continue`` token names the last item returned, so a client that pages
through a changing collection sees each surviving object once. The list's
``resourceVersion`` is always the latest (``resourceVersion`` and
``resourceVersionMatch`` on a LIST are accepted and otherwise ignored).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from drasim.apiserver.routes import Route
from drasim.apiserver.status import bad_request
from drasim.apiserver.store import ObjectStore


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    md = obj.get("metadata", {})
    return md.get("namespace", ""), md.get("name", "")


def _encode_token(key: tuple[str, str], resource_version: int) -> str:
    raw = json.dumps({"rv": resource_version, "ns": key[0], "name": key[1]}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_token(token: str) -> tuple[str, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        return str(data["ns"]), str(data["name"])
    except (ValueError, KeyError, TypeError):
        raise bad_request("continue key is not valid: it was not produced by this server") from None


def _limit(query: dict[str, str]) -> int:
    raw = query.get("limit") or "0"
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"limit: {raw!r} is not an integer") from None
    return max(value, 0)


def list_object(route: Route, items: list[dict[str, Any]], resource_version: int) -> dict[str, Any]:
    """A ``<Kind>List`` with the given items."""
    return {
        "kind": route.rtype.list_kind,
        "apiVersion": route.api_version,
        "metadata": {"resourceVersion": str(resource_version)},
        "items": items,
    }


def list_page(store: ObjectStore, route: Route, query: dict[str, str]) -> dict[str, Any]:
    """One page of a LIST, honouring selectors, ``limit`` and ``continue``."""
    items, rv = store.list(
        route.rtype,
        route.version,
        route.namespace,
        label_selector=query.get("labelSelector", ""),
        field_selector=query.get("fieldSelector", ""),
    )
    token = query.get("continue")
    if token:
        start = _decode_token(token)
        items = [item for item in items if _key(item) > start]
    limit = _limit(query)
    body = list_object(route, items, rv)
    if limit and len(items) > limit:
        body["items"] = items[:limit]
        body["metadata"]["continue"] = _encode_token(_key(items[limit - 1]), rv)
        if not query.get("labelSelector") and not query.get("fieldSelector"):
            # Upstream counts the rest only when no selector filters it (storage.PrepareContinueToken).
            body["metadata"]["remainingItemCount"] = len(items) - limit
    return body


def delete_collection(store: ObjectStore, route: Route, query: dict[str, str]) -> dict[str, Any]:
    """DELETE on a collection: the deleted objects as a List."""
    deleted = store.delete_collection(
        route.rtype,
        route.version,
        route.namespace,
        label_selector=query.get("labelSelector", ""),
        field_selector=query.get("fieldSelector", ""),
    )
    return list_object(route, deleted, store.resource_version)
