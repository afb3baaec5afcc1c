"""Action steps that inject and lift faults: plugin and API-server fault rules, releasing
the calls a block or hang fault holds, and resetting or refusing a plugin's connections."""

from __future__ import annotations

from typing import Any

from drasim.errors import ConfigError
from drasim.runner.actions.registry import handles
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.drivers import FakeDriverHandle
from drasim.runner.kubeletslot import SCALED_RECONNECT
from drasim.runner.proxied import ProxiedDriverHandle
from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.Fault reads like the YAML

UNBLOCK_WAIT = 10.0
"""Real seconds ``unblock`` waits for each released call to finish at the plugin."""


@handles(S.Fault)
def fault(world: World, args: S.Fault, ctx: StepContext) -> None:
    """Add a plugin or API-server fault rule."""
    if (args.plugin is None) == (args.api_server is None):
        raise ConfigError("fault: give exactly one of plugin or apiServer")
    if args.plugin is not None:
        handle = world.fleet.driver(args.plugin.driver)
        handle.add_fault(world.api.plugin_fault(args.plugin), world.plan.time_scale)
        world.journal.record("fault", where="plugin", driver=handle.name, spec=args.plugin)
    elif args.api_server is not None:
        world.api.add_api_fault(args.api_server)


@handles(S.ClearFaults)
def clear_faults(world: World, args: S.ClearFaults, ctx: StepContext) -> None:
    """Remove fault rules."""
    targets = [world.fleet.driver(args.driver)] if args.driver else list(world.fleet.drivers.values())
    for handle in targets:
        handle.clear_faults()
    if not args.driver and world.api.backend.store is not None:
        world.api.backend.store.faults.clear()


@handles(S.Unblock)
def unblock(world: World, args: S.Unblock, ctx: StepContext) -> None:
    """Release the calls held by block/hang faults and wait until the plugin finished them."""
    handle = world.fleet.driver(args.driver)
    holder: Any
    if isinstance(handle, FakeDriverHandle):
        holder = handle.driver
    elif isinstance(handle, ProxiedDriverHandle):
        holder = handle  # the proxy in front of a driver process holds the calls
    else:
        raise ConfigError(
            f"unblock: driver {handle.name} is a real driver process without drasim's proxy; "
            "it needs the fake plugin or the proxy"
        )
    held = int(holder.held_calls())
    if held == 0:
        raise StepFailure(
            f"unblock: no call of {handle.name} is held by a block or hang fault",
            expected={"held": ">= 1"},
            actual={"held": 0},
        )
    mark = world.journal.mark()
    holder.release_hangs()
    for _ in range(held):
        event = world.journal.wait_for(UNBLOCK_WAIT, kind="rpc", since_seq=mark, side="plugin")
        if event is None:
            raise StepFailure(
                f"unblock: a released call of {handle.name} did not finish within {UNBLOCK_WAIT:g}s"
            )
        mark = int(event["seq"])
    world.journal.record("fault", where="plugin", driver=handle.name, description=f"unblocked {held} call(s)")


@handles(S.ResetConnections)
def reset_connections(world: World, args: S.ResetConnections, ctx: StepContext) -> None:
    """End the kubelet's connections to the plugin's DRA socket."""
    handle = _connections(world, args.driver, "resetConnections")
    handle.reset_connections()
    world.journal.record("fault", where="plugin", driver=handle.name, description="reset the connections")


@handles(S.RefuseConnections)
def refuse_connections(world: World, args: S.RefuseConnections, ctx: StepContext) -> None:
    """Close the plugin's DRA socket until ``refuse: false``."""
    handle = _connections(world, args.driver, "refuseConnections")
    if not args.refuse:  # what follows is the client's reconnect, timed by its own backoff
        world.kubelet_slot.require(SCALED_RECONNECT, "refuseConnections {refuse: false}")
    handle.refuse_connections(args.refuse)
    what = "refuses connections" if args.refuse else "accepts connections again"
    world.journal.record("fault", where="plugin", driver=handle.name, description=what)


def _connections(world: World, driver: str, step: str) -> FakeDriverHandle | ProxiedDriverHandle:
    """The driver's handle, when something resets and refuses its connections: the fake plugin,
    or the proxy in front of a driver process."""
    handle = world.fleet.driver(driver)
    if isinstance(handle, FakeDriverHandle | ProxiedDriverHandle):
        return handle
    raise ConfigError(
        f"{step}: driver {handle.name} is a real driver process without drasim's proxy; "
        "it needs the fake plugin or the proxy"
    )
