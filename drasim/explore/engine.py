"""Drive exploration with hypothesis: choices in, steps on a live world, invariants after each.

Each hypothesis example builds a fresh :class:`~drasim.runner.world.World` from the
exploration scenario (:mod:`drasim.explore.base`), maps its drawn choices onto valid
steps one at a time (:mod:`drasim.explore.generator`), runs each through the
runner's step session (:class:`~drasim.runner.session.StepSession`, which journals
each step as ``drasim run`` does) and checks the per-step invariants, then settles the node
(faults cleared, plugin and kubelet up, every pod deleted, a reconcile pass, clock
advanced past retries and a reconcile period) and checks the end-of-run invariants.

A violation raises an exception of the invariant's own class, so hypothesis
shrinks it; hypothesis replays the minimal example last, and that replay's trace is
what :func:`explore` returns. ``time_limit`` is honoured between examples: once it is
spent the next example stops hypothesis (a BaseException it does not treat as a
failure); if that happens while shrinking, the last failing run (the best so far,
complete with its settle steps) is the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.errors import Flaky

from drasim.explore.base import base_scenario
from drasim.explore.execute import StepRecord, run_step
from drasim.explore.generator import Choice, StepGenerator
from drasim.explore.oracle import Oracle
from drasim.explore.violations import InvariantViolation, Violation, violation_error
from drasim.runner.drivers import FakeDriverHandle
from drasim.runner.options import RunOptions
from drasim.runner.session import StepSession
from drasim.runner.world import World, open_world
from drasim.scenario.registry import Step

RULE_BITS = 5
"""0..31, modulo the 20 rules."""
ARG_BITS = 4
"""0..15: pods, claims and options are picked modulo their count."""


class _TimeUp(BaseException):
    """Raised between examples when the time limit is spent; hypothesis lets BaseExceptions through."""


@dataclass(frozen=True)
class ExploreConfig:
    """How to explore."""

    max_examples: int = 100
    time_limit: float | None = None
    """Real seconds for the whole exploration (generation and shrinking); ``None``: unbounded."""
    seed: int = 0
    steps: int = 20
    """The most generated steps per example (settle steps come on top)."""
    bugs: tuple[str, ...] = ()
    """Fake-plugin bugs to switch on (RunOptions.bugs)."""


@dataclass
class Trace:
    """One example as it ran: the choices, the executed steps, and the violation if any."""

    choices: list[Choice]
    records: list[StepRecord] = field(default_factory=list)
    violation: Violation | None = None
    settle_from: int | None = None
    """Index of the first settle step in ``records`` (``None``: the run did not get there)."""
    marks: list[int] = field(default_factory=list)
    """The journal's sequence number when each step started (events of step i have seq > marks[i]);
    the step session's own list while the example runs."""


@dataclass
class ExploreOutcome:
    """What :func:`explore` found."""

    examples: int = 0
    """Examples that really ran (generation and shrinking; the final replay not counted)."""
    shrink_examples: int = 0
    """Of those, examples run after the first violation (shrinking)."""
    steps: int = 0
    """Steps executed over all examples."""
    failed_operations: int = 0
    """Kubelet operations that failed legitimately (injected faults, stopped plugin...)."""
    duration: float = 0.0
    timed_out: bool = False
    flaky: bool = False
    """The violation did not show again on hypothesis' replay (timing-dependent)."""
    failure: Trace | None = None
    """The shrunk failing example, if an invariant broke."""
    example_choices: list[list[Choice]] = field(default_factory=list)
    """The choices of every example in the order they ran (for determinism checks)."""


def run_choices(  # noqa: C901 - one example: generation, execution and the oracle share its state
    choices: list[Choice],
    options: RunOptions,
    *,
    trace: Trace | None = None,
    on_step: Callable[[StepRecord], None] | None = None,
) -> Trace:
    """Run one example in a fresh world, filling ``trace``; raises at the first violation."""
    trace = trace if trace is not None else Trace(choices=list(choices))
    try:
        world = open_world(base_scenario(), options)
    except Exception as err:
        raise _explorer_error(trace, err) from err
    session = StepSession(world)
    trace.marks = session.step_marks
    try:
        world.setup()
        gen = StepGenerator(world)
        oracle = Oracle()

        def execute(step: Step) -> None:
            index = len(trace.records)
            oracle.before_step(world, step.name)
            record = run_step(session, step)
            _settle_plugin(world)
            trace.records.append(record)
            if on_step is not None:
                on_step(record)
            found = oracle.after_step(world, index)
            if found:
                trace.violation = found[0]
                raise violation_error(found[0])

        def execute_all(steps: list[Step]) -> None:
            for step in steps:
                execute(step)
                execute_all(gen.follow_up(step))

        for choice in choices:
            execute_all([gen.step_for(choice)])
        trace.settle_from = len(trace.records)
        while pending := gen.settle():
            execute_all(pending)
        for step in gen.final_steps():
            execute(step)
        found = oracle.final(world)
        if found:
            trace.violation = found[0]
            raise violation_error(found[0])
    except InvariantViolation:
        raise
    except Exception as err:
        raise _explorer_error(trace, err) from err
    finally:
        world.teardown()
    return trace


def _explorer_error(trace: Trace, err: Exception) -> InvariantViolation:
    """An ``explorer-error`` violation (recorded on ``trace``): the explorer itself broke."""
    last = trace.records[-1].text if trace.records else "setup"
    violation = Violation(
        "explorer-error",
        f"{type(err).__name__}: {err}",
        {"after": last},
        len(trace.records) - 1 if trace.records else None,
    )
    trace.violation = violation
    return violation_error(violation)


def _settle_plugin(world: World) -> None:
    """A plugin that crashed mid-call (fault ``crash``) dies on another thread: let the kubelet see it."""
    handle = world.fleet.driver()
    if not isinstance(handle, FakeDriverHandle):
        return
    driver = handle.driver
    if driver.crashed.is_set():
        driver.stopped.wait(10)
        if world.kubelet is not None:
            world.kubelet.sync_registrations(15.0)


def _from_bits(bits: tuple[bool, ...]) -> int:
    return sum(1 << i for i, bit in enumerate(reversed(bits)) if bit)


def choices_strategy(steps: int) -> st.SearchStrategy[list[Choice]]:
    """Lists of (rule, a, b, c), at most ``steps`` long; the shape never depends on the system under test.

    Every number is built from booleans (used modulo the candidates). Booleans,
    unlike integer draws, are never replaced by hypothesis with "interesting" constants
    it collects from the modules imported so far, so the same seed gives the same
    sequence whatever else the process imported. The list is drawn in chunks so that
    sequences are longer on average than a flat list (about 15 instead of 6), while
    shrinking can still delete single choices.
    """
    rule = st.tuples(*[st.booleans()] * RULE_BITS).map(_from_bits)
    arg = st.tuples(*[st.booleans()] * ARG_BITS).map(_from_bits)
    one = st.tuples(rule, arg, arg, arg)
    chunks = st.lists(st.lists(one, min_size=1, max_size=5), min_size=1, max_size=max(1, steps))
    return chunks.map(lambda parts: [c for part in parts for c in part][: max(1, steps)])


def explore(  # noqa: C901 - hypothesis' settings, the time limit and shrinking in one driver
    config: ExploreConfig,
    *,
    on_example: Callable[[Trace], None] | None = None,
    on_progress: Callable[[ExploreOutcome, float], None] | None = None,
) -> ExploreOutcome:
    """Explore; deterministic for a given config (the time limit aside).

    ``on_example`` gets the trace of every example that held; ``on_progress`` gets the
    outcome so far and the seconds elapsed after every example, passed or failed
    (``outcome.shrink_examples`` grows once a violation was found and is being shrunk).
    """
    options = RunOptions(bugs=tuple(config.bugs))
    outcome = ExploreOutcome()
    started = time.monotonic()
    deadline = None if config.time_limit is None else started + config.time_limit
    holder: dict[str, Trace] = {}

    @settings(
        max_examples=config.max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
    )
    @seed(config.seed)
    @given(choices_strategy(config.steps))
    def example(choices: list[Choice]) -> None:
        final = current_build_context().is_final
        if not final and deadline is not None and time.monotonic() > deadline:
            raise _TimeUp
        if not final:
            outcome.examples += 1
            outcome.shrink_examples += "failed" in holder
            outcome.example_choices.append(list(choices))

        def count(record: StepRecord) -> None:
            if not final:
                outcome.steps += 1
                outcome.failed_operations += record.error is not None

        trace = Trace(choices=list(choices))
        holder["last"] = trace
        try:
            run_choices(choices, options, trace=trace, on_step=count)
        except InvariantViolation:
            holder["failed"] = trace
            raise
        finally:
            if on_progress is not None and not final:
                on_progress(outcome, time.monotonic() - started)
        if on_example is not None and not final:
            on_example(trace)

    try:
        example()
    except InvariantViolation as err:
        outcome.failure = holder.get("last") or Trace(choices=[], violation=err.violation)
    except _TimeUp:
        # Stopped between examples; while shrinking, the last failing run is the best one so far.
        outcome.timed_out = True
        outcome.failure = holder.get("failed")
    except Flaky:
        # The violation did not show again when hypothesis replayed it: report the last run that
        # showed it (a timing-dependent failure; its reproducer may not fail every time).
        outcome.failure = holder.get("failed")
        outcome.flaky = True
    outcome.duration = time.monotonic() - started
    return outcome
