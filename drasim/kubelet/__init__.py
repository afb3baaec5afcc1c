"""The emulated kubelet DRA manager: a port of pkg/kubelet/cm/dra. Pure logic behind ports.

Entry point: :class:`drasim.kubelet.manager.Manager` (with
:class:`drasim.kubelet.features.FeatureGates`). This package deliberately imports
nothing at package level, because :mod:`drasim.interfaces` imports
:mod:`drasim.kubelet.state`. See docs/kubelet-fidelity.md for what is ported.
"""
