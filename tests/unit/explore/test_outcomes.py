"""drasim explore's outcome invariants: fault-free-succeeds and claim-errors-reported.

The correct fake never breaks them, even where operations fail legitimately; the fake's
``drops-claim`` and ``ignores-claim-errors`` bugs are found, and their reproducers fail with
the bug and pass without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from drasim.cli import main
from drasim.explore import ExploreConfig, Trace, explore, run_choices
from drasim.explore.generator import rule_index
from drasim.explore.reproducer import write_reproducer
from drasim.explore.violations import InvariantViolation
from drasim.report.model import RESULTS
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.scenario import steps as S  # noqa: N812
from drasim.scenario.loader import load_file

Choice = tuple[int, int, int, int]


def choice(name: str, a: int = 0, b: int = 0, c: int = 0, nth: int = 0) -> Choice:
    return (rule_index(name, nth), a, b, c)


# fault(a, b, c): a picks the RPC (0 prepare, 1 unprepare), b % 4 the kind (0 a gRPC code,
# 1 a per-claim error for every claim), c the count (0 once).
PREPARE_CODE_ONCE = choice("fault")
PREPARE_CLAIM_ERROR_ONCE = choice("fault", b=1)
UNPREPARE_CLAIM_ERROR_ONCE = choice("fault", a=1, b=1)


def replay(path: Path, *bugs: str) -> int:
    args = ["run", str(path)]
    for bug in bugs:
        args += ["--inject-bug", bug]
    return main(args)


# ----------------------------------------------------------------------------- the correct fake
def test_legitimate_failures_are_not_fault_free_violations() -> None:
    """Operations that fail for a reason (fault, stopped plugin, a device the plugin still holds) pass."""
    choices = [
        PREPARE_CODE_ONCE,
        choice("startPod"),  # pod-0: fails (the fault fires once), retried later
        choice("startPod"),  # pod-1: the fault is spent, the state is clean: succeeds
        choice("stopPlugin"),
        choice("startPod"),  # pod-2: fails, the plugin is stopped
        choice("startPlugin"),
        choice("syncPod"),  # pod-0's retry, now that nothing is wrong: succeeds
        choice("stopKubelet"),
        choice("forceDeletePod", a=1),  # pod-1 gone, its template claim deleted, the plugin still holds it
        choice("startKubelet"),  # the new kubelet never learns of pod-1; only reconcile would unprepare
        choice("startPod"),  # pod-3's new claim gets pod-1's device, which the plugin refuses
    ]
    trace = run_choices(choices, RunOptions())
    errors = [(r.text, r.error) for r in trace.records if r.error]
    assert trace.violation is None
    assert [text.split(":", 1)[0] for text, _ in errors] == ["startPod"] * 3, errors
    assert any("already in use" in error for _, error in errors), errors


def test_retrying_after_an_unprepare_failure_does_not_count_as_a_second_unprepare() -> None:
    """unprepared-once counts from the claim's last prepare attempt, failed ones included.

    claim-0 is prepared (pod-0) and unprepared (pod-0 deleted); pod-1's prepare of it then fails,
    which leaves it in the kubelet's cache, so deleting pod-1 unprepares it again (as upstream).
    """
    choices = [
        choice("create"),
        choice("startPod"),
        choice("deletePod"),
        PREPARE_CODE_ONCE,
        choice("startPod"),
    ]
    trace = run_choices(choices, RunOptions())
    assert trace.violation is None
    assert [r.step.name for r in trace.records if r.error] == ["startPod"]


def test_a_seeded_exploration_of_the_correct_fake_finds_nothing() -> None:
    outcome = explore(ExploreConfig(max_examples=25, seed=2, steps=15))
    assert outcome.failure is None
    assert outcome.failed_operations > 0  # legitimate failures happened and were not violations


# ----------------------------------------------------------------------------- drops-claim
def test_drops_claim_fails_the_first_fault_free_prepare() -> None:
    with pytest.raises(InvariantViolation) as info:
        run_choices([choice("startPod")], RunOptions(bugs=("drops-claim",)))
    violation = info.value.violation
    assert violation.invariant == "fault-free-succeeds"
    assert violation.step_index == 0
    assert violation.data["operation"] == "PrepareResources"
    assert violation.data["pod"] == "default/pod-0"
    assert "NodePrepareResources skipped 1 ResourceClaims" in violation.data["error"]
    assert run_choices([choice("startPod")], RunOptions()).violation is None


def test_drops_claim_is_found_shrunk_and_reproduced(tmp_path: Path) -> None:
    config = ExploreConfig(max_examples=20, seed=1, steps=8, bugs=("drops-claim",))
    outcome = explore(config)
    failure = outcome.failure
    assert failure is not None
    assert failure.violation is not None
    assert failure.violation.invariant == "fault-free-succeeds"
    assert outcome.examples - outcome.shrink_examples <= 5
    assert [r.step.name for r in failure.records] == ["startPod"]

    repro = write_reproducer(failure, tmp_path, config)
    assert (repro.fails_with_bugs, repro.passes_without_bugs) == (True, True)
    (scenario,) = load_file(repro.path)
    assert scenario.metadata.catches == ["drops-claim"]
    # The failing operation itself is the expectation: the step is written without expectError.
    (step,) = scenario.spec.steps
    assert isinstance(step.args, S.StartPod)
    assert step.args.expect_error is None
    broken = run_scenario(scenario, RunOptions(bugs=("drops-claim",)), results=RESULTS)
    assert broken.failure is not None
    assert "skipped 1 ResourceClaims" in broken.failure.message
    assert replay(repro.path, "drops-claim") == 1
    assert replay(repro.path) == 0


# ----------------------------------------------------------------------------- ignores-claim-errors
def test_ignored_prepare_error_is_caught_and_the_step_must_fail(tmp_path: Path) -> None:
    choices = [PREPARE_CLAIM_ERROR_ONCE, choice("startPod")]
    bugs = ("ignores-claim-errors",)
    with pytest.raises(InvariantViolation) as info:
        run_choices(choices, RunOptions(bugs=bugs))
    violation = info.value.violation
    assert violation.invariant == "claim-errors-reported"
    assert violation.step_index == 1
    assert violation.data["rpc"] == "NodePrepareResources"
    assert violation.data["error"] == "injected claim error"
    assert violation.data["fired"] == 1
    assert violation.data["failed_seqs"] == []
    assert run_choices(choices, RunOptions()).violation is None

    trace = run_choices_failure(choices, bugs)
    repro = write_reproducer(trace, tmp_path, ExploreConfig(seed=0, bugs=bugs))
    assert (repro.fails_with_bugs, repro.passes_without_bugs) == (True, True)
    step = repro.scenario.spec.steps[-1]
    assert isinstance(step.args, S.StartPod)
    assert step.args.expect_error == "injected claim error"  # the YAML shorthand


def test_ignored_unprepare_error_in_a_reconcile_pass_is_checked_through_the_journal(tmp_path: Path) -> None:
    """The call comes from a reconcile pass (no step result): a mark and expectError since it."""
    choices = [
        choice("startPod"),
        choice("stopKubelet"),
        choice("forceDeletePod"),  # with the kubelet down: pod-0 is gone, its claim is still prepared
        choice("startKubelet"),
        UNPREPARE_CLAIM_ERROR_ONCE,
        choice("reconcile"),
    ]
    bugs = ("ignores-claim-errors",)
    trace = run_choices_failure(choices, bugs)
    assert trace.violation is not None
    assert trace.violation.invariant == "claim-errors-reported"
    assert trace.violation.data["rpc"] == "NodeUnprepareResources"
    assert trace.records[-1].step.name == "reconcile"
    assert run_choices(choices, RunOptions()).violation is None

    repro = write_reproducer(trace, tmp_path, ExploreConfig(seed=0, bugs=bugs))
    assert (repro.fails_with_bugs, repro.passes_without_bugs) == (True, True)
    names = [s.name for s in repro.scenario.spec.steps]
    assert names[-3:] == ["mark", "reconcile", "expectError"]
    check = repro.scenario.spec.steps[-1].args
    assert check == type(check)(contains="injected claim error", since="before-violation")
    assert replay(repro.path, *bugs) == 1
    assert replay(repro.path) == 0


@pytest.mark.slow
def test_ignores_claim_errors_is_found_by_exploration(tmp_path: Path) -> None:
    config = ExploreConfig(max_examples=40, seed=24, steps=8, bugs=("ignores-claim-errors",))
    outcome = explore(config)
    failure = outcome.failure
    assert failure is not None
    assert failure.violation is not None
    assert failure.violation.invariant == "claim-errors-reported"
    assert outcome.examples - outcome.shrink_examples <= 30
    assert len(failure.records) <= 4, [r.text for r in failure.records]
    repro = write_reproducer(failure, tmp_path, config)
    assert (repro.fails_with_bugs, repro.passes_without_bugs) == (True, True)
    assert repro.scenario.metadata.catches == ["ignores-claim-errors"]


def run_choices_failure(choices: list[Choice], bugs: tuple[str, ...]) -> Trace:
    """The trace of a run that breaks an invariant (run_choices raises; the trace is filled)."""
    trace = Trace(choices=list(choices))
    with pytest.raises(InvariantViolation):
        run_choices(choices, RunOptions(bugs=bugs), trace=trace)
    return trace
