"""drasim explore: clean runs stay clean, injected bugs are found, shrunk and written as reproducers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drasim.cli import main
from drasim.explore import ExploreConfig, explore, run_choices
from drasim.explore.generator import rule_index
from drasim.explore.reproducer import write_reproducer
from drasim.explore.violations import InvariantViolation
from drasim.report.model import RESULTS
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.scenario.common import ErrorMatch
from drasim.scenario.loader import load_file
from drasim.scenario.steps import StartPod


def choice(name: str, a: int = 0, b: int = 0, c: int = 0, nth: int = 0) -> tuple[int, int, int, int]:
    return (rule_index(name, nth), a, b, c)


def test_short_exploration_of_the_correct_fake_finds_nothing() -> None:
    outcome = explore(ExploreConfig(max_examples=12, seed=7, steps=12))
    assert outcome.failure is None
    assert outcome.examples == 12
    assert outcome.steps >= 12
    assert not outcome.timed_out


def test_non_idempotent_is_found_shrunk_and_reproduced(tmp_path: Path) -> None:
    config = ExploreConfig(max_examples=60, seed=1, steps=8, bugs=("non-idempotent",))
    outcome = explore(config)
    failure = outcome.failure
    assert failure is not None
    assert failure.violation is not None
    assert failure.violation.invariant == "idempotent-prepare"
    assert "answered different devices" in failure.violation.message
    assert outcome.shrink_examples > 0
    assert len(failure.records) <= 3, [r.text for r in failure.records]

    repro = write_reproducer(failure, tmp_path, config)
    assert repro.path.exists()
    (scenario,) = load_file(repro.path)
    assert scenario.metadata.catches == ["non-idempotent"]
    assert repro.fails_with_bugs is True
    assert repro.passes_without_bugs is True
    # The same outcome when replayed independently, as `drasim run --inject-bug` would.
    broken = run_scenario(scenario, RunOptions(bugs=("non-idempotent",)), results=RESULTS)
    assert broken.status == "failed"
    assert broken.failure is not None
    assert "same devices" in broken.failure.message
    assert run_scenario(scenario, RunOptions(), results=RESULTS).status == "passed"
    assert main(["validate", str(repro.path)]) == 0


def test_same_seed_same_sequence_other_seed_other_sequence() -> None:
    def texts(seed: int) -> tuple[list[list[tuple[int, int, int, int]]], list[list[str]]]:
        steps: list[list[str]] = []
        outcome = explore(
            ExploreConfig(max_examples=6, seed=seed, steps=8),
            on_example=lambda t: steps.append([r.text for r in t.records]),
        )
        return outcome.example_choices, steps

    first, second, other = texts(11), texts(11), texts(12)
    assert first == second
    assert first[0] != other[0]


def test_duplicate_cdi_ids_break_the_uniqueness_invariant() -> None:
    with pytest.raises(InvariantViolation) as info:
        run_choices([choice("startPod")], RunOptions(bugs=("duplicate-cdi-ids",)))
    violation = info.value.violation
    assert violation.invariant == "unique-cdi-ids"
    assert violation.step_index == 0
    assert violation.data["duplicates"] == ["device 1 lists gpu.example.com/gpu=gpu-0 twice"]


def test_forgets_state_leaves_a_cdi_spec_behind() -> None:
    choices = [choice("startPod"), choice("restartPlugin")]
    with pytest.raises(InvariantViolation) as info:
        run_choices(choices, RunOptions(bugs=("forgets-state",)))
    violation = info.value.violation
    assert violation.invariant == "all-released"
    assert violation.step_index is None
    assert len(violation.data["cdi_specs"]) == 1
    # Without the bug the same choices pass every invariant, settle steps included.
    trace = run_choices(choices, RunOptions())
    assert trace.violation is None
    assert [r.step.name for r in trace.records] == [
        "startPod",
        "restartPlugin",
        "advanceClock",
        "advanceClock",
        "deletePod",
        "reconcile",
        "advanceClock",
    ]


def test_failed_operations_are_recorded_and_written_with_expect_error(tmp_path: Path) -> None:
    # fault(a=0 -> NodePrepareResources, b=0 -> code UNAVAILABLE, c=0 -> once), then a pod.
    choices = [choice("fault"), choice("startPod")]
    trace = run_choices(choices, RunOptions())
    assert trace.violation is None
    failed = [r for r in trace.records if r.error]
    assert [r.step.name for r in failed] == ["startPod"]
    assert "code = Unavailable" in str(failed[0].error)
    written = failed[0].written.args
    assert isinstance(written, StartPod)
    assert isinstance(written.expect_error, ErrorMatch)
    assert written.expect_error.contains == "prepare dynamic resources"
    # The settle phase clears faults and deletes the pending pod; written out, the run replays cleanly.
    repro = write_reproducer(trace, tmp_path, ExploreConfig(seed=0))
    assert repro.fails_with_bugs is False


def test_time_limit_stops_generation_cleanly() -> None:
    outcome = explore(ExploreConfig(max_examples=10_000, seed=1, steps=5, time_limit=0.5))
    assert outcome.timed_out
    assert 0 < outcome.examples < 10_000
    assert outcome.failure is None


def test_cli_exit_codes_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["explore", "--max-examples", "3", "--seed", "1", "--steps", "4", "--out", str(tmp_path)]) == 0
    )
    out = capsys.readouterr().out
    assert "explored 3 example(s)" in out
    assert "no invariant was violated" in out
    code = main(
        [
            "explore",
            "--max-examples",
            "5",
            "--seed",
            "1",
            "--inject-bug",
            "duplicate-cdi-ids",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "VIOLATION unique-cdi-ids" in out
    written = sorted(tmp_path.glob("*.yaml"))
    assert [p.name for p in written] == ["explore-unique-cdi-ids-seed-1.yaml"]
    assert f"reproducer: {written[0]}" in out
    assert main(["explore", "--inject-bug", "no-such-bug"]) == 2


def test_terminating_a_never_prepared_pod_unprepares_a_claim_in_use() -> None:
    """A finding of the explorer (seed 3, reported to the runner/kubelet owners).

    pod-0 fails to prepare claim-0 while the plugin is stopped (validation fails, so it never
    becomes a reference of the claim); pod-1 then prepares claim-0. Deleting pod-0 (a settle
    step) makes UnprepareResources fall back to the pod's spec claims, and as claim-0 has a
    single reference (pod-1's), the kubelet calls NodeUnprepareResources while pod-1 runs. Upstream's
    unprepareResources has the same ``len(PodUIDs) > 1`` test, so this pins current behaviour:
    if the kubelet learns to skip claims the pod does not reference, flip this test.
    """
    choices = [
        choice("create"),
        choice("stopPlugin"),
        choice("startPod"),
        choice("startPlugin"),
        choice("startPod"),
    ]
    with pytest.raises(InvariantViolation) as info:
        run_choices(choices, RunOptions())
    violation = info.value.violation
    assert violation.invariant == "no-unprepare-in-use"
    assert violation.data["claim"] == "default/claim-0"
    assert violation.data["pods"] == ["default/pod-1"]


def test_cli_shows_progress_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A long exploration is visibly alive: progress lines on stderr, the summary on stdout."""
    args = ["explore", "--max-examples", "10", "--seed", "1", "--steps", "3", "--out", str(tmp_path)]
    assert main(args) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    # Off a terminal: a line every tenth of the examples (10 examples: every one).
    assert [line.split(",")[0] for line in lines] == [f"explore: {n}/10 examples" for n in range(1, 11)]
    assert all(re.fullmatch(r"explore: \d+/10 examples, \d+ steps, \d+\.\ds", line) for line in lines)
    assert "explore:" not in captured.out
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_progress_on_a_terminal_rewrites_one_line_and_reports_shrinking() -> None:
    import io

    from drasim.commands.explore import Progress
    from drasim.explore import ExploreOutcome

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(stream, max_examples=100, time_limit=60)
    outcome = ExploreOutcome(examples=7, steps=91)
    progress.update(outcome, 1.25)
    outcome.examples, outcome.shrink_examples = 12, 4
    progress.update(outcome, 2.5)
    progress.done()
    text = stream.getvalue()
    assert "\n" not in text
    assert "\rexplore: 7/100 examples, 91 steps, 1.2s of 60s" in text
    assert "\rexplore: violation found at example 8; shrinking: 4 examples tried, 2.5s of 60s" in text
    assert text.endswith("\r")
