"""A driver process behind drasim's proxy (:mod:`drasim.proxy`): what ``--driver-cmd`` runs by default.

The process gets a registration directory of its own as ``{registrar_dir}``; the proxy
registers it with the kubelet, journals every call it serves (``side: plugin``, as the fake
plugin does) and applies the scenario's plugin fault rules on the wire. A ``crash`` rule
SIGKILLs the process, which then counts as having exited on its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from drasim.faults import PluginFault
from drasim.interfaces import Recorder
from drasim.proxy import Proxy, ProxyConfig
from drasim.runner.drivers import ProcessDriverHandle, fake_plugin_rule
from drasim.runner.workspace import Workspace
from drasim.scenario.common import DEFAULT_SERVICES
from drasim.scenario.schema import CommandDriverSpec, FakeDriverSpec


def driver_registry_dir(workspace: Workspace) -> Path:
    """Where a proxied driver process puts its registration socket."""
    return workspace.root / "proxy" / "registry"


def proxy_socket_dir(workspace: Workspace) -> Path:
    """Where the proxy's DRA sockets go."""
    return workspace.root / "proxy" / "sockets"


@dataclass
class ProxiedDriverHandle(ProcessDriverHandle):
    """A :class:`ProcessDriverHandle` whose sockets the kubelet reaches through a proxy."""

    workspace: Workspace | None = None
    recorder: Recorder | None = None
    faults: Sequence[PluginFault] = ()
    """Rules from the start, as the scenario wrote them (nominal delays)."""
    time_scale: float = 1.0
    layout: Mapping[str, object] = field(default_factory=dict)
    """More :class:`ProxyConfig` fields: what the driver advertises and its socket names."""
    splice: bool = True
    """The proxy may splice the DRA socket (:attr:`ProxyConfig.splice`)."""
    proxy: Proxy | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        assert self.workspace is not None
        self.proxy = Proxy(
            ProxyConfig(
                registry_dir=self.workspace.registry_dir,
                driver_registry_dir=driver_registry_dir(self.workspace),
                socket_dir=proxy_socket_dir(self.workspace),
                recorder=self.recorder,
                side="plugin",
                faults=[fake_plugin_rule(f, self.time_scale) for f in self.faults],
                kill_driver=self._crash,
                driver_name=self.name,
                extra={"via": "proxy"},
                splice=self.splice,
                **self.layout,  # type: ignore[arg-type]
            )
        )

    @property
    def the_proxy(self) -> Proxy:
        """The proxy in front of the process."""
        assert self.proxy is not None
        return self.proxy

    def _crash(self) -> None:
        self.process.crash()

    def start(self) -> None:
        """Start the proxy (once), then the process."""
        self.the_proxy.start()
        super().start()

    def stop(self) -> None:
        """SIGTERM; the proxy then removes its registration socket as the driver removed its own."""
        super().stop()
        self.the_proxy.sync()

    def kill(self) -> None:
        """SIGKILL; the driver's sockets stay behind, and so do the proxy's."""
        super().kill()
        self.the_proxy.sync()

    def add_fault(self, fault: PluginFault, time_scale: float) -> None:
        """Add a rule after the others, applied by the proxy."""
        self.the_proxy.add_faults([fake_plugin_rule(fault, time_scale)])

    def clear_faults(self) -> None:
        """Remove every rule and release held calls."""
        self.the_proxy.clear_faults()

    def held_calls(self) -> int:
        """Calls a ``hang`` or ``block`` rule holds in the proxy."""
        return self.the_proxy.held_calls()

    def release_hangs(self) -> None:
        """Let held calls go on (``unblock``)."""
        self.the_proxy.release()

    def reset_connections(self) -> None:
        """End the kubelet's connections to the proxy's DRA socket (``resetConnections``)."""
        self.the_proxy.reset_connections()

    def refuse_connections(self, refuse: bool) -> None:
        """Close the proxy's DRA socket, or serve it again (``refuseConnections``); the driver
        keeps running."""
        self.the_proxy.refuse(refuse)

    def close(self) -> None:
        """Stop the proxy and the process."""
        with contextlib.suppress(Exception):
            self.the_proxy.stop()
        super().close()


def proxied_driver(
    command: CommandDriverSpec,
    values: Mapping[str, str],
    workspace: Workspace,
    on_event: Callable[[str, dict[str, object]], None],
    *,
    recorder: Recorder,
    faults: Sequence[PluginFault],
    time_scale: float,
    fake: FakeDriverSpec | None = None,
    splice: bool = True,
) -> ProxiedDriverHandle:
    """A driver process that registers through a proxy (its ``{registrar_dir}`` is the proxy's).

    ``fake`` is the scenario's fake driver the process replaces: the proxy presents its
    advertised services and socket names (``services``, ``commonSocket``, ``rollingUpdateUID``).
    """
    values = {**values, "registrar_dir": str(driver_registry_dir(workspace))}
    layout = _layout(fake, workspace, command.name) if fake is not None else {}
    return ProxiedDriverHandle(
        command,
        values,
        workspace.logs_dir,
        on_event,
        workspace=workspace,
        recorder=recorder,
        faults=faults,
        time_scale=time_scale,
        layout=layout,
        splice=splice,
    )


def _layout(fake: FakeDriverSpec, workspace: Workspace, name: str) -> dict[str, object]:
    layout: dict[str, object] = {}
    if list(fake.services) != list(DEFAULT_SERVICES):
        layout["advertise"] = list(fake.services)
    if fake.rolling_update_uid:
        layout["registration_socket"] = f"{name}-{fake.rolling_update_uid}-reg.sock"
        layout["dra_socket"] = proxy_socket_dir(workspace) / f"dra-{fake.rolling_update_uid}.sock"
    if fake.common_socket:
        layout["dra_socket"] = workspace.registry_dir / f"{name}-dra.sock"
    return layout
