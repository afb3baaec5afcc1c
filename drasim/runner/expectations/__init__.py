"""Runtime expectations: the checks of ``expect*`` steps, which only read the world.

:func:`run_check` dispatches an expectation (an instance of one of the dataclasses in
:mod:`drasim.scenario.expectations`) to its check, which returns when the expectation
holds and raises :class:`~drasim.runner.context.StepFailure` when it does not. The
checks live in this package's modules by subject (calls, errors, checkpoint, cdi, health,
node; helpers in common); :data:`CHECKS` maps each expectation type to its check. Static
validation of a scenario file is :mod:`drasim.scenario.validation`, not here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from drasim.errors import ConfigError
from drasim.runner.context import StepContext
from drasim.runner.expectations.calls import check_calls, check_consistent_replies
from drasim.runner.expectations.cdi import check_cdi_devices, check_cdi_specs
from drasim.runner.expectations.checkpoint import check_checkpoint
from drasim.runner.expectations.errors import check_expect_error, check_no_error
from drasim.runner.expectations.health import check_health
from drasim.runner.expectations.node import (
    check_connections,
    check_metric,
    check_might_need_unprepare,
    check_pod,
    check_registered,
    check_resource_slices,
)
from drasim.scenario import expectations as ex

if TYPE_CHECKING:
    from drasim.runner.world import World

Check = Callable[["World", Any, StepContext], None]

CHECKS: dict[type, Check] = {
    ex.ExpectCalls: check_calls,
    ex.ExpectError: check_expect_error,
    ex.ExpectNoError: check_no_error,
    ex.ExpectCheckpoint: check_checkpoint,
    ex.ExpectCdiDevices: check_cdi_devices,
    ex.ExpectCdiSpecs: check_cdi_specs,
    ex.ExpectMightNeedUnprepare: check_might_need_unprepare,
    ex.ExpectMetric: check_metric,
    ex.ExpectResourceSlices: check_resource_slices,
    ex.ExpectRegistered: check_registered,
    ex.ExpectPod: check_pod,
    ex.ExpectConnections: check_connections,
    ex.ExpectHealth: check_health,
    ex.ExpectConsistentReplies: check_consistent_replies,
}
"""Expectation dataclass -> its check."""


def is_expectation(args: object) -> bool:
    """Whether ``args`` is an expectation this module checks."""
    return type(args) in CHECKS


def run_check(world: World, args: object, ctx: StepContext) -> None:
    """Check one expectation against the world; raise StepFailure when it does not hold."""
    check = CHECKS.get(type(args))
    if check is None:
        msg = f"{type(args).__name__} is not an expectation (step {ctx.index + 1}, {ctx.name})"
        raise ConfigError(msg)
    check(world, args, ctx)


__all__ = ["CHECKS", "is_expectation", "run_check"]
