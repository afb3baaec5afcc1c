"""Which ResourceClaim a pod claim names, and whether the pod may use it.

A port of the helpers in staging/src/k8s.io/dynamic-resource-allocation/resourceclaim
(``resourceclaim.go``) in the shape the kubelet calls them at the reference commit:
``Name(pod, podClaim)`` and ``IsForPod`` / ``IsReservedForPod`` taking a boolean
"pod-group claims enabled" (the ``DRAWorkloadResourceClaims`` gate).
"""

from __future__ import annotations

from drasim.errors import KubeletError
from drasim.kubelet.objects import ClaimView, PodResourceClaim, PodView

__all__ = [
    "ApiUnsupportedError",
    "ClaimNotCreatedError",
    "claim_name",
    "is_controlled_by",
    "is_for_pod",
    "is_reserved_for_pod",
]

SCHEDULING_GROUP = "scheduling.k8s.io"
POD_GROUP_RESOURCE = "podgroups"


class ClaimNotCreatedError(KubeletError):
    """Wraps upstream ``ErrClaimNotFound``: the template claim has no generated name yet."""


class ApiUnsupportedError(KubeletError):
    """Wraps upstream ``ErrAPIUnsupported``: none of the supported pod-claim fields is set."""


def claim_name(pod: PodView, pod_claim: PodResourceClaim) -> tuple[str | None, bool]:
    """Mirrors ``resourceclaim.Name``: ``(name or None, must_check_owner)``.

    * ``resourceClaimName`` set: that name; the owner need not be checked.
    * ``resourceClaimTemplateName`` set: the name recorded in
      ``pod.status.resourceClaimStatuses`` for this pod claim, which may be ``None``
      ("intentionally not created": the caller skips the claim); the owner must be
      checked. No status entry at all is an error.
    * neither: an error.
    """
    if pod_claim.resource_claim_name is not None:
        return pod_claim.resource_claim_name, False
    if pod_claim.resource_claim_template_name is not None:
        for status_name, generated in pod.claim_statuses:
            if status_name == pod_claim.name:
                return generated, True
        msg = f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
        raise ClaimNotCreatedError(msg)
    msg = (
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pod_claim.name}": '
        "none of the supported fields are set"
    )
    raise ApiUnsupportedError(msg)


def is_controlled_by(claim: ClaimView, owner_uid: str) -> bool:
    """Mirrors ``metav1.IsControlledBy``: the first controller reference has this UID."""
    for ref in claim.owner_references:
        if ref.controller:
            return ref.uid == owner_uid
    return False


def _controlled_by_pod_group(claim: ClaimView, pod: PodView) -> bool:
    if not pod.pod_group_name:
        return False
    for ref in claim.owner_references:
        if ref.controller:
            return (
                ref.kind == "PodGroup"
                and ref.api_version.startswith(SCHEDULING_GROUP + "/")
                and ref.name == pod.pod_group_name
            )
    return False


def is_for_pod(pod: PodView, claim: ClaimView, *, pod_group_enabled: bool) -> None:
    """Mirrors ``resourceclaim.IsForPod``: raise unless the claim was generated for this pod.

    With ``pod_group_enabled`` a claim controlled by the pod's PodGroup (kind
    ``PodGroup``, apiVersion ``scheduling.k8s.io/*``, name
    ``spec.schedulingGroup.podGroupName``) is accepted too.
    """
    if claim.namespace == pod.namespace and is_controlled_by(claim, pod.uid):
        return
    claim_ref = f"{claim.namespace}/{claim.name}"
    if pod_group_enabled and pod.pod_group_name:
        if claim.namespace == pod.namespace and _controlled_by_pod_group(claim, pod):
            return
        msg = (
            f"ResourceClaim {claim_ref} was not created for Pod {pod.ref} or PodGroup "
            f"{pod.namespace}/{pod.pod_group_name} (neither Pod nor PodGroup is the owner)"
        )
        raise KubeletError(msg)
    raise KubeletError(f"ResourceClaim {claim_ref} was not created for Pod {pod.ref} (Pod is not owner)")


def is_reserved_for_pod(pod: PodView, claim: ClaimView, *, pod_group_enabled: bool) -> bool:
    """Mirrors ``resourceclaim.IsReservedForPod``: some ``reservedFor`` entry names this pod.

    An entry matches by pod UID; with ``pod_group_enabled`` also an entry
    ``{apiGroup: scheduling.k8s.io, resource: podgroups, name: <pod's group>}``.
    """
    for ref in claim.reserved_for:
        if ref.uid == pod.uid:
            return True
        if (
            pod_group_enabled
            and pod.pod_group_name
            and ref.api_group == SCHEDULING_GROUP
            and ref.resource == POD_GROUP_RESOURCE
            and ref.name == pod.pod_group_name
        ):
            return True
    return False
