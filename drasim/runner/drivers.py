"""The drivers of a simulated node: fake plugins in-process, or a real driver process.

Both kinds are wrapped in a :class:`DriverHandle` so that the world and the steps do
not care which one they drive. Protocol-level faults (per-claim errors, missing claims,
crashes) need the fake plugin; a real driver only supports lifecycle steps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from drasim.apiversions import DRA_SERVICES, HEALTH_V1ALPHA1
from drasim.errors import ConfigError
from drasim.faults import PluginFault, scaled
from drasim.interfaces import KubeObject, Recorder
from drasim.runner.process import DriverProcess
from drasim.runner.workspace import Workspace
from drasim.scenario.schema import CommandDriverSpec, FakeDriverSpec

ClaimSource = Callable[[str, str], KubeObject]
Publisher = Callable[[list[KubeObject]], None]


class DriverHandle(Protocol):
    """What the runner needs from one driver."""

    name: str

    @property
    def running(self) -> bool:
        """Whether the driver serves."""
        ...

    def start(self) -> None:
        """Start (no-op when running)."""
        ...

    def stop(self) -> None:
        """Stop gracefully: sockets removed."""
        ...

    def kill(self) -> None:
        """Stop at once: sockets left behind."""
        ...

    def add_fault(self, fault: PluginFault, time_scale: float) -> None:
        """Add a fault rule (fake drivers only)."""
        ...

    def clear_faults(self) -> None:
        """Remove every fault rule."""
        ...

    def set_health(
        self, device: str, health: str, *, pool: str, message: str, timeout_seconds: int = 0
    ) -> None:
        """Report a device's health on the health stream (fake drivers only).

        ``timeout_seconds`` is sent as ``health_check_timeout_seconds`` (0: the kubelet's 30 s).
        """
        ...

    def registration_socket(self) -> Path | None:
        """The registration socket path, when known."""
        ...

    def output(self) -> tuple[str, str]:
        """Captured (stdout, stderr) of a driver process; empty for in-process fakes."""
        ...

    def close(self) -> None:
        """Release everything (called once at teardown)."""
        ...


_HEALTH = {"Healthy": "HEALTHY", "Unhealthy": "UNHEALTHY", "Unknown": "UNKNOWN"}


def fake_plugin_rule(fault: PluginFault, time_scale: float) -> PluginFault:
    """A scenario rule as the fake plugin takes it: delay in real seconds, claim as namespace/name."""
    if fault.claim and "/" not in fault.claim:
        fault = replace(fault, claim=f"default/{fault.claim}")
    return scaled(fault, time_scale)


@dataclass
class FakeDriverHandle:
    """An in-process fake plugin from fake_plugins/."""

    spec: FakeDriverSpec
    workspace: Workspace
    node_name: str
    claim_source: ClaimSource
    recorder: Recorder
    publisher: Publisher | None
    time_scale: float
    fsync: bool = True
    name: str = ""
    _driver: Any = None

    def __post_init__(self) -> None:
        from fake_plugins import Behaviour, FakeDriver, FakeDriverConfig

        spec = self.spec
        self.name = spec.name
        devices = spec.devices if isinstance(spec.devices, int) else list(spec.devices)
        faults: list[Any] = [fake_plugin_rule(fault, self.time_scale) for fault in spec.faults]
        extra = dict(spec.behaviour)  # the fake plugin's own keys: its fault mappings follow the rules
        behaviour = Behaviour.from_dict(
            {"faults": faults + list(extra.pop("faults", [])), "bugs": list(spec.bugs), **extra},
            where=f"driver {spec.name} behaviour",
        )
        services = list(DRA_SERVICES)  # serve every DRA version; ``advertise`` says which
        if spec.health:
            services.append(HEALTH_V1ALPHA1)
        advertise = list(spec.services) + ([HEALTH_V1ALPHA1] if spec.health else [])
        plugin_dir = (
            self.workspace.registry_dir if spec.common_socket else self.workspace.plugin_dir(spec.name)
        )
        config = FakeDriverConfig(
            driver_name=spec.name,
            registry_dir=str(self.workspace.registry_dir),
            plugin_dir=str(plugin_dir),
            cdi_dir=str(self.workspace.cdi_dir),
            state_dir=str(self.workspace.driver_state_dir / spec.name),
            node_name=self.node_name,
            devices=devices,
            services=services,
            advertise=advertise,
            publish_slices=self.publisher is not None,
            behaviour=behaviour,
            fsync=self.fsync,
        )
        if spec.rolling_update_uid:
            config.registration_socket = f"{spec.name}-{spec.rolling_update_uid}-reg.sock"
            config.plugin_socket = f"dra-{spec.rolling_update_uid}.sock"
        if spec.common_socket:
            config.plugin_socket = f"{spec.name}-dra.sock"
        self._driver = FakeDriver(
            config, claim_source=self.claim_source, recorder=self.recorder, publisher=self.publisher
        )

    @property
    def driver(self) -> Any:
        """The underlying :class:`fake_plugins.FakeDriver`."""
        return self._driver

    @property
    def running(self) -> bool:
        """Whether it serves."""
        return bool(self._driver.running)

    def start(self) -> None:
        """Serve (no-op when running)."""
        if not self._driver.running:
            self._driver.start()

    def stop(self) -> None:
        """Clean stop."""
        self._driver.stop()

    def kill(self) -> None:
        """Like SIGKILL: stale sockets stay."""
        self._driver.kill()

    def add_fault(self, fault: PluginFault, time_scale: float) -> None:
        """Add a rule after the others; rules already there keep their counters."""
        self._driver.add_faults([fake_plugin_rule(fault, time_scale)])

    def clear_faults(self) -> None:
        """Remove every rule."""
        self._driver.clear_faults()
        self._driver.release_hangs()

    def reset_connections(self) -> None:
        """End the kubelet's connections to the DRA socket (``resetConnections``)."""
        self._driver.reset_connections()

    def refuse_connections(self, refuse: bool) -> None:
        """Close the DRA socket, or serve it again (``refuseConnections``)."""
        self._driver.refuse_connections(refuse)

    def set_health(
        self, device: str, health: str, *, pool: str, message: str, timeout_seconds: int = 0
    ) -> None:
        """Report health on the stream, with its ``health_check_timeout_seconds``."""
        self._driver.set_health(
            device, _HEALTH.get(health, health), pool=pool, message=message, timeout_seconds=timeout_seconds
        )

    def registration_socket(self) -> Path | None:
        """``<registry>/<driver>-reg.sock`` (or the rolling-update name)."""
        return Path(self._driver.registration_socket)

    def output(self) -> tuple[str, str]:
        """Nothing is captured in-process."""
        return "", ""

    def close(self) -> None:
        """Stop and release hung calls."""
        with contextlib.suppress(Exception):
            self._driver.release_hangs()
        with contextlib.suppress(Exception):
            self._driver.stop()
        with contextlib.suppress(Exception):
            self._driver.journal.close()


@dataclass
class ProcessDriverHandle:
    """A real driver binary (or any command) started from a template."""

    spec: CommandDriverSpec
    values: Mapping[str, str]
    logs_dir: Path
    on_event: Callable[[str, dict[str, object]], None]
    name: str = ""
    registered_socket: Path | None = None
    """The registration socket the kubelet last registered this driver through."""
    slices_seen_for_start: int = 0
    """The process start after which the runner last waited for the driver's ResourceSlices."""
    publishes_slices: bool = False
    """The driver published ResourceSlices after a start."""
    slices_wiped: bool = False
    """A kubelet start wiped the slices it published; not yet seen republished."""
    slices_seen_at: float = 0.0
    """When (time.monotonic) the runner last saw its slices appear (after a start or a wipe)."""
    wiped_at: float = 0.0
    """When (time.monotonic) a kubelet start last wiped them."""
    _process: DriverProcess | None = None

    def __post_init__(self) -> None:
        self.name = self.spec.name
        env = {key: value.format_map(dict(self.values)) for key, value in self.spec.env.items()}
        self._process = DriverProcess(
            self.spec.args, self.values, self.logs_dir, extra_env=env, on_event=self.on_event
        )

    @property
    def process(self) -> DriverProcess:
        """The process wrapper."""
        assert self._process is not None
        return self._process

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self.process.running()

    def start(self) -> None:
        """Start the process."""
        self.process.start()

    def stop(self) -> None:
        """SIGTERM."""
        self.process.stop()

    def kill(self) -> None:
        """SIGKILL."""
        self.process.kill()

    def add_fault(self, fault: PluginFault, time_scale: float) -> None:
        """Real drivers cannot be told to misbehave."""
        msg = (
            f"driver {self.name} is a real driver process: plugin faults need the fake plugin "
            "(skip this scenario for real drivers)"
        )
        raise ConfigError(msg)

    def clear_faults(self) -> None:
        """Nothing to clear."""

    def set_health(
        self, device: str, health: str, *, pool: str, message: str, timeout_seconds: int = 0
    ) -> None:
        """Real drivers report their own health."""
        msg = f"driver {self.name} is a real driver process: setDeviceHealth needs the fake plugin"
        raise ConfigError(msg)

    def registration_socket(self) -> Path | None:
        """The socket the kubelet registered the driver through (None before registration)."""
        return self.registered_socket

    def output(self) -> tuple[str, str]:
        """The stdout and stderr tails of every run, each run after a ``--- run N ---`` line.

        With a single run the text is the bare tail; restarts and kills start new runs,
        and a report should show what each process said before it ended.
        """
        proc = self.process
        runs = proc.starts
        if runs <= 1:
            return proc.tail(proc.stdout_path), proc.tail(proc.stderr_path)
        outs: list[str] = []
        errs: list[str] = []
        for run in range(1, runs + 1):
            out, err = proc.run_output(run, limit=4000 // runs + 200)
            for text, sink in ((out, outs), (err, errs)):
                if text:
                    sink.append(f"--- run {run} ---\n{text.rstrip(chr(10))}\n")
        return "".join(outs), "".join(errs)

    def close(self) -> None:
        """Stop the process if it still runs."""
        with contextlib.suppress(Exception):
            self.process.stop()
