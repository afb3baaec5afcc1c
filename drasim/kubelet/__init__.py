"""The emulated kubelet DRA manager: a port of pkg/kubelet/cm/dra. Pure logic behind ports.

Entry point: :class:`drasim.kubelet.manager.Manager` (with
:class:`drasim.kubelet.features.FeatureGates`). This package imports nothing at
package level; the checkpointed state types live below it in :mod:`drasim.state`,
so the ports and the adapters never depend on the kubelet (``.importlinter``
enforces it). See docs/kubelet-fidelity.md for what is ported.
"""
