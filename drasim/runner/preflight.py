"""Checks a real cluster once before a ``--backend kubeconfig`` run, so problems are one clear line.

An unreachable server, rejected credentials, a cluster without resource.k8s.io/v1, or a
user that may not do what a run does (see docs/backends.md, "RBAC") stop the run with a
:class:`~drasim.errors.ConfigError` (exit 2) before any scenario starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from drasim.errors import ApiError, ConfigError

if TYPE_CHECKING:
    from drasim.apiserver.kubeclient import KubeClientCluster

PREFLIGHT_TIMEOUT = 10.0
# (verb, API group, resource, subresource) a run needs; docs/backends.md lists the same.
NEEDED: tuple[tuple[str, str, str, str], ...] = (
    ("create", "", "namespaces", ""),
    ("delete", "", "namespaces", ""),
    ("create", "", "nodes", ""),
    ("delete", "", "nodes", ""),
    ("create", "", "pods", ""),
    ("delete", "", "pods", ""),
    ("patch", "", "pods", "status"),
    ("update", "", "pods", "status"),
    ("list", "resource.k8s.io", "resourceclaims", ""),
    ("create", "resource.k8s.io", "resourceclaims", ""),
    ("delete", "resource.k8s.io", "resourceclaims", ""),
    ("update", "resource.k8s.io", "resourceclaims", "status"),
    # Since 1.36 (DRAResourceClaimGranularStatusAuthorization) writing status.allocation or
    # status.reservedFor also needs this synthetic subresource, as the scheduler has.
    ("update", "resource.k8s.io", "resourceclaims", "binding"),
    ("get", "resource.k8s.io", "resourceclaimtemplates", ""),
    ("create", "resource.k8s.io", "resourceclaimtemplates", ""),
    ("list", "resource.k8s.io", "resourceslices", ""),
    ("create", "resource.k8s.io", "resourceslices", ""),
    ("deletecollection", "resource.k8s.io", "resourceslices", ""),
    ("list", "resource.k8s.io", "deviceclasses", ""),
    ("create", "resource.k8s.io", "deviceclasses", ""),
    ("delete", "resource.k8s.io", "deviceclasses", ""),
)
REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def check_cluster(path: Path, context: str | None = None) -> str:
    """Reach the cluster of ``path`` and check what a run needs; returns the server URL.

    Raises ConfigError with one line: the kubeconfig cannot be loaded, the server cannot be
    reached, it rejects the credentials, it does not serve resource.k8s.io/v1, or the user
    lacks permissions (listed). A server without access reviews (drasim's own) is not asked.
    """
    from drasim.apiserver.kubeclient import KubeClientCluster

    if not path.is_file():
        raise ConfigError(f"--kubeconfig {path}: no such file")
    cluster = KubeClientCluster(
        path, context=context, user_agent="drasim-preflight", timeout=PREFLIGHT_TIMEOUT
    )
    where = f"the API server {cluster.host} (kubeconfig {path})"
    try:
        cluster.request_json("GET", "/version")
    except ApiError as err:
        raise ConfigError(_describe(err, where)) from None
    try:
        cluster.request_json("GET", "/apis/resource.k8s.io/v1")
    except ApiError as err:
        if err.code == 404:
            msg = f"{where} does not serve resource.k8s.io/v1 (DRA needs Kubernetes 1.34 or newer)"
            raise ConfigError(msg) from None
        raise ConfigError(_describe(err, where)) from None
    denied = _denied(cluster, where)
    if denied:
        msg = f"{where}: the user may not {', '.join(denied)} (the RBAC a run needs: docs/backends.md)"
        raise ConfigError(msg)
    return cluster.host


def _describe(err: ApiError, where: str) -> str:
    if err.code == 401:
        return f"{where} rejected the credentials: 401 Unauthorized"
    if err.code == 403:
        return f"{where} forbids this user: {err.message}"
    if err.reason == "ServiceUnavailable" and err.message.startswith("cannot reach"):
        return f"cannot reach {where}: {err.message.split(': ', 1)[-1]}"
    return f"{where} answered {err.code} {err.reason}: {err.message}"


def _denied(cluster: KubeClientCluster, where: str) -> list[str]:
    """The NEEDED permissions the user lacks ('verb resource[/sub]'); [] when the server cannot say."""
    denied: list[str] = []
    for verb, group, resource, sub in NEEDED:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {"verb": verb, "group": group, "resource": resource, "subresource": sub}
            },
        }
        try:
            answer = cluster.request_json("POST", REVIEWS, review)
        except ApiError as err:
            if err.code in (404, 405):
                return []  # no authorization API: nothing to ask
            raise ConfigError(_describe(err, where)) from None
        if not (answer or {}).get("status", {}).get("allowed"):
            denied.append(f"{verb} {resource}{'/' + sub if sub else ''}")
    return denied
