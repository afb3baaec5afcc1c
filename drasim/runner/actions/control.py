"""Action steps that shape the scenario itself: named journal marks and parallel actions."""

from __future__ import annotations

import threading
from typing import Any

from drasim.errors import ConfigError
from drasim.runner.actions.registry import handles, run_action
from drasim.runner.context import StepContext
from drasim.runner.expectations.node import list_slices, slice_identities
from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.Mark reads like the YAML


@handles(S.Mark)
def mark(world: World, args: S.Mark, ctx: StepContext) -> None:
    """Name this point of the journal (and record the ResourceSlices there)."""
    if args.name in ctx.marks:
        raise ConfigError(f"mark: {args.name!r} is used twice")
    ctx.marks[args.name] = world.journal.mark()
    # The ResourceSlices as they are now, for expectResourceSlices' unchangedSince.
    slices = list_slices(world, "")
    world.journal.record("mark", name=args.name, slices=slice_identities(slices))


@handles(S.Parallel)
def parallel(world: World, args: S.Parallel, ctx: StepContext) -> None:
    """Run actions concurrently; each checks its own expectError."""
    failures: list[BaseException] = []
    lock = threading.Lock()

    def run(step: Any) -> None:
        try:
            run_action(world, step.name, step.args, ctx)
        except BaseException as err:
            with lock:
                failures.append(err)

    threads = [threading.Thread(target=run, args=(s,), daemon=True) for s in args.steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
