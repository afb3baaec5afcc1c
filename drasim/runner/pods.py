"""Pods as the runner tracks them, and the manifests it creates for them.

The runner plays the scheduler and the kubelet's pod worker: it binds pods to the
node, creates claims from templates, allocates and reserves claims, and calls the
emulated kubelet's PrepareResources / UnprepareResources at the moments the real
kubelet would (before the sandbox starts; after the containers stopped).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drasim.scenario.steps import Container, ContainerClaim, PodClaim

KubeObject = dict[str, Any]
_API_PHASES = ("Pending", "Running", "Succeeded")


def split_ref(ref: str, default_namespace: str = "default") -> tuple[str, str]:
    """``ns/name`` or ``name`` (in ``default_namespace``) → (namespace, name)."""
    if "/" in ref:
        namespace, name = ref.split("/", 1)
        return namespace, name
    return default_namespace, ref


def pod_claims(claims: list[PodClaim | str]) -> list[PodClaim]:
    """Normalise the YAML shorthand: a string ``x`` is ``{name: x, claim: x}``."""
    result = []
    for item in claims:
        if isinstance(item, str):
            result.append(PodClaim(name=item, claim=item))
        elif not item.claim and not item.template:
            result.append(PodClaim(name=item.name, claim=item.name))
        else:
            result.append(item)
    return result


def containers_of(containers: list[Container], claims: list[PodClaim]) -> list[Container]:
    """The pod's containers; none given means one container ``ctr`` using every pod claim."""
    if containers:
        return containers
    return [Container(name="ctr", claims=[ContainerClaim(name=c.name) for c in claims])]


def container_claims(container: Container) -> list[ContainerClaim]:
    """A container's claim references with the string shorthand expanded."""
    return [ContainerClaim(name=c) if isinstance(c, str) else c for c in container.claims]


@dataclass
class PodRecord:
    """One pod bound to the node."""

    name: str
    namespace: str
    uid: str
    claims: list[PodClaim]
    containers: list[Container]
    phase: str = "Pending"
    """Pending, Running, Terminating, Succeeded or Gone."""
    remove_after_unprepare: bool = False
    """deletePod: remove the pod from the API server once unprepared."""
    deletion_marked: bool = False
    """The Pod object waits in the API server with a deletionTimestamp (graceful delete not finished)."""
    in_api: bool = True
    generated_claims: dict[str, str] = field(default_factory=dict)
    """pod claim name -> generated ResourceClaim name (templates)."""
    retry_due: float | None = None
    """Nominal time of the pod worker's next retry (failed prepare/unprepare)."""
    cdi: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    """container name -> CDI device IDs handed to it at its last start, one tuple per device."""

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @property
    def active(self) -> bool:
        """Whether the kubelet counts the pod as active (upstream ``GetActivePods``).

        ``filterOutInactivePods`` (kubelet_pods.go) keeps every pod of the pod manager that the
        pod worker has not finished: a pod being terminated (Terminating, its unprepare not yet
        successful) still counts, so reconcile leaves it to the pod worker. Force-deleted pods
        left the pod manager and finished (Succeeded) pods are inactive.
        """
        return self.phase in ("Pending", "Running", "Terminating") and self.in_api

    def claim_name(self, pod_claim: PodClaim) -> str | None:
        """The ResourceClaim name a pod claim resolves to."""
        if pod_claim.claim:
            return pod_claim.claim
        return self.generated_claims.get(pod_claim.name)

    def manifest(self, node: str) -> KubeObject:
        """The Pod object as the API server holds it (spec.nodeName set: it is bound)."""
        spec_claims: list[dict[str, Any]] = []
        statuses: list[dict[str, Any]] = []
        for pc in self.claims:
            if pc.claim:
                spec_claims.append({"name": pc.name, "resourceClaimName": pc.claim})
            else:
                spec_claims.append({"name": pc.name, "resourceClaimTemplateName": pc.template})
                if pc.name in self.generated_claims:
                    statuses.append({"name": pc.name, "resourceClaimName": self.generated_claims[pc.name]})
        containers: list[dict[str, Any]] = []
        init: list[dict[str, Any]] = []
        for ctr in self.containers:
            refs = []
            for ref in container_claims(ctr):
                entry = {"name": ref.name}
                if ref.request:
                    entry["request"] = ref.request
                refs.append(entry)
            body = {"name": ctr.name, "image": "registry.k8s.io/pause:3.10", "resources": {"claims": refs}}
            (init if ctr.init else containers).append(body)
        spec: dict[str, Any] = {"nodeName": node, "containers": containers, "resourceClaims": spec_claims}
        if init:
            spec["initContainers"] = init
        pod: KubeObject = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": self.name, "namespace": self.namespace, "uid": self.uid},
            "spec": spec,
            "status": {
                "phase": self.phase if self.phase in ("Pending", "Running", "Succeeded") else "Running"
            },
        }
        if statuses:
            pod["status"]["resourceClaimStatuses"] = statuses
        return pod

    def container_manifest(self, name: str, node: str) -> KubeObject:
        """One container of :meth:`manifest` (init containers included)."""
        pod = self.manifest(node)
        for ctr in [*pod["spec"].get("initContainers", []), *pod["spec"]["containers"]]:
            if ctr["name"] == name:
                return dict(ctr)
        msg = f"pod {self.key} has no container {name!r}"
        raise KeyError(msg)


def claim_from_template(template: KubeObject, *, name: str, pod: PodRecord) -> KubeObject:
    """The ResourceClaim the resourceclaim controller creates for a pod from a template."""
    spec = template.get("spec", {}).get("spec", {})
    metadata = dict(template.get("spec", {}).get("metadata", {}) or {})
    metadata.update(
        {
            "name": name,
            "namespace": pod.namespace,
            "annotations": {"resource.kubernetes.io/pod-claim-name": name.rsplit("-", 1)[-1]},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.name,
                    "uid": pod.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
    )
    return {
        "apiVersion": template.get("apiVersion", "resource.k8s.io/v1"),
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": spec,
    }
