"""KubeClientCluster: the Cluster operations through the kubernetes Python client.

The same class talks to :class:`~drasim.apiserver.http.HttpApiServer` and to a real
cluster (moto's lesson: the code path under test must not depend on whether the
server is fake). It builds REST paths itself and sends them with the client's
generic ``ApiClient`` (``param_serialize`` + ``call_api``), so any served
resource.k8s.io version can be chosen. ``kubernetes`` is imported lazily.
"""

from __future__ import annotations

import builtins
import json
import os
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote

from drasim.apiserver.kinds import RESOURCE_GROUP, RESOURCE_VERSIONS, Registry, ResourceType
from drasim.apiserver.kubewatch import KubeWatch
from drasim.apiserver.port import PATCH_TYPES, KubeObject
from drasim.apiserver.routes import parse_resource_path
from drasim.errors import ApiError, ConfigError
from drasim.interfaces import Recorder

JSON = "application/json"
#: Real seconds a request other than a watch may take before it fails (a hung cluster must not
#: hang a run).
DEFAULT_TIMEOUT = 30.0


def _api_error(status: int, body: bytes) -> ApiError:
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("kind") == "Status":
        return ApiError(
            int(data.get("code") or status), str(data.get("reason") or ""), str(data.get("message"))
        )
    return ApiError(status, "Unknown", body.decode("utf-8", "replace")[:500] or f"HTTP {status}")


class KubeClientCluster:
    """ClaimReader + Cluster operations over HTTP with the kubernetes Python client.

    ``source`` is a kubeconfig path or a ready ``kubernetes.client.ApiClient``.
    ``claim_version`` is the resource.k8s.io version :meth:`get_resource_claim` uses.
    """

    def __init__(
        self,
        source: str | os.PathLike[str] | Any,
        *,
        claim_version: str = "v1",
        context: str | None = None,
        user_agent: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        recorder: Recorder | None = None,
        client: str = "",
    ) -> None:
        if isinstance(source, str | os.PathLike):
            from kubernetes import config

            try:
                self.api_client = config.new_client_from_config(  # type: ignore[no-untyped-call]
                    config_file=os.fspath(source), context=context
                )
            except Exception as err:  # malformed files raise yaml, type and key errors too
                detail = " ".join(line.strip() for line in str(err).splitlines() if line.strip())
                detail = detail or type(err).__name__
                raise ConfigError(f"cannot load kubeconfig {os.fspath(source)!r}: {detail}") from err
        else:
            self.api_client = source
        if user_agent:
            self.api_client.user_agent = user_agent
        self.timeout = timeout
        self.recorder = recorder
        self.client = client or user_agent or ""
        self.claim_version = claim_version
        self._registry = Registry({RESOURCE_GROUP: RESOURCE_VERSIONS})
        self._created: list[tuple[str, str, str, str]] = []

    def sibling(
        self, user_agent: str, client: str = "", claim_version: str | None = None
    ) -> KubeClientCluster:
        """Another client of the same server and credentials under another user agent (no reload)."""
        from kubernetes.client import ApiClient

        return KubeClientCluster(
            ApiClient(self.api_client.configuration),
            claim_version=claim_version or self.claim_version,
            user_agent=user_agent,
            timeout=self.timeout,
            recorder=self.recorder,
            client=client or user_agent,
        )

    # ---------------------------------------------------------------- plumbing
    def _type(self, api_version: str, kind: str) -> ResourceType:
        return self._registry.by_kind(api_version, kind)[0]

    def _path(self, api_version: str, kind: str, namespace: str = "", name: str = "", sub: str = "") -> str:
        rtype = self._type(api_version, kind)
        path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        if rtype.namespaced and namespace:
            path += f"/namespaces/{quote(namespace, safe='')}"
        path += f"/{rtype.resource}"
        for part in (name, sub):
            if part:
                path += f"/{quote(part, safe='')}"
        return path

    def _send(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: float | tuple[float, float | None] | None = None,
    ) -> Any:
        """One request; returns the urllib3 response (status 2xx) or raises ApiError."""
        headers = {"Accept": JSON}
        if body is not None:
            headers["Content-Type"] = content_type
        request = self.api_client.param_serialize(
            method=method,
            resource_path=path,
            query_params=query or [],
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        start = time.monotonic()
        try:
            response = self.api_client.call_api(
                *request, _request_timeout=self.timeout if timeout is None else timeout
            )
        except Exception as err:  # urllib3 / ssl / socket errors: the server is unreachable
            self._journal(method, path, query, 0, start)
            raise unreachable(self.api_client.configuration.host, err) from err
        self._journal(method, path, query, response.status, start)
        if not 200 <= response.status <= 299:
            raise _api_error(response.status, response.read() or b"")
        return response

    def _journal(
        self, method: str, path: str, query: list[tuple[str, str]] | None, code: int, start: float
    ) -> None:
        """An ``api`` journal event, as drasim's own server records one (only with a ``recorder``:
        for a server that journals nothing itself, such as a real cluster)."""
        if self.recorder is None:
            return
        try:
            route = parse_resource_path([unquote(p) for p in path.split("/") if p], self._registry)
        except ApiError:
            return  # discovery, /version, access reviews
        watch = any(key == "watch" for key, _ in query or [])
        if method == "GET":
            verb = "get" if route.name else ("watch" if watch else "list")
        elif method == "DELETE":
            verb = "delete" if route.name else "deletecollection"
        else:
            verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())
        self.recorder.record(
            "api",
            verb=verb,
            resource=route.rtype.resource,
            subresource=route.subresource,
            group=route.group,
            version=route.version,
            namespace=route.namespace,
            name=route.name,
            code=code,
            client=self.client,
            duration=time.monotonic() - start,
        )

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return json.loads(self._send(method, path, **kwargs).read() or b"null")

    @property
    def host(self) -> str:
        """The API server URL from the kubeconfig."""
        return str(self.api_client.configuration.host)

    def request_json(self, method: str, path: str, body: Any = None) -> Any:
        """Any JSON request (discovery, ``/version``, access reviews); ApiError on failure."""
        return self._json(method, path, body=body)

    @staticmethod
    def _id(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise ApiError(400, "BadRequest", "object needs apiVersion and kind")
        md = obj.get("metadata") or {}
        return api_version, kind, md.get("namespace") or "", md.get("name") or ""

    def _ns(self, api_version: str, kind: str, namespace: str) -> str:
        return namespace or ("default" if self._type(api_version, kind).namespaced else "")

    # -------------------------------------------------------------- reading
    def get_resource_claim(self, namespace: str, name: str) -> KubeObject:
        """GET resource.k8s.io/<claim_version> ResourceClaim; ApiError 404 when missing or unserved."""
        return self.get(f"{RESOURCE_GROUP}/{self.claim_version}", "ResourceClaim", name, namespace)

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> KubeObject:
        """GET one object."""
        ns = self._ns(api_version, kind, namespace)
        result: KubeObject = self._json("GET", self._path(api_version, kind, ns, name))
        return result

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> builtins.list[KubeObject]:
        """LIST objects, following ``continue`` tokens."""
        items: builtins.list[KubeObject] = []
        token = ""
        while True:
            query = [*_selectors(label_selector, field_selector), ("limit", "500")]
            if token:
                query.append(("continue", token))
            page = self._json("GET", self._path(api_version, kind, namespace), query=query)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return items

    # -------------------------------------------------------------- writing
    def create(self, obj: Mapping[str, Any]) -> KubeObject:
        """POST; a ``status`` in the manifest is then written through the status subresource."""
        api_version, kind, namespace, name = self._id(obj)
        ns = self._ns(api_version, kind, namespace)
        created: KubeObject = self._json("POST", self._path(api_version, kind, ns), body=dict(obj))
        md = created.get("metadata") or {}
        self._created.append((api_version, kind, md.get("namespace") or "", md.get("name") or name))
        if self._type(api_version, kind).has_status and obj.get("status"):
            created["status"] = obj["status"]
            return self.update_status(created)
        return created

    def apply(self, obj: Mapping[str, Any]) -> KubeObject:
        """Create, or merge-patch the manifest over the existing object (then its status)."""
        api_version, kind, namespace, name = self._id(obj)
        try:
            self.get(api_version, kind, name, namespace)
        except ApiError as err:
            if err.code != 404 or not name:
                raise
            return self.create(obj)
        body = {k: v for k, v in obj.items() if k != "status"}
        body["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "resourceVersion"}
        result = self.patch(api_version, kind, name, body, namespace)
        if self._type(api_version, kind).has_status and "status" in obj:
            return self.patch(
                api_version, kind, name, {"status": obj["status"]}, namespace, subresource="status"
            )
        return result

    def update(self, obj: Mapping[str, Any]) -> KubeObject:
        """PUT; a stale resourceVersion raises ApiError 409."""
        api_version, kind, namespace, name = self._id(obj)
        ns = self._ns(api_version, kind, namespace)
        result: KubeObject = self._json("PUT", self._path(api_version, kind, ns, name), body=dict(obj))
        return result

    def update_status(self, obj: Mapping[str, Any]) -> KubeObject:
        """PUT the status subresource."""
        api_version, kind, namespace, name = self._id(obj)
        ns = self._ns(api_version, kind, namespace)
        path = self._path(api_version, kind, ns, name, "status")
        result: KubeObject = self._json("PUT", path, body=dict(obj))
        return result

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        namespace: str = "",
        *,
        patch_type: str = "merge",
        subresource: str = "",
    ) -> KubeObject:
        """PATCH with ``patch_type`` merge, json or strategic."""
        content_type = PATCH_TYPES.get(patch_type)
        if content_type is None:
            raise ConfigError(f"unknown patch type {patch_type!r}; valid: {', '.join(PATCH_TYPES)}")
        ns = self._ns(api_version, kind, namespace)
        path = self._path(api_version, kind, ns, name, subresource)
        result: KubeObject = self._json("PATCH", path, body=patch, content_type=content_type)
        return result

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str = "",
        *,
        uid: str | None = None,
        resource_version: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> KubeObject:
        """DELETE with optional preconditions and grace period (sent as DeleteOptions)."""
        ns = self._ns(api_version, kind, namespace)
        pre = {k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v}
        body: dict[str, Any] | None = None
        if pre or grace_period_seconds is not None:
            body = {"apiVersion": "v1", "kind": "DeleteOptions"}
            if pre:
                body["preconditions"] = pre
            if grace_period_seconds is not None:
                body["gracePeriodSeconds"] = grace_period_seconds
        result: KubeObject = self._json("DELETE", self._path(api_version, kind, ns, name), body=body)
        return result

    def delete_collection(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> builtins.list[KubeObject]:
        """DELETE on the collection; returns the deleted objects when the server lists them."""
        query = _selectors(label_selector, field_selector)
        result = self._json("DELETE", self._path(api_version, kind, namespace), query=query)
        items: builtins.list[KubeObject] = result.get("items") or [] if isinstance(result, dict) else []
        return items

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str = "",
        *,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        send_initial_events: bool | None = None,
        allow_bookmarks: bool = False,
        timeout_seconds: int = 0,
    ) -> KubeWatch:
        """WATCH; events arrive on a background thread (see :class:`KubeWatch`)."""
        query = [("watch", "true"), *_selectors(label_selector, field_selector)]
        if resource_version is not None:
            query.append(("resourceVersion", resource_version))
        if allow_bookmarks:
            query.append(("allowWatchBookmarks", "true"))
        if send_initial_events is not None:
            query.append(("sendInitialEvents", "true" if send_initial_events else "false"))
            query.append(("resourceVersionMatch", "NotOlderThan"))
        if timeout_seconds:
            query.append(("timeoutSeconds", str(timeout_seconds)))
        # Connecting may time out; reading an idle watch may not.
        response = self._send(
            "GET", self._path(api_version, kind, namespace), query=query, timeout=(self.timeout or 30.0, None)
        )
        return KubeWatch(response.response)

    def reset(self) -> None:
        """POST /drasim/reset on a drasim server; on a real cluster delete what this client created."""
        try:
            self._send("POST", "/drasim/reset")
        except ApiError as err:
            if err.code != 404:
                raise
            for api_version, kind, namespace, name in reversed(self._created):
                try:
                    self.delete(api_version, kind, name, namespace)
                except ApiError as gone:
                    if gone.code != 404:
                        raise
        self._created.clear()


def unreachable(host: str, err: BaseException) -> ApiError:
    """The error for a request that got no HTTP answer (connection refused, TLS, timeout)."""
    detail = str(getattr(err, "reason", None) or err).strip() or type(err).__name__
    return ApiError(503, "ServiceUnavailable", f"cannot reach the API server at {host}: {detail}")


def _selectors(label_selector: str, field_selector: str) -> list[tuple[str, str]]:
    query = []
    if label_selector:
        query.append(("labelSelector", label_selector))
    if field_selector:
        query.append(("fieldSelector", field_selector))
    return query
