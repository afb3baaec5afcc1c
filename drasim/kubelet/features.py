"""Kubelet feature gates that change what the DRA manager does.

Upstream reads these from the global ``utilfeature.DefaultFeatureGate``; here they
are an explicit, immutable value handed to :class:`drasim.kubelet.manager.Manager`,
so that two emulated kubelets in one process can differ. All gates are off by
default, matching their default in the kubelet at the time of writing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FeatureGates"]


@dataclass(frozen=True)
class FeatureGates:
    """The gates the DRA manager consults.

    ``dra_extended_resource`` (``DRAExtendedResource``): also prepare, unprepare and
    expose the claim named by ``pod.status.extendedResourceClaimStatus``.
    ``dra_workload_resource_claims`` (``DRAWorkloadResourceClaims``): accept a claim
    owned by, or reserved for, the pod's PodGroup (``spec.schedulingGroup.podGroupName``).
    """

    dra_extended_resource: bool = False
    dra_workload_resource_claims: bool = False
