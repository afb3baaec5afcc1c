"""What a container gets from its prepared claims: CDI device IDs and claim infos.

Ports of ``(*Manager).GetResources`` and ``(*Manager).GetContainerClaimInfos`` in
pkg/kubelet/cm/dra/manager.go. Both only read the claim-info cache; neither talks
to a driver or the API server.
"""

from __future__ import annotations

from drasim.errors import KubeletError
from drasim.kubelet.claiminfo import ClaimInfo, ClaimInfoCache
from drasim.kubelet.features import FeatureGates
from drasim.kubelet.objects import (
    ContainerView,
    PodView,
    is_dra_extended_resource_name,
    quantity_is_zero,
)
from drasim.kubelet.resourceclaim import claim_name

__all__ = ["container_claim_infos", "container_requests", "get_resources", "get_resources_by_device"]


def container_requests(pod: PodView, container: ContainerView, gates: FeatureGates) -> dict[str, list[str]]:
    """Real claim name -> request names this container uses (``""`` = the whole claim).

    The first half of ``GetResources``: every ``container.resources.claims`` entry,
    mapped through ``resourceclaim.Name`` (a claim that was intentionally not
    created is skipped, a resolution error is raised as is), then, with the
    ``DRAExtendedResource`` gate, the request names of the extended-resource claim
    mapped to this container for a non-zero DRA extended-resource request.
    """
    per_pod_claim: dict[str, list[str]] = {}
    for claim in container.claims:
        per_pod_claim.setdefault(claim.name, []).append(claim.request)
    result: dict[str, list[str]] = {}
    for pod_claim in pod.resource_claims:
        requests = per_pod_claim.get(pod_claim.name)
        if requests is None:
            continue
        name, _ = claim_name(pod, pod_claim)
        if name is None:
            continue
        result.setdefault(name, []).extend(requests)
    extended = pod.extended_status
    if gates.dra_extended_resource and extended is not None:
        wanted = {
            resource
            for resource, quantity in container.requests
            if not quantity_is_zero(quantity) and is_dra_extended_resource_name(resource)
        }
        for mapping in extended.request_mappings:
            if mapping.container_name == container.name and mapping.resource_name in wanted:
                result.setdefault(extended.resource_claim_name, []).append(mapping.request_name)
    return result


def get_resources(
    cache: ClaimInfoCache, pod: PodView, container: ContainerView, gates: FeatureGates
) -> list[str]:
    """Mirrors ``GetResources``: the CDI device IDs to hand to the runtime, duplicates kept.

    Claims are visited in the order they were first referenced (upstream walks a
    Go map). A referenced claim missing from the cache is an error.
    """
    return [cdi_id for ids in get_resources_by_device(cache, pod, container, gates) for cdi_id in ids]


def get_resources_by_device(
    cache: ClaimInfoCache, pod: PodView, container: ContainerView, gates: FeatureGates
) -> list[tuple[str, ...]]:
    """:func:`get_resources` with the IDs grouped per prepared device (one tuple per device).

    Not an upstream function: a driver may hand several IDs per device (e.g. a
    device-specific one and one common to all its devices), so checks that count
    devices or look for duplicates need to know which IDs belong together.
    """
    groups: list[tuple[str, ...]] = []
    for name, requests in container_requests(pod, container, gates).items():
        with cache.read_locked():
            info = cache.get(name, pod.namespace)
            if info is None:
                msg = (
                    f"internal error: unable to get claim info for ResourceClaim {name} "
                    f"in namespace {pod.namespace}"
                )
                raise KubeletError(msg)
            for request in requests:
                groups.extend(info.cdi_devices_by_device(request))
    return groups


def container_claim_infos(
    cache: ClaimInfoCache, pod: PodView, container: ContainerView, gates: FeatureGates
) -> list[ClaimInfo]:
    """Mirrors ``GetContainerClaimInfos``: deep copies of the claims this container uses."""
    used = {claim.name for claim in container.claims}
    infos: list[ClaimInfo] = []
    for pod_claim in pod.resource_claims:
        if pod_claim.name not in used:
            continue
        name, _ = claim_name(pod, pod_claim)
        if name is None:
            continue
        with cache.read_locked():
            info = cache.get(name, pod.namespace)
            if info is None:
                raise KubeletError(f"unable to get information for ResourceClaim {name}")
            infos.append(info.deep_copy())
    extended = pod.extended_status
    if gates.dra_extended_resource and extended is not None:
        if not any(m.container_name == container.name for m in extended.request_mappings):
            return infos
        name = extended.resource_claim_name
        with cache.read_locked():
            info = cache.get(name, pod.namespace)
            if info is None:
                msg = f"unable to get claim info for claim {name} in namespace {pod.namespace}"
                raise KubeletError(msg)
            infos.append(info.deep_copy())
    return infos
