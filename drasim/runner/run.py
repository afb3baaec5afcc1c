"""Run scenarios: open a world per scenario, run its steps in a step session, report the outcome.

Public API::

    run_scenario(scenario, options=None, *, results, real_driver_skip=None) -> result
    run_scenarios(scenarios, options=None, *, results, real_driver_skip=None, jobs=1,
                  fail_fast=False, reporter=None) -> [result, ...]

The callers inject what the runner does not own: ``results`` builds the result objects
(the report model's :data:`drasim.report.model.RESULTS`), ``real_driver_skip`` says why a
scenario cannot run against a ``--driver-cmd`` driver
(:func:`drasim.conformance.real_driver_skip_reason`). A failing step stops its scenario;
teardown always runs (drivers stopped, sockets and directories removed), even when a
driver crashed or drasim itself hit a bug.
"""

from __future__ import annotations

import shlex
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from drasim.errors import DrasimError
from drasim.runner.backend_choice import backend_skip_reason
from drasim.runner.context import StepFailure
from drasim.runner.drivers import ProcessDriverHandle
from drasim.runner.kubeletslot import SimulatedCrash, Unsupported
from drasim.runner.options import RunOptions
from drasim.runner.plan import RunPlan, plan_run
from drasim.runner.session import Interruption, StepSession, describe_step
from drasim.runner.versions import matrix, matrix_name
from drasim.runner.world import World, open_world
from drasim.scenario.registry import Step
from drasim.scenario.schema import Scenario

#: How often (real seconds) the main thread, waiting for the scenario threads, lets Python run a
#: pending signal handler: the kernel may deliver SIGINT/SIGTERM to another thread, and Python
#: runs the handler only when the main thread next runs Python code, which a wait without a time
#: limit would put off until the scenarios ended.
SIGNAL_POLL_SECONDS = 0.2

INTERRUPTED = "interrupted (Ctrl-C or SIGTERM): the scenario stopped and its node was torn down"

Status = Literal["passed", "failed", "error", "skipped"]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM ended :func:`run_scenarios`; ``results`` holds what ran (input order),
    the scenarios that never started as skipped, so the caller can still report them."""

    def __init__(self, results: list[Any]) -> None:
        super().__init__()
        self.results = results


class ScenarioRecord(Protocol):
    """What the runner fills in on a result (:class:`drasim.report.model.ScenarioResult` has it)."""

    name: str
    status: Status
    skip_reason: str
    kubelet_version: str
    time_scale: float | None
    failure: Any
    stdout: str
    stderr: str
    artifacts: dict[str, str]
    journal: list[dict[str, Any]]
    duration: float


R = TypeVar("R", bound=ScenarioRecord)
R_co = TypeVar("R_co", bound=ScenarioRecord, covariant=True)
R_contra = TypeVar("R_contra", contravariant=True)


class ResultBuilder(Protocol[R_co]):
    """Builds the results the runner fills in (injected: the runner does not import the report)."""

    def scenario(self, scenario: Scenario, status: Status) -> R_co:
        """A result for ``scenario`` (its name, location, description and tags) with ``status``."""
        ...

    def failure(
        self,
        message: str,
        *,
        step_index: int | None,
        step_text: str,
        expected: Any,
        actual: Any,
        similar_events: list[dict[str, Any]] | None,
        journal_tail: list[dict[str, Any]],
        reproduce: str,
    ) -> Any:
        """Why a scenario failed or errored (a result's ``failure``)."""
        ...


class RealDriverSkip(Protocol):
    """Why a scenario cannot run against the driver under test ('' when it can):
    :func:`drasim.conformance.real_driver_skip_reason`. ``fake``: the driver is the fake plugin."""

    def __call__(self, scenario: Scenario, capabilities: tuple[str, ...], *, fake: bool = False) -> str: ...


class Reporter(Protocol[R_contra]):
    """Receives progress while scenarios run (e.g. :class:`drasim.report.terminal.TerminalReporter`)."""

    def scenario_started(self, name: str, location: str = "") -> None:
        """A scenario begins."""
        ...

    def scenario_finished(self, result: R_contra) -> None:
        """A scenario ended."""
        ...


def reproduce_command(scenario: Scenario, options: RunOptions) -> str:
    """A command line that runs just this scenario again, with every option that changes its outcome.

    That is the driver (``--driver-cmd``, ``--driver-name``, ``--capability``), the fake
    plugin's injected bugs, ``--fsync`` and ``--time-scale``. Where files go
    (``--workspace-dir``, ``--keep-workspace``) and how many run at once do not change it.
    """
    words = ["drasim", "run", scenario.file or "<file>", "-k", scenario.name]
    default = RunOptions()
    if options.driver_cmd:
        words += ["--driver-cmd", options.driver_cmd]
        if options.driver_name:
            words += ["--driver-name", options.driver_name]
        for capability in options.capabilities:
            words += ["--capability", capability]
        if not options.proxy:
            words.append("--no-proxy")
    for bug in options.bugs:
        words += ["--inject-bug", bug]
    if options.fsync:
        words.append("--fsync")
    timeout = options.scenario_timeout
    single: list[tuple[str, str | None]] = [
        ("--time-scale", None if options.time_scale is None else repr(options.time_scale)),
        ("--kubelet-version", options.kubelet_version),
        ("--scenario-timeout", None if timeout == default.scenario_timeout else f"{timeout or 0:g}"),
        ("--backend", options.backend),
        ("--kubeconfig", None if options.kubeconfig is None else str(options.kubeconfig)),
        ("--context", options.context),
        ("--kubelet", None if options.kubelet == default.kubelet else options.kubelet),
    ]
    words += [word for flag, value in single if value is not None and value != "" for word in (flag, value)]
    return shlex.join(words)


@dataclass
class _Ending:
    """How a scenario that did not pass ended: the status and the facts of its failure."""

    status: Status
    message: str
    index: int | None = None
    """The step (0-based) it ended on; ``None``: while setting up the node."""
    step: Step | None = None
    expected: Any = None
    actual: Any = None
    similar: list[dict[str, Any]] | None = None


def _end(
    result: ScenarioRecord,
    ending: _Ending,
    results: ResultBuilder[ScenarioRecord],
    world: World | None,
    plan: RunPlan,
) -> None:
    """Record ``ending`` on ``result`` (status and failure; a skip's reason)."""
    step = ending.step
    if ending.status == "skipped":
        result.status, result.skip_reason = "skipped", ending.message
        return
    text = describe_step(step) if step is not None else ""
    if step is not None and step.file:
        text = f"{text}  ({step.location})"
    result.status = ending.status
    result.failure = results.failure(
        ending.message,
        # Step numbers count from 1 everywhere: terminal, reports and the journal's step events.
        step_index=None if ending.index is None else ending.index + 1,
        step_text=text,
        expected=ending.expected,
        actual=ending.actual,
        similar_events=ending.similar,
        journal_tail=world.journal.tail(15) if world is not None else [],
        reproduce=reproduce_command(plan.scenario, plan.options),
    )


def _ending(err: Exception, index: int | None, step: Step | None) -> _Ending:
    """How an exception out of the set-up or a step ends the scenario."""
    if isinstance(err, StepFailure):
        return _Ending("failed", err.message, index, step, err.expected, err.actual, err.similar)
    if isinstance(err, Unsupported):
        return _Ending("skipped", str(err), index, step)
    if isinstance(err, SimulatedCrash):
        return _Ending("failed", f"the kubelet crashed outside restartKubelet: {err}", index, step)
    if isinstance(err, DrasimError):
        return _Ending("error", str(err), index, step)
    detail = "".join(traceback.format_exception_only(type(err), err)).strip()
    return _Ending(
        "error",
        f"internal error in drasim (please report it): {detail}",
        index,
        step,
        actual=traceback.format_exc(limit=8),
    )


def _skip_reason(plan: RunPlan, skip: RealDriverSkip | None) -> str:
    """Why the scenario must not run ('' when it may): its kubelet versions, the real driver, the backend."""
    reason, options = plan.version_skip, plan.options
    if not reason and skip is not None:
        reason = skip(plan.scenario, plan.driver_capabilities, fake=not options.driver_cmd)
    if not reason:
        reason = backend_skip_reason(plan.scenario, options.backend, plan.kubelet_version)
    return reason


def _new_result(results: ResultBuilder[R], plan: RunPlan, status: Status) -> R:
    """A result for the plan's scenario that records its name, kubelet version and time scale."""
    result = results.scenario(plan.scenario, status)
    result.name, result.kubelet_version, result.time_scale = plan.name, plan.kubelet_version, plan.time_scale
    return result


def run_scenario(  # noqa: C901 - set-up, the timed drive, interruption and teardown in one place
    scenario: Scenario,
    options: RunOptions | None = None,
    *,
    results: ResultBuilder[R],
    real_driver_skip: RealDriverSkip | None = None,
    interruption: Interruption | None = None,
    plan: RunPlan | None = None,
) -> R:
    """Run one scenario in a fresh world; never raises for scenario or driver problems.

    With ``options.scenario_timeout`` the set-up and the steps run in a worker thread; when
    the limit passes, the world is aborted (waits end, kubelet and drivers stop, nothing new
    starts) and the result is a failure naming the step that was running. Teardown always
    runs, so driver processes are stopped and the workspace is removed either way.
    ``real_driver_skip`` is asked (with ``options.driver_cmd``) whether the scenario can run
    against the real driver; without it, every scenario runs. ``plan``: the run's plan when the
    caller made it already (else it is made here from ``scenario`` and ``options``).
    """
    plan = plan or plan_run(scenario, options)
    scenario = plan.scenario  # as planned: fake drivers of the kubelet version's era
    started = time.monotonic()
    result = _new_result(results, plan, "passed")
    reason = _skip_reason(plan, real_driver_skip)
    if reason:
        result.status, result.skip_reason = "skipped", reason
        return result
    try:
        world = open_world(scenario, plan=plan)
    except Exception as err:
        failed = _ending(err, None, None)
        if isinstance(err, DrasimError) and not isinstance(err, Unsupported):
            failed.message = f"setting up the node failed: {err}"
        _end(result, failed, results, None, plan)
        result.duration = time.monotonic() - started
        return result
    session = StepSession(world)
    if interruption is not None:
        interruption.attach(world)
    ended: list[_Ending] = []
    ending: _Ending | None = None

    def drive() -> None:
        found = _drive(session, scenario)
        if found is not None:
            ended.append(found)

    try:
        timed_out = session.within(plan.options.scenario_timeout, drive)
        if timed_out is not None:
            ending = _Ending("failed", timed_out.message, timed_out.index, timed_out.step)
        elif ended:
            ending = ended[0]
    finally:
        if interruption is not None:
            interruption.detach(world)
            if interruption.is_set():
                ending = _Ending("error", INTERRUPTED, session.index, session.step)
        if ending is not None:
            _end(result, ending, results, world, plan)
        _finish(world, result)
        result.duration = time.monotonic() - started
    return result


def _drive(session: StepSession, scenario: Scenario) -> _Ending | None:
    """Start the node and run the steps; how it ended when it did not pass (never raises)."""
    world = session.world
    try:
        try:
            world.setup()
        except Unsupported as err:  # the kubelet in the slot cannot run this scenario's node
            return _ending(err, None, None)
        except DrasimError as err:
            if world.aborted.is_set():
                return None
            return _Ending("error", f"setting up the node failed: {err}")
        for step in scenario.spec.steps:
            if world.aborted.is_set():
                return None
            session.run(step)
    except Exception as err:
        return _ending(err, session.index, session.step)
    return None


def _finish(world: World, result: ScenarioRecord) -> None:
    try:
        # Driver processes end first, so the report holds everything they wrote.
        world.shut_down()
        stdout, stderr = [], []
        for handle in world.fleet.drivers.values():
            if isinstance(handle, ProcessDriverHandle):
                out, err = handle.output()
                stdout.append(out)
                stderr.append(err)
        result.stdout = "".join(stdout)
        result.stderr = "".join(stderr)
        if world.plan.options.keep_workspace:
            result.artifacts["workspace"] = str(world.workspace.root)
    finally:
        world.teardown()
        result.journal = world.journal.events()


def _row_name(scenario: Scenario, options: RunOptions) -> str:
    """``name``, or ``name[kubelet-1.34]`` in a version matrix (as the plan names it)."""
    version = options.kubelet_version
    return matrix_name(scenario.name, version) if version else scenario.name


def run_scenarios(  # noqa: C901 - the thread pool, fail-fast and Ctrl-C handling belong together
    scenarios: Sequence[Scenario],
    options: RunOptions | None = None,
    *,
    results: ResultBuilder[R],
    real_driver_skip: RealDriverSkip | None = None,
    jobs: int = 1,
    fail_fast: bool = False,
    reporter: Reporter[R] | None = None,
    shard: tuple[int, int] | None = None,
) -> list[R]:
    """Run many scenarios (``jobs`` at a time; each once per ``options.kubelet_versions``);
    the results keep the input order. ``shard`` ``(K, N)`` runs only the rows of shard K of N
    (:mod:`drasim.runner.shard`)."""
    from drasim.runner.shard import in_shard

    options = options or RunOptions()
    runs = [
        (scenario, run_options)
        for scenario, run_options in matrix(list(scenarios), options)
        if in_shard(_row_name(scenario, run_options), shard)
    ]
    done: list[R | None] = [None] * len(runs)
    stop = threading.Event()
    lock = threading.Lock()
    interruption = Interruption()

    def skipped(plan: RunPlan, reason: str) -> R:
        result = _new_result(results, plan, "skipped")
        result.skip_reason = reason
        return result

    def one(i: int) -> None:
        scenario, run_options = runs[i]
        plan = plan_run(scenario, run_options)
        if interruption.is_set():
            result = skipped(plan, "not run: the run was interrupted")
        elif stop.is_set():
            result = skipped(plan, "--fail-fast: an earlier scenario failed")
        else:
            if reporter is not None:
                with lock:
                    reporter.scenario_started(plan.name, f"{scenario.file}:{scenario.line}")
            result = run_scenario(
                scenario,
                results=results,
                real_driver_skip=real_driver_skip,
                interruption=interruption,
                plan=plan,
            )
            if fail_fast and result.status in ("failed", "error"):
                stop.set()
        done[i] = result
        if reporter is not None:
            with lock:
                reporter.scenario_finished(result)

    # Scenarios work in threads and the main thread waits, so Ctrl-C reaches it at once even
    # while a step is blocked in an RPC (see Interruption). It waits in short slices
    # (SIGNAL_POLL_SECONDS: a signal the kernel gave another thread is handled at the next).
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="drasim-scenario")
    try:
        futures = [pool.submit(one, i) for i in range(len(runs))]
        pending = set(futures)
        while pending:
            ended, pending = wait(pending, timeout=SIGNAL_POLL_SECONDS, return_when=FIRST_EXCEPTION)
            for future in ended:
                future.result()  # a scenario thread's own error (the reporter's closed pipe, say)
    except BaseException:
        # Ctrl-C, or the reporter failing (`drasim run | head` closes the pipe): the scenario
        # running now stops at its next step and cleans up, the others do not start. Nothing
        # is left running for the interpreter's exit to wait on.
        interruption.interrupt()
        pool.shutdown(wait=True, cancel_futures=True)
        if not isinstance(sys.exc_info()[1], KeyboardInterrupt):
            raise
        for i, (scenario, run_options) in enumerate(runs):
            if done[i] is None:
                done[i] = skipped(plan_run(scenario, run_options), "not run: the run was interrupted")
        raise RunInterrupted([r for r in done if r is not None]) from None
    pool.shutdown()
    return [r for r in done if r is not None]
