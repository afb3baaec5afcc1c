"""drasim: a test harness and simulator for Kubernetes DRA kubelet plugins.

The package is organised in layers (see docs/architecture.md): the emulated kubelet
core in :mod:`drasim.kubelet` is pure logic behind the ports in :mod:`drasim.interfaces`;
adapters (gRPC plugins, API servers, checkpoint files) implement those ports.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
