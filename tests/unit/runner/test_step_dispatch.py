"""Every registered step has exactly one runner handler, and every handler a registered step.

Actions dispatch through ``drasim.runner.actions.HANDLERS``, expectations through
``drasim.runner.expectations.CHECKS``; a step added to the scenario language without a handler (or a
handler left behind after a step is removed) fails here, not in a user's run.
"""

from __future__ import annotations

import drasim.scenario.schema  # noqa: F401 - registers every step type
from drasim.runner.actions import HANDLERS
from drasim.runner.expectations import CHECKS
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


def test_step_traits_are_consistent() -> None:
    """The traits every reader relies on (validation, explore) hold for each registered step."""
    import dataclasses

    from drasim.scenario.registry import steps_with

    for t in STEP_TYPES.values():
        if t.pod_field:
            assert "pod" in {f.name for f in dataclasses.fields(t.cls)}, t.name
    # A step whose result is a kubelet operation runs PrepareResources or UnprepareResources.
    assert steps_with("operation") <= steps_with("prepares") | steps_with("unprepares")
    assert steps_with("prepares") == {
        "startPod",
        "syncPod",
        "recreateSandbox",
        "advanceClock",
        "startKubelet",
    }
    assert "stopPod" in steps_with("unprepares")
    assert "restartKubelet" in steps_with("lifecycle")


def test_a_second_handler_for_a_step_is_refused() -> None:
    import pytest

    from drasim.errors import DrasimError
    from drasim.runner.actions.registry import handles
    from drasim.scenario import steps

    before = dict(HANDLERS)
    with pytest.raises(DrasimError, match="Apply has two handlers"):
        handles(steps.Apply)(lambda world, args, ctx: None)
    assert before == HANDLERS
