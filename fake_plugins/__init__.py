"""Fake DRA kubelet plugins: scriptable drivers speaking the real gRPC protocol over unix sockets.

In-process::

    from fake_plugins import FakeDriver, FakeDriverConfig
    driver = FakeDriver(FakeDriverConfig(registry_dir=..., plugin_dir=..., cdi_dir=...),
                        claim_source=lambda ns, name: claims[(ns, name)])
    with driver:
        ...

As a process: ``python -m fake_plugins --driver-name gpu.example.com --registry-dir D ...``
(or ``drasim fake-plugin``). The package never imports the emulated kubelet, the
kubelet-side plugin code, the runner or the harness, so it cannot agree with them by
accident. ``FakeDriver`` is imported lazily so that the CLI stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drasim.faults import PluginFault
from fake_plugins.behaviour import BUGS, Behaviour, HealthSpec, decode_fault
from fake_plugins.config import FakeDriverConfig, load_behaviour_file
from fake_plugins.slices import build_slices

if TYPE_CHECKING:
    from fake_plugins.driver import FakeDriver
    from fake_plugins.journal import Call, read_journal

__all__ = [
    "BUGS",
    "Behaviour",
    "Call",
    "FakeDriver",
    "FakeDriverConfig",
    "HealthSpec",
    "PluginFault",
    "build_slices",
    "decode_fault",
    "load_behaviour_file",
    "read_journal",
]


def __getattr__(name: str) -> Any:
    if name == "FakeDriver":
        from fake_plugins.driver import FakeDriver

        return FakeDriver
    if name in ("Call", "read_journal"):
        from fake_plugins import journal

        return getattr(journal, name)
    raise AttributeError(f"module 'fake_plugins' has no attribute {name!r}")
