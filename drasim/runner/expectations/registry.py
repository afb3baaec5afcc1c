"""The table of expectation checks, filled by ``@checks`` in the modules of this package.

A check reads the world and raises :class:`~drasim.runner.context.StepFailure` when its
expectation does not hold; ``@checks(ExpectX)`` registers it, as ``@handles`` does for actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from drasim.errors import DrasimError
from drasim.runner.context import StepContext

if TYPE_CHECKING:
    from drasim.runner.world import World

__all__ = ["CHECKS", "Check", "checks"]

Check = Callable[["World", Any, StepContext], None]
ExpectT = TypeVar("ExpectT")

CHECKS: dict[type, Check] = {}
"""Expectation dataclass -> its check."""


def checks(
    expectation: type[ExpectT],
) -> Callable[[Callable[[World, ExpectT, StepContext], None]], Callable[[World, ExpectT, StepContext], None]]:
    """Register the decorated function as the check of ``expectation``."""

    def register(
        check: Callable[[World, ExpectT, StepContext], None],
    ) -> Callable[[World, ExpectT, StepContext], None]:
        if expectation in CHECKS:
            raise DrasimError(f"expectation {expectation.__name__} has two checks")
        CHECKS[expectation] = check
        return check

    return register
