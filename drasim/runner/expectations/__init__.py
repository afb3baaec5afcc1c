"""Runtime expectations: the checks of ``expect*`` steps, which only read the world.

:func:`run_check` dispatches an expectation (an instance of one of the dataclasses in
:mod:`drasim.scenario.expectations`) to its check, which returns when the expectation
holds and raises :class:`~drasim.runner.context.StepFailure` when it does not. The
checks live in this package's modules by subject (calls, errors, checkpoint, cdi, health,
node; helpers in common), each registered with ``@checks(ExpectX)`` in :data:`CHECKS`. Static
validation of a scenario file is :mod:`drasim.scenario.validation`, not here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drasim.errors import ConfigError
from drasim.runner.context import StepContext

# The check modules register their checks (@checks) when imported.
from drasim.runner.expectations import calls, cdi, checkpoint, errors, health, node  # noqa: F401
from drasim.runner.expectations.registry import CHECKS

if TYPE_CHECKING:
    from drasim.runner.world import World


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
