"""The kubelet implementations the node's kubelet slot can hold, one row each.

A new implementation (say upstream's DRA manager driven out of process) is a class that
implements :class:`drasim.runner.kubeletslot.Kubelet` with a ``create(node)`` factory, and
one row here naming the optional capabilities it offers; ``RunOptions.kubelet`` (``--kubelet``)
picks it.
"""

from __future__ import annotations

from drasim.runner.emulated import EmulatedKubelet
from drasim.runner.kubeletslot import (
    CAPABILITIES,
    HEALTH_STREAMS,
    Kubelet,
    KubeletImplementation,
    KubeletNode,
)

__all__ = ["EMULATED", "KUBELET_IMPLEMENTATIONS", "UPSTREAM"]

EMULATED = "emulated"
UPSTREAM = "upstream"


def _upstream(node: KubeletNode) -> Kubelet:
    """Upstream's DRA manager out of process (imported on use: it needs Go only when chosen)."""
    from drasim.upstream_kubelet.slot import UpstreamSlotKubelet

    return UpstreamSlotKubelet.create(node)


KUBELET_IMPLEMENTATIONS: dict[str, KubeletImplementation] = {
    EMULATED: KubeletImplementation(EMULATED, EmulatedKubelet.create, frozenset(CAPABILITIES)),
    # No crash points: upstream's Go code has no hooks to die at (restartKubelet with crashAt is
    # "not comparable"); no watcher pause: upstream's own registry scan cannot be held; no
    # service narrowing: upstream offers every service of its release.
    UPSTREAM: KubeletImplementation(UPSTREAM, _upstream, frozenset({HEALTH_STREAMS})),
}
"""Kubelet implementations by name (:attr:`drasim.runner.plan.RunPlan.kubelet` picks one)."""
