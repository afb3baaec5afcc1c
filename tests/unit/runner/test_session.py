"""The one step session: every entry point (drasim run, the pytest plugin, explore) journals a
step's start and end the same way, and the session owns the step windows and the time limit."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from drasim.errors import ConfigError
from drasim.explore import engine as explore_engine
from drasim.explore import run_choices
from drasim.explore.generator import rule_index
from drasim.pytest_plugin.harness import DrasimNode, StepAssertionError, build_scenario, decode_step
from drasim.report.model import RESULTS
from drasim.runner.context import StepFailure
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.runner.session import StepSession, TimedOut
from drasim.runner.world import World, open_world

# A pod, then an expectation that does not hold (one prepare call, not two).
SCENARIO = build_scenario(
    "two-steps",
    claims=["gpu"],
    steps=[{"startPod": {"name": "a", "claims": ["gpu"]}}, {"expectCalls": {"NodePrepareResources": 2}}],
)


def steps_of(events: list[dict[str, Any]]) -> list[tuple[str, int, str, str | None]]:
    """(kind, index, name, outcome) of the step and step-end events, in journal order."""
    return [
        (e["kind"], e["index"], e["name"], e.get("outcome"))
        for e in events
        if e["kind"] in ("step", "step-end")
    ]


def test_drasim_run_journals_each_steps_start_and_end_with_its_outcome() -> None:
    result = run_scenario(SCENARIO, RunOptions(), results=RESULTS)
    assert result.status == "failed"
    assert steps_of(result.journal) == [
        ("step", 1, "startPod", None),
        ("step-end", 1, "startPod", "passed"),
        ("step", 2, "expectCalls", None),
        ("step-end", 2, "expectCalls", "failed"),
    ]
    failed = [e for e in result.journal if e["kind"] == "step-end" and e["outcome"] == "failed"]
    assert result.failure is not None
    assert [e["error"] for e in failed] == [result.failure.message]
    # The prepare call of step 1 lies between its start and its end.
    seqs = {(e["kind"], e["index"]): e["seq"] for e in result.journal if e["kind"] in ("step", "step-end")}
    prepares = [
        e["seq"]
        for e in result.journal
        if e["kind"] == "rpc" and e["method"].endswith("/NodePrepareResources")
    ]
    assert prepares
    assert all(seqs["step", 1] < seq < seqs["step-end", 1] for seq in prepares)
    # The failure's journal tail ends with the failing step's end.
    assert result.failure.journal_tail[-1]["kind"] == "step-end"


def test_the_pytest_plugins_node_journals_steps_like_drasim_run() -> None:
    scenario = build_scenario("session-node", claims=["gpu"])
    with DrasimNode(scenario) as node:
        node.step({"startPod": {"name": "a", "claims": ["gpu"]}})
        with pytest.raises(StepAssertionError, match="NodePrepareResources"):
            node.step({"expectCalls": {"NodePrepareResources": 2}})
        node.step({"mark": {"name": "here"}})
        node.step({"expectCalls": {"NodePrepareResources": 0, "since": "here"}})
        assert steps_of(node.journal.events()) == [
            ("step", 1, "startPod", None),
            ("step-end", 1, "startPod", "passed"),
            ("step", 2, "expectCalls", None),
            ("step-end", 2, "expectCalls", "failed"),
            ("step", 3, "mark", None),
            ("step-end", 3, "mark", "passed"),
            ("step", 4, "expectCalls", None),
            ("step-end", 4, "expectCalls", "passed"),
        ]
        assert node.session.marks == {"here": node.journal.events("mark")[0]["seq"] - 1}


def test_explore_journals_its_steps_and_its_trace_marks_are_the_sessions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    worlds: list[World] = []

    def keep(*args: Any, **kwargs: Any) -> World:
        world = open_world(*args, **kwargs)
        worlds.append(world)
        return world

    monkeypatch.setattr(explore_engine, "open_world", keep)
    start_pod = (rule_index("startPod", 0), 0, 0, 0)
    trace = run_choices([start_pod], RunOptions())
    assert trace.violation is None
    (world,) = worlds
    events = world.journal.events()
    starts = [e for e in events if e["kind"] == "step"]
    ends = [e for e in events if e["kind"] == "step-end"]
    # Every executed step (the generated ones and the settle steps) is journaled, in order.
    assert [e["name"] for e in starts] == [r.step.name for r in trace.records]
    assert [e["index"] for e in starts] == list(range(1, len(trace.records) + 1))
    assert [(e["index"], e["name"]) for e in ends] == [(e["index"], e["name"]) for e in starts]
    outcomes = ["passed" if r.error is None else "failed" for r in trace.records]
    assert [e["outcome"] for e in ends] == outcomes
    # A step's events come after its mark: the reproducer finds a step's events that way.
    assert [e["seq"] - 1 for e in starts] == trace.marks


def _world() -> World:
    """The scenario's world, built but not started (steps that need no node run on it)."""
    return open_world(SCENARIO, RunOptions())


def test_a_step_that_raises_is_journaled_as_an_error_and_the_error_propagates() -> None:
    world = _world()
    try:
        session = StepSession(world)
        with pytest.raises(ConfigError, match="since"):
            session.run(decode_step({"expectCalls": {"NodePrepareResources": 0, "since": "nowhere"}}))
        end = world.journal.last("step-end")
        assert end is not None
        assert end["outcome"] == "error"
        assert "nowhere" in end["error"]
        assert (session.index, session.step.name if session.step else None) == (0, "expectCalls")
    finally:
        world.teardown()


def test_the_context_gives_since_previous_the_same_steps_start() -> None:
    world = _world()
    try:
        session = StepSession(world)
        step = decode_step({"expectCalls": {"NodePrepareResources": 0}})
        session.run(step)
        world.journal.record("api", verb="GET")
        ctx = session.context(step)
        assert ctx.index == 1
        assert ctx.since("previous") == session.step_marks[0]
        assert ctx.since("start") == 0
        with pytest.raises(StepFailure):
            session.run(decode_step({"expectCalls": {"NodePrepareResources": 1}}))
    finally:
        world.teardown()


def test_within_aborts_the_world_when_the_limit_passes_and_names_the_step() -> None:
    world = _world()
    session = StepSession(world)
    started = threading.Event()

    def hangs() -> None:
        session.index, session.step = 0, decode_step({"startPod": {"name": "a"}})
        started.set()
        world.aborted.wait(30)

    try:
        assert session.within(None, lambda: None) is None
        assert session.within(5.0, lambda: None) is None
        timed_out = session.within(0.2, hangs)
    finally:
        world.teardown()
    assert started.is_set()
    assert world.aborted.is_set()
    assert isinstance(timed_out, TimedOut)
    assert (timed_out.index, timed_out.still_running) == (0, False)
    assert timed_out.message == (
        "the scenario did not finish within its time limit of 0.2s (--scenario-timeout); "
        "it was stopped during step 1 (startPod)"
    )
