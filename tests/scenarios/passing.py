"""Running a library scenario that must pass, once more if only CPU starvation failed it.

Loaded by tests/conftest.py as ``drasim_test_scenario_passing``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from drasim.journal import describe_event
from drasim.report.model import RESULTS, ScenarioResult
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.scenario.schema import Scenario

TIMED = ("delay", "hang", "block", "DeadlineExceeded", "deadline")
"""Words of a scenario that times a call on purpose (a delayed, hung or blocked call, or an
expected deadline): there a missed deadline is the outcome under test, never load."""


def failure(result: object) -> str:
    """The failure's message, step and diff ("" when it passed)."""
    found = getattr(result, "failure", None)
    if found is None:
        return ""
    return f"{found.message}\nstep: {found.step_text}\n{found.diff}"


def explain(result: object) -> str:
    """The failure and the journal's last events (for a failure seen only under load)."""
    if getattr(result, "failure", None) is None:
        return ""
    events = getattr(result, "journal", None) or []
    tail = "\n".join("  " + describe_event(e) for e in events[-40:])
    return f"{failure(result)}\njournal tail:\n{tail}"


def run_passing(scenario: Scenario, options: RunOptions | None = None) -> ScenarioResult:
    """Run a scenario that must pass; once more, slower, if only CPU starvation failed it.

    At the default time scale the kubelet's 45 s call deadline is 0.45 s of real time, which a
    prepare can miss when the machine is busy (parallel tests on two cores). A scenario that
    does not time calls on purpose and failed with DeadlineExceeded is run again at five times
    the time scale (the same scenario, the same assertions); it must pass then.
    """
    options = options or RunOptions()
    result = run_scenario(scenario, options, results=RESULTS)
    text = Path(scenario.file).read_text(encoding="utf-8")
    if (
        result.status == "failed"
        and "DeadlineExceeded" in failure(result)
        and not any(w in text for w in TIMED)
    ):
        slower = max(5 * scenario.spec.kubelet.time_scale, 0.05)
        result = run_scenario(scenario, replace(options, time_scale=slower), results=RESULTS)
    return result
