"""Action steps of the kubelet's lifecycle: stop, start (from the checkpoint) and restart,
optionally crashing at a hook point while another action runs."""

from __future__ import annotations

import contextlib

from drasim.errors import KubeletError
from drasim.runner import podworker
from drasim.runner.actions.registry import check_error, handles, run_action
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.kubeletslot import SimulatedCrash
from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.StartKubelet reads like the YAML
from drasim.scenario.common import ErrorMatch


def start_and_sync(world: World, expect: ErrorMatch | str | None, *, running_too: bool) -> None:
    """Start the kubelet (checking ``expect``); a started kubelet's pod worker syncs the pods."""
    error: str | None = None
    try:
        world.start_kubelet()
    except KubeletError as err:
        error = str(err)
    check_error(expect, error, "kubelet start")
    if world.kubelet is not None:
        podworker.sync_all(world, running_too=running_too)


@handles(S.StopKubelet)
def stop_kubelet(world: World, args: S.StopKubelet, ctx: StepContext) -> None:
    """Stop the kubelet cleanly."""
    world.stop_kubelet()


@handles(S.StartKubelet)
def start_kubelet(world: World, args: S.StartKubelet, ctx: StepContext) -> None:
    """Start a kubelet from the checkpoint and sync pods."""
    if world.kubelet is not None:
        raise StepFailure("startKubelet: the kubelet is already running")
    if args.version:
        world.set_version(args.version)
    start_and_sync(world, args.expect_error, running_too=world.profile.re_prepare_after_restart == "allPods")


@handles(S.RestartKubelet)
def restart_kubelet(world: World, args: S.RestartKubelet, ctx: StepContext) -> None:
    """Stop (or crash at a hook point while running ``during``) and start again."""
    if args.crash_at:
        if args.during is None:
            raise StepFailure("restartKubelet: crashAt needs a 'during' action that reaches the hook point")
        slot = world.kubelet_slot
        with slot.crash_armed(args.crash_at), contextlib.suppress(SimulatedCrash):
            run_action(world, args.during.name, args.during.args, ctx)
        if slot.crashed_at is None:
            raise StepFailure(
                f"restartKubelet: the kubelet never reached hook point {args.crash_at} during "
                f"{args.during.name}",
                expected=args.crash_at,
                actual="not reached",
            )
        world.journal.record("kubelet", operation="crash", point=args.crash_at, error=None)
    world.stop_kubelet()
    podworker.advance(world, args.downtime)
    if args.version:
        world.set_version(args.version)
    if args.stay_down:
        return
    start_and_sync(world, args.expect_error, running_too=world.profile.re_prepare_after_restart == "allPods")
