"""The kubelet implementations the node's kubelet slot can hold, one row each.

A new implementation (say upstream's DRA manager driven out of process) is a class that
implements :class:`drasim.runner.kubeletslot.Kubelet` with a ``create(node)`` factory, and
one row here naming the optional capabilities it offers; ``RunOptions.kubelet_impl`` picks it.
"""

from __future__ import annotations

from drasim.runner.emulated import EmulatedKubelet
from drasim.runner.kubeletslot import CAPABILITIES, KubeletImplementation

__all__ = ["KUBELET_IMPLEMENTATIONS"]

KUBELET_IMPLEMENTATIONS: dict[str, KubeletImplementation] = {
    "emulated": KubeletImplementation("emulated", EmulatedKubelet.create, frozenset(CAPABILITIES)),
}
"""Kubelet implementations by name (:attr:`drasim.runner.plan.RunPlan.kubelet` picks one)."""
