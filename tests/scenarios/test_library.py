"""The built-in scenario library: every scenario passes against the correct fake plugin,
and every scenario that claims to catch a fake-plugin bug fails when that bug is switched on.

This is what proves the library can catch bugs: a scenario that passes whatever the
driver does would be worthless.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from drasim.journal import describe_event
from drasim.report.model import RESULTS, ScenarioResult
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.scenario import builtin_scenario_dir, load_paths
from drasim.scenario.schema import Scenario

LIBRARY: list[Scenario] = sorted(load_paths([builtin_scenario_dir()]), key=lambda s: s.name)
CATCHES = [(s, bug) for s in LIBRARY for bug in s.metadata.catches]


def _failure(result: object) -> str:
    failure = getattr(result, "failure", None)
    if failure is None:
        return ""
    return f"{failure.message}\nstep: {failure.step_text}\n{failure.diff}"


def _explain(result: object) -> str:
    """The failure and the journal's last events (for a failure seen only under load)."""
    if getattr(result, "failure", None) is None:
        return ""
    events = getattr(result, "journal", None) or []
    tail = "\n".join("  " + describe_event(e) for e in events[-40:])
    return f"{_failure(result)}\njournal tail:\n{tail}"


# Words of a scenario that times a call on purpose (a delayed, hung or blocked call, or an
# expected deadline): there a missed deadline is the outcome under test, never load.
_TIMED = ("delay", "hang", "block", "DeadlineExceeded", "deadline")


def _run_passing(scenario: Scenario, options: RunOptions | None = None) -> ScenarioResult:
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
        and "DeadlineExceeded" in _failure(result)
        and not any(w in text for w in _TIMED)
    ):
        slower = max(5 * scenario.spec.kubelet.time_scale, 0.05)
        result = run_scenario(scenario, replace(options, time_scale=slower), results=RESULTS)
    return result


def test_library_is_large_enough() -> None:
    names = [s.name for s in LIBRARY]
    assert len(names) >= 40
    assert len(set(names)) == len(names)
    assert any(s.file.split("/scenarios/")[1].startswith("conformance/") for s in LIBRARY)
    assert any(s.file.split("/scenarios/")[1].startswith("kubelet/") for s in LIBRARY)


@pytest.mark.parametrize("scenario", LIBRARY, ids=lambda s: s.name)
def test_scenario_passes_against_the_fake_plugin(scenario: Scenario) -> None:
    result = _run_passing(scenario)
    assert result.status == "passed", _explain(result)


@pytest.mark.parametrize(("scenario", "bug"), CATCHES, ids=lambda v: v if isinstance(v, str) else v.name)
def test_scenario_catches_its_bug(scenario: Scenario, bug: str) -> None:
    result = run_scenario(scenario, RunOptions(bugs=(bug,)), results=RESULTS)
    assert result.status == "failed", f"{scenario.name} did not catch the {bug!r} bug of the fake plugin"


def test_every_bug_is_caught_by_some_scenario() -> None:
    from fake_plugins import BUGS

    caught = {bug for _, bug in CATCHES}
    assert caught == set(BUGS), f"bugs no scenario catches: {sorted(set(BUGS) - caught)}"


@pytest.mark.parametrize("scenario", LIBRARY, ids=lambda s: s.name)
def test_scenario_passes_with_the_http_backend(scenario: Scenario) -> None:
    """The kubelet, the runner and the fake drivers all use the kubernetes client over HTTP."""
    result = _run_passing(scenario, RunOptions(backend="http"))
    assert result.status == "passed", _explain(result)
