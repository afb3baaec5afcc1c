"""The node's drivers: fake in-process plugins, fake or real driver processes, and their waits.

:class:`DriverFleet` builds each driver of the plan (a ``--driver-cmd`` process replaces the
first, behind drasim's proxy unless ``--no-proxy``), starts and stops them, and waits for
what a real node lets happen on its own: the kubelet registering a driver, a driver process
publishing (and republishing) its ResourceSlices. It reaches the kubelet only through the
slot's :class:`~drasim.runner.kubeletslot.Kubelet` protocol and never imports the world.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from dataclasses import replace as replace_fields
from pathlib import Path
from typing import Any

from drasim.errors import ConfigError, DrasimError
from drasim.journal import Journal
from drasim.plugins.registration import is_timeout
from drasim.runner.apiside import ApiSide
from drasim.runner.drivers import DriverHandle, FakeDriverHandle, ProcessDriverHandle
from drasim.runner.kubeletslot import Kubelet
from drasim.runner.options import RunOptions
from drasim.runner.process import DriverProcessError
from drasim.runner.republish import republish_deadline
from drasim.runner.workspace import Workspace
from drasim.scenario.schema import CommandDriverSpec, DriverSpec, FakeDriverSpec

__all__ = ["DriverFleet"]

# How long (real seconds) we wait for a plugin registration or deregistration.
REGISTRATION_TIMEOUT = 15.0
# How long (real seconds) we give a newly registered plugin's connection to come up.
CONNECT_TIMEOUT = 5.0
# How long (real seconds) we wait for a freshly started driver process's ResourceSlices.
SLICE_TIMEOUT = 10.0


def _exited_on_its_own(handle: DriverHandle) -> bool:
    """Whether ``handle`` is a driver process that ended without a stop or kill step.

    A stopped or killed process is forgotten (no exit status); one that exited by
    itself keeps its status until the next start.
    """
    return isinstance(handle, ProcessDriverHandle) and handle.process.returncode() is not None


@dataclass
class DriverFleet:
    """The drivers of one node, keyed by the scenario's driver names."""

    api: ApiSide
    journal: Journal
    workspace: Workspace
    options: RunOptions
    time_scale: float
    kubelet: Callable[[], Kubelet | None]
    """The running kubelet (None while none runs)."""
    admit: Callable[[], AbstractContextManager[None]]
    """A guard held while something starts: raises once the run was stopped."""
    drivers: dict[str, DriverHandle] = field(default_factory=dict)

    # ------------------------------------------------------------------ building
    def build(
        self,
        specs: list[DriverSpec],
        replacement: CommandDriverSpec | None,
        *,
        proxied: bool = False,
        splice: bool = True,
    ) -> None:
        """Create (not start) every driver; ``replacement`` runs instead of the first, behind
        drasim's proxy when ``proxied`` (the proxy presents the fake driver it replaces and
        applies that driver's fault rules; ``splice``: it may splice the DRA socket)."""
        for i, spec in enumerate(specs):
            if i == 0 and replacement is not None:
                self.drivers[spec.name] = (
                    self._proxied_driver(replacement, spec.fake, splice=splice)
                    if proxied
                    else self._process_driver(replacement)
                )
            else:
                self.drivers[spec.name] = self._make_driver(spec)

    def _make_driver(self, spec: DriverSpec) -> DriverHandle:
        if spec.fake is None:
            assert spec.command is not None
            return self._process_driver(spec.command)
        fake = spec.fake
        if fake.faults:
            fake = replace_fields(fake, faults=[self.api.plugin_fault(f) for f in fake.faults])
        if self.options.bugs:
            bugs: list[Any] = list(dict.fromkeys([*fake.bugs, *self.options.bugs]))
            fake = replace_fields(fake, bugs=bugs)
        return FakeDriverHandle(
            spec=fake,
            workspace=self.workspace,
            node_name=self.api.node,
            claim_source=self.api.driver_client(fake.name).get_resource_claim,
            recorder=self.journal,
            publisher=self.api.publisher(fake.name),
            time_scale=self.time_scale,
            fsync=self.options.fsync,
        )

    def _proxied_driver(
        self, command: CommandDriverSpec, replaces: FakeDriverSpec | None, *, splice: bool = True
    ) -> DriverHandle:
        """A driver process behind drasim's proxy (:mod:`drasim.runner.proxied`)."""
        from drasim.runner.proxied import proxied_driver

        faults = [self.api.plugin_fault(f) for f in replaces.faults] if replaces is not None else []
        values, on_event = self._process_values(command)
        return proxied_driver(
            command,
            values,
            self.workspace,
            on_event,
            recorder=self.journal,
            faults=faults,
            time_scale=self.time_scale,
            fake=replaces,
            splice=splice,
        )

    def _process_driver(self, command: CommandDriverSpec) -> DriverHandle:
        values, on_event = self._process_values(command)
        return ProcessDriverHandle(command, values, self.workspace.logs_dir, on_event)

    def _process_values(
        self, command: CommandDriverSpec
    ) -> tuple[dict[str, str], Callable[[str, dict[str, object]], None]]:
        """A driver command's placeholder values, and its journal callback."""
        with self.admit():  # memory: starts the HTTP API server on first use
            kubeconfig = self.api.backend.kubeconfig()
        values = {
            "node": self.api.node,
            "kubeconfig": str(kubeconfig),
            "registrar_dir": str(self.workspace.registry_dir),
            "plugins_dir": str(self.workspace.plugins_dir),
            "plugin_dir": str(self.workspace.plugin_dir(command.name)),
            "cdi_dir": str(self.workspace.cdi_dir),
            "state_dir": str(self.workspace.driver_state_dir / command.name),
            "driver_name": command.name,
        }

        def on_event(what: str, fields: dict[str, object]) -> None:
            tails = {}
            if "stderr" in fields:
                tails["stderr_tail"] = fields.pop("stderr")
            self.journal.record("plugin-process", action=what, driver=command.name, **fields, **tails)

        return values, on_event

    # ------------------------------------------------------------------ lookups
    def driver(self, name: str = "") -> DriverHandle:
        """The named driver, or the only one when ``name`` is empty."""
        if not name:
            if len(self.drivers) == 1:
                return next(iter(self.drivers.values()))
            msg = f"name the driver: this scenario has several ({', '.join(self.drivers)})"
            raise ConfigError(msg)
        try:
            return self.drivers[name]
        except KeyError:
            msg = f"unknown driver {name!r}; drivers: {', '.join(self.drivers)}"
            raise ConfigError(msg) from None

    # ------------------------------------------------------------------ start and stop
    def start(self, handle: DriverHandle, *, wait: bool = True) -> None:
        """Start a driver; with a running kubelet, wait until it registered (or failed to)."""
        mark = self.journal.mark()  # the registration may be journaled before start() returns
        with self.admit():
            handle.start()
        if isinstance(handle, FakeDriverHandle):
            self.journal.record("plugin-process", action="started", driver=handle.name, pid=None)
        if wait and self.kubelet() is not None:
            self.wait_registration_attempt(handle.name, since=mark)

    def stop(self, handle: DriverHandle, *, kill: bool) -> None:
        """Stop (or kill) a driver; with a running kubelet, wait for the consequences."""
        kubelet = self.kubelet()
        paused = (
            kubelet.paused_watcher() if kill and isinstance(handle, FakeDriverHandle) and kubelet else None
        )
        if paused is not None:  # the ``watcher-pause`` capability
            # The fake keeps its socket files across the kill (see FakePlugin.kill); no registry
            # scan may see the moment they are away, as nothing could after a real SIGKILL.
            with paused:
                handle.kill()
        elif kill:
            handle.kill()
        else:
            handle.stop()
        if isinstance(handle, FakeDriverHandle):
            self.journal.record("plugin-process", action="killed" if kill else "stopped", driver=handle.name)
        if kubelet is not None:
            self.settle_registrations()
            self._wait_health_streams_closed(kubelet, handle.name)

    def _wait_health_streams_closed(self, kubelet: Kubelet, driver: str) -> None:
        """A killed plugin stays registered (its socket is left behind); its health stream ends
        once gRPC sees the server gone. Wait for that, so the next step sees the kubelet's health
        cache cleared as upstream clears it (kubelets with the ``health-streams`` capability)."""
        deadline = time.monotonic() + REGISTRATION_TIMEOUT
        for stream in kubelet.health_streams(driver) or []:
            if not stream.wait_idle(max(0.0, deadline - time.monotonic())):
                self.journal.record(
                    "kubelet",
                    operation="health-stream-still-open",
                    driver=driver,
                    endpoint=stream.endpoint,
                    error=f"still open {REGISTRATION_TIMEOUT:g}s after the plugin was stopped",
                )

    def close(self) -> None:
        """Stop every driver for good; never raises."""
        for handle in self.drivers.values():
            with contextlib.suppress(Exception):
                handle.close()

    # ------------------------------------------------------------------ the kubelet's view
    def kubelet_started(self, since: int) -> None:
        """A kubelet just started (journal mark ``since`` from before): wait for registrations,
        note the slices its start-up wipe removed, let the fakes republish theirs."""
        for handle in self.drivers.values():
            if isinstance(handle, ProcessDriverHandle) and handle.publishes_slices:
                # The start-up wipe removed its slices; the next allocation waits until its
                # controller republished them (wait_republished_slices).
                handle.slices_wiped = True
                handle.wiped_at = time.monotonic()
        for name, handle in self.drivers.items():
            # A driver process that already exited on its own (not stopped by a step) is
            # waited for too: the wait reports its exit status and output at once, instead
            # of the scenario failing later on "0 available" devices.
            if handle.running or _exited_on_its_own(handle):
                self.wait_registration_attempt(name, since=since)
        self.republish_fake_slices()

    def republish_fake_slices(self) -> None:
        """Fake drivers' slice controllers notice the wipe and publish again."""
        from fake_plugins import build_slices

        for handle in self.drivers.values():
            if isinstance(handle, FakeDriverHandle) and handle.running:
                self.api.publisher(handle.name)(build_slices(handle.driver.config))

    def settle_registrations(self) -> None:
        """Rescan the registry until a pass changes no registration (at most a few passes).

        One pass can finish while a registration of an older socket generation was still in
        flight; the next pass then replaces it. Returning before that would let the next step
        race the re-registration ("driver ... is not registered").
        """
        kubelet = self.kubelet()
        assert kubelet is not None
        for _ in range(5):
            mark = self.journal.mark()
            if not kubelet.sync_registrations(REGISTRATION_TIMEOUT):
                msg = f"the kubelet's plugin registration did not settle within {REGISTRATION_TIMEOUT:g}s"
                raise DrasimError(msg)
            if not self.journal.events("registration", since_seq=mark):
                return

    def wait_registration_attempt(self, driver: str, *, since: int | None = None) -> None:
        """Wait until the kubelet finished registering ``driver`` (successfully or not).

        The emulated kubelet's plugin watcher polls, so a rescan plus waiting for the
        reconciler is enough for in-process fakes, whose sockets exist when ``start()``
        returns. A driver process creates its sockets later: wait for a registration outcome
        (journaled after the seq ``since``, by default now) while checking that the process
        stays alive. Callers pass the journal's mark from before the step that lets the
        kubelet see the driver (starting the kubelet or the driver): a quick driver can be
        registered before this wait begins.
        """
        kubelet = self.kubelet()
        assert kubelet is not None
        handle = self.drivers.get(driver)
        if handle is None:  # a --driver-name process is keyed by the scenario's driver name
            handle = next((h for h in self.drivers.values() if h.name == driver), None)
        if isinstance(handle, ProcessDriverHandle):
            self._wait_process_registration(kubelet, handle, since)
            return
        self.settle_registrations()
        if not kubelet.instances(driver) and self._last_registration_timed_out():
            # The reconciler retries a dial that ran out of time (see _wait_process_registration).
            kubelet.wait_registered(driver, timeout=REGISTRATION_TIMEOUT)
        if kubelet.instances(driver):
            # The kubelet connects at once after registering; let that happen before the
            # scenario moves on, so connection-driven work (cancelling a slice wipe) is done.
            kubelet.wait_registered(driver, timeout=CONNECT_TIMEOUT, connected=True)

    def _last_registration_timed_out(self) -> bool:
        last = self.journal.last("registration")
        return last is not None and last.get("outcome") == "failed" and is_timeout(str(last.get("error")))

    def _registration_outcomes(self, driver: str, since: int) -> list[dict[str, Any]]:
        """Registration outcomes of ``driver`` journaled after ``since``.

        A deregistration (of the instance this one replaces) is not an attempt; a failed
        GetInfo is journaled without a driver name. A dial that timed out is not an outcome
        either: the socket is there, the plugin reconciler retries it with backoff as
        upstream's does, and on a loaded machine the first dial of a just-started process
        can miss the scaled deadline.
        """
        return [
            dict(e)
            for e in self.journal.events("registration", since_seq=since)
            if (e.get("outcome") == "registered" and e.get("driver") == driver)
            or (
                e.get("outcome") == "failed"
                and e.get("driver") in (driver, None)
                and not is_timeout(str(e.get("error", "")))
            )
        ]

    def _wait_process_registration(
        self, kubelet: Kubelet, handle: ProcessDriverHandle, since: int | None = None
    ) -> None:
        """Wait for a driver process's registration outcome, then (once per start) its slices.

        The registration socket the kubelet used is remembered on the handle (for
        ``deregisterPlugin``). A freshly started process publishes its ResourceSlices
        asynchronously, like the kubeletplugin helper's slice controller; scenarios
        allocate from them at once, so wait until at least one slice of (driver, node)
        exists. A driver that publishes none is not an error here: a journal event
        says so and allocations then report "0 available".
        """
        driver = handle.name
        mark = self.journal.mark() if since is None else since
        timeout = float(getattr(handle.spec, "start_timeout", REGISTRATION_TIMEOUT) or REGISTRATION_TIMEOUT)

        def attempted() -> bool:
            kubelet.sync_registrations(1.0)
            return bool(self._registration_outcomes(driver, mark))

        try:
            handle.process.wait_until(attempted, timeout=timeout, what=f"driver {driver} to register")
        except DriverProcessError:
            self._journal_exit(handle)
            raise
        outcome = self._registration_outcomes(driver, mark)[-1]
        registered = outcome.get("outcome") == "registered"
        if registered:
            if outcome.get("socket"):
                handle.registered_socket = Path(str(outcome["socket"]))
            # As for in-process fakes: the kubelet connects right after registering, and the
            # connection cancels a pending slice wipe; a step that advances the clock before
            # that would fire the wipe (seen under load with the example driver).
            endpoint = outcome.get("endpoint")
            kubelet.wait_registered(
                driver, timeout=CONNECT_TIMEOUT, endpoint=str(endpoint) if endpoint else None, connected=True
            )
        starts = handle.process.starts
        if handle.slices_seen_for_start == starts:
            return
        handle.slices_seen_for_start = starts
        handle.slices_wiped = False
        # A driver publishes its slices through the API server whether or not the kubelet
        # accepted its registration (the kubeletplugin helper does), so a scenario about a
        # refused registration still allocates from them.
        try:
            if self._wait_for_slices(handle, SLICE_TIMEOUT):
                handle.publishes_slices = True
                handle.slices_seen_at = time.monotonic()
        except DriverProcessError:
            if registered:
                raise
            # A driver may exit when the kubelet refuses it; that is for the scenario to check.

    def _wait_for_slices(self, handle: ProcessDriverHandle, timeout: float) -> bool:
        """Wait until a ResourceSlice of (driver, node) exists; journal ``no-slices`` if none comes.

        Polls the store directly: the polls are not API calls of anybody, so they stay out
        of the journal. Raises :class:`DriverProcessError` if the process exits meanwhile.
        """
        driver = handle.name
        selector = f"spec.driver={driver},spec.nodeName={self.api.node}"
        try:
            handle.process.wait_until(
                lambda: bool(self.api.list_slices(selector)),
                timeout=timeout,
                what=f"driver {driver} to publish its ResourceSlices",
            )
        except DriverProcessError:
            if not handle.running:
                self._journal_exit(handle)
                raise
            self.journal.record(
                "plugin-process",
                action="no-slices",
                driver=driver,
                pid=handle.process.pid,
                message=f"no ResourceSlice of this driver and node appeared within {timeout:g}s",
            )
            return False
        return True

    def wait_republished_slices(self, drivers: Collection[str] | None = None) -> None:
        """Before a step that needs them: wait for slices that the kubelet's start-up wipe removed.

        Only for ``drivers`` (default: every driver). A driver process's slice controller
        republishes them on its own schedule, so a kubelet restart does not wait for that;
        the wait lasts as long as the kubeletplugin helper can take (drasim.runner.republish).
        """
        for handle in self.drivers.values():
            if drivers is not None and handle.name not in drivers:
                continue
            if isinstance(handle, ProcessDriverHandle) and handle.slices_wiped and handle.running:
                handle.slices_wiped = False
                deadline = republish_deadline(handle.slices_seen_at, handle.wiped_at)
                timeout = max(0.0, deadline - time.monotonic())
                self.journal.record(
                    "plugin-process",
                    action="waiting-for-slices",
                    driver=handle.name,
                    pid=handle.process.pid,
                    message="the kubelet's start-up wipe deleted this driver's ResourceSlices; "
                    f"waiting up to {timeout:.0f}s for the driver to publish them again",
                )
                if self._wait_for_slices(handle, timeout):
                    handle.slices_seen_at = time.monotonic()

    def _journal_exit(self, handle: ProcessDriverHandle) -> None:
        """Record that a driver process ended on its own (``plugin-process`` ``exited``), if it did."""
        code = handle.process.returncode()
        if code is None:
            return
        process = handle.process
        self.journal.record(
            "plugin-process",
            action="exited",
            driver=handle.name,
            pid=process.pid,
            returncode=code,
            stderr_tail=process.tail(process.stderr_path),
        )
