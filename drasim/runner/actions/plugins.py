"""Action steps on the drivers' kubelet plugins: stop, kill, start, restart, deregister, and
device health reported on a fake plugin's stream."""

from __future__ import annotations

import contextlib

from drasim.plugins.health import health_check_timeout, truncate_health_message
from drasim.runner import podworker
from drasim.runner.actions.registry import handles
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.KillPlugin reads like the YAML

HEALTH_REPORT_WAIT = 10.0
"""Real seconds ``setDeviceHealth`` waits for the kubelet to store the report it sent."""


@handles(S.RestartPlugin)
def restart_plugin(world: World, args: S.RestartPlugin, ctx: StepContext) -> None:
    """Graceful stop, downtime, start."""
    handle = world.fleet.driver(args.driver)
    world.fleet.stop(handle, kill=False)
    podworker.advance(world, args.downtime)
    world.fleet.start(handle)


@handles(S.KillPlugin)
def kill_plugin(world: World, args: S.KillPlugin, ctx: StepContext) -> None:
    """SIGKILL: stale sockets stay."""
    world.fleet.stop(world.fleet.driver(args.driver), kill=True)


@handles(S.StopPlugin)
def stop_plugin(world: World, args: S.StopPlugin, ctx: StepContext) -> None:
    """Graceful stop."""
    world.fleet.stop(world.fleet.driver(args.driver), kill=False)


@handles(S.StartPlugin)
def start_plugin(world: World, args: S.StartPlugin, ctx: StepContext) -> None:
    """Start again."""
    world.fleet.start(world.fleet.driver(args.driver))


@handles(S.DeregisterPlugin)
def deregister_plugin(world: World, args: S.DeregisterPlugin, ctx: StepContext) -> None:
    """Remove only the registration socket."""
    handle = world.fleet.driver(args.driver)
    path = handle.registration_socket()
    if path is None:
        raise StepFailure(f"deregisterPlugin: the registration socket of {handle.name} is not known")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    if world.kubelet is not None:
        world.fleet.settle_registrations()


@handles(S.SetDeviceHealth)
def set_device_health(world: World, args: S.SetDeviceHealth, ctx: StepContext) -> None:
    """Report health on the fake plugin's stream and wait for the kubelet to store that report.

    The wait is for a report stored after this step sent it, with this health, message and
    timeout: re-sending the current health with another message or timeout (or the same
    one, which restarts the timeout) must not return before the kubelet got it.
    """
    handle = world.fleet.driver(args.driver)
    pool = args.pool or world.node
    key = (handle.name, pool, args.device)
    want = {
        "health": args.health,
        # What this kubelet version keeps: messages since 1.36, per-device timeouts since 1.35.
        "message": truncate_health_message(args.message) if world.version.health_message else "",
        "timeout": health_check_timeout(
            args.timeout_seconds if world.version.per_device_health_timeout else 0
        ),
    }
    before = world.health.get(key)
    handle.set_health(
        args.device, args.health, pool=pool, message=args.message, timeout_seconds=args.timeout_seconds
    )
    if world.kubelet is None:
        return
    if not world.version.health_services:  # nothing can arrive: say so now, not after the wait
        raise StepFailure(
            f"setDeviceHealth: kubelet {world.version.version} opens no device-health stream "
            f"(KEP-4680 streams arrived in 1.34), so {handle.name}'s {args.health} for "
            f"{pool}/{args.device} never reaches it",
            expected=want,
            actual=None,
        )

    def stored() -> bool:
        entry = world.health.entries.get(key)
        return entry is not None and entry is not before and all(entry.get(k) == v for k, v in want.items())

    arrived = world.health.wait_for(stored, HEALTH_REPORT_WAIT)
    if arrived:
        return
    latest = world.health.get(key)
    if latest is None or latest is before:
        raise StepFailure(
            f"setDeviceHealth: the kubelet did not receive {args.health} for {pool}/{args.device} "
            f"from {handle.name} within {HEALTH_REPORT_WAIT:g}s (is the health service advertised?)",
            expected=want,
            actual=None if latest is None else {k: latest.get(k) for k in want},
        )
    got = {k: latest.get(k) for k in want}
    raise StepFailure(
        f"setDeviceHealth: the kubelet's newest report for {pool}/{args.device} from {handle.name} "
        f"differs from what was sent: expected {want}, got {got}",
        expected=want,
        actual=got,
    )
