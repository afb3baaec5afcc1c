"""The action registry: which handler runs each action step, and the outcome check they share.

A handler takes ``(world, args, ctx)``, does what its step's docstring promises and raises
:class:`~drasim.runner.context.StepFailure` when the step's own ``expectError`` does not
hold. Handlers register with :func:`handles`; :func:`run_action` dispatches to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from drasim.errors import ApiError, ConfigError, DrasimError
from drasim.runner.context import StepContext, StepFailure
from drasim.scenario.common import ErrorMatch

if TYPE_CHECKING:
    from drasim.runner.world import World

RESOURCE_V1 = "resource.k8s.io/v1"
Handler = Callable[["World", Any, StepContext], None]
StepT = TypeVar("StepT")

HANDLERS: dict[type, Handler] = {}
"""Action step dataclass -> its handler (filled by the topic modules of this package)."""


def handles(
    step_type: type[StepT],
) -> Callable[[Callable[[World, StepT, StepContext], None]], Callable[[World, StepT, StepContext], None]]:
    """Register the decorated function as the handler of ``step_type``."""

    def register(
        handler: Callable[[World, StepT, StepContext], None],
    ) -> Callable[[World, StepT, StepContext], None]:
        if step_type in HANDLERS:
            raise DrasimError(f"step {step_type.__name__} has two handlers")
        HANDLERS[step_type] = handler
        return handler

    return register


def run_action(world: World, name: str, args: object, ctx: StepContext) -> None:
    """Dispatch one action step."""
    handler = HANDLERS.get(type(args))
    if handler is None:
        raise DrasimError(f"step {name!r} is not implemented by the runner yet")
    handler(world, args, ctx)


def check_error(expect: ErrorMatch | str | None, error: str | None, what: str) -> None:
    """Compare an operation's outcome with a step's ``expectError``."""
    if expect is None:
        if error is not None:
            raise StepFailure(f"{what} failed: {error}", expected="success", actual=error)
        return
    matcher = ErrorMatch(contains=expect) if isinstance(expect, str) else expect
    if error is None:
        raise StepFailure(
            f"{what} succeeded, but an error that {matcher.describe()} was expected",
            expected=matcher.describe(),
            actual="success",
        )
    if matcher.contains and matcher.contains not in error:
        raise StepFailure(
            f"{what} failed with an unexpected error: {error}", expected=matcher.describe(), actual=error
        )
    if matcher.matches and not re.search(matcher.matches, error):
        raise StepFailure(
            f"{what} failed with an unexpected error: {error}", expected=matcher.describe(), actual=error
        )


def api_error(fn: Callable[[], object]) -> str | None:
    """Run one API call; return its API or configuration error as text, None on success."""
    try:
        fn()
    except (ApiError, ConfigError) as err:
        return str(err)
    return None
