"""Where a fake driver gets ResourceClaims from, and what it reads in them.

Like the stock helper, the driver GETs every claim during NodePrepareResources. A
claim source is any callable ``(namespace, name) -> claim dict`` that raises
:class:`drasim.errors.ApiError` when the claim cannot be read. Three are provided:
a wrapper for in-process objects, a directory of manifest files, and the
kubernetes Python client with a kubeconfig (resource.k8s.io v1, then v1beta2, then
v1beta1 on 404, as the helper's converting client does).
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drasim.apiversions import DEFAULT_RESOURCE_API_VERSIONS
from drasim.errors import ApiError, ConfigError

KubeObject = dict[str, Any]
ClaimSource = Callable[[str, str], KubeObject]

RESOURCE_VERSIONS = DEFAULT_RESOURCE_API_VERSIONS
"""The versions a claim is read through when the client has none of its own, newest first."""


@dataclass(frozen=True)
class AllocatedDevice:
    """One allocation result of this driver (``status.allocation.devices.results[]``)."""

    request: str
    pool: str
    device: str
    share_id: str | None = None
    admin_access: bool = False


def base_request(name: str) -> str:
    """``main/sub`` → ``main`` (upstream ``resourceclaim.BaseRequestRef``)."""
    return name.split("/", 1)[0]


def allocated_devices(claim: KubeObject, driver: str) -> list[AllocatedDevice]:
    """This driver's allocation results of a claim, in order."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or []
    return [
        AllocatedDevice(
            request=str(r.get("request", "")),
            pool=str(r.get("pool", "")),
            device=str(r.get("device", "")),
            share_id=r.get("shareID"),
            admin_access=bool(r.get("adminAccess")),
        )
        for r in results
        if r.get("driver") == driver
    ]


def is_allocated(claim: KubeObject) -> bool:
    """``status.allocation`` is set."""
    return (claim.get("status") or {}).get("allocation") is not None


def claim_uid(claim: KubeObject) -> str:
    """``metadata.uid``."""
    return str((claim.get("metadata") or {}).get("uid", ""))


def from_reader(reader: Any) -> ClaimSource:
    """Adapt an object with ``get_resource_claim(namespace, name)`` (drasim's ClaimReader)."""

    def get(namespace: str, name: str) -> KubeObject:
        return typing.cast(KubeObject, reader.get_resource_claim(namespace, name))

    return get


class FileClaimSource:
    """Claims from manifest files (JSON or YAML; one object, a list, or a ``List``).

    ``path`` is a file or a directory searched recursively. Files are re-read on
    every lookup, so a test can change a claim between calls.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __call__(self, namespace: str, name: str) -> KubeObject:
        for obj in self._objects():
            meta = obj.get("metadata") or {}
            if (
                obj.get("kind") == "ResourceClaim"
                and meta.get("name") == name
                and meta.get("namespace", "default") == namespace
            ):
                return obj
        raise ApiError.not_found("resourceclaims.resource.k8s.io", name)

    def _objects(self) -> Iterator[KubeObject]:
        files = sorted(self.path.rglob("*")) if self.path.is_dir() else [self.path]
        for file in files:
            if file.suffix not in (".json", ".yaml", ".yml"):
                continue
            yield from _documents(file)


def _documents(file: Path) -> Iterator[KubeObject]:
    from fake_plugins.config import parse_document

    text = file.read_text(encoding="utf-8")
    if file.suffix == ".json":
        docs: list[Any] = [json.loads(text)]
    else:
        import yaml

        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            docs = [parse_document(text, str(file))]
    for doc in docs:
        items = doc if isinstance(doc, list) else (doc or {}).get("items", [doc])
        yield from (item for item in items if isinstance(item, dict))


class KubeClaimSource:
    """Claims through the kubernetes Python client (resource.k8s.io v1, v1beta2, v1beta1)."""

    def __init__(self, kubeconfig: str | Path) -> None:
        from kubernetes import client, config

        try:
            api_client = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
        except Exception as err:
            raise ConfigError(f"{kubeconfig}: cannot load kubeconfig: {err}") from err
        self._api = client.CustomObjectsApi(api_client)
        self._version: str | None = None

    def __call__(self, namespace: str, name: str) -> KubeObject:
        from kubernetes.client.exceptions import ApiException

        versions = [self._version] if self._version else list(RESOURCE_VERSIONS)
        last: ApiError | None = None
        for version in versions:
            try:
                obj = self._api.get_namespaced_custom_object(
                    "resource.k8s.io", version, namespace, "resourceclaims", name
                )
            except ApiException as err:
                last = _api_error(err, name)
                if err.status == 404:
                    continue
                raise last from err
            self._version = version
            return typing.cast(KubeObject, obj)
        assert last is not None
        raise last


def _api_error(err: Any, name: str) -> ApiError:
    try:
        body = json.loads(err.body or "{}")
    except ValueError:
        body = {}
    status = int(err.status or 0)
    if status == 404 and not body.get("message"):
        return ApiError.not_found("resourceclaims.resource.k8s.io", name)
    return ApiError(status, str(body.get("reason", err.reason)), str(body.get("message", err.reason)))
