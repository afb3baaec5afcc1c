"""Every registered step has exactly one runner handler, and every handler a registered step.

Actions dispatch through ``drasim.runner.actions.HANDLERS``, expectations through
``drasim.runner.checks.CHECKS``; a step added to the scenario language without a handler (or a
handler left behind after a step is removed) fails here, not in a user's run.
"""

from __future__ import annotations

import drasim.scenario.schema  # noqa: F401 - registers every step type
from drasim.runner.actions import HANDLERS
from drasim.runner.checks import CHECKS
from drasim.scenario.registry import STEP_TYPES


def test_every_step_has_one_handler() -> None:
    missing = [t.name for t in STEP_TYPES.values() if t.cls not in HANDLERS and t.cls not in CHECKS]
    both = [t.name for t in STEP_TYPES.values() if t.cls in HANDLERS and t.cls in CHECKS]
    assert missing == []
    assert both == []


def test_every_handler_has_a_step() -> None:
    registered = {t.cls for t in STEP_TYPES.values()}
    assert [c.__name__ for c in HANDLERS if c not in registered] == []
    assert [c.__name__ for c in CHECKS if c not in registered] == []


def test_expectations_are_checks_and_actions_are_handlers() -> None:
    for t in STEP_TYPES.values():
        assert (t.cls in CHECKS) == (t.kind == "expectation"), t.name
