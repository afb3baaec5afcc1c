"""Run scenarios: set up a world per scenario, drive its steps, turn the outcome into results.

Public API::

    run_scenario(scenario, options=None) -> ScenarioResult
    run_scenarios(scenarios, options=None, *, jobs=1, fail_fast=False, reporter=None) -> RunReport

A failing step stops its scenario; teardown always runs (drivers stopped, sockets
and directories removed), even when a driver crashed or drasim itself hit a bug.
"""

from __future__ import annotations

import dataclasses
import shlex
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from drasim.errors import DrasimError
from drasim.report.model import FailureInfo, RunEnvironment, RunReport, ScenarioResult
from drasim.runner.actions import run_action
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.drivers import ProcessDriverHandle
from drasim.runner.world import RunOptions, SimulatedCrash, World
from drasim.scenario.limits import DEFAULT_SCENARIO_TIMEOUT
from drasim.scenario.registry import Step
from drasim.scenario.schema import Scenario
from drasim.scenario.typeinfo import camel

ABORT_GRACE = 10.0
"""Real seconds a timed-out run's step gets to return once its node was stopped."""


class Reporter(Protocol):
    """Receives progress while scenarios run (e.g. :class:`drasim.report.terminal.TerminalReporter`)."""

    def scenario_started(self, name: str, location: str = "") -> None:
        """A scenario begins."""
        ...

    def scenario_finished(self, result: ScenarioResult) -> None:
        """A scenario ended."""
        ...


def _compact(value: Any) -> Any:
    """Dataclass → dict of the fields that differ from their defaults, keyed as in YAML (for step texts)."""
    if isinstance(value, Step):  # a nested step (``during``, ``parallel``): as it is written
        return {value.name: _compact(value.args)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            default = f.default
            if default is dataclasses.MISSING and f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            if item == default and default is not dataclasses.MISSING:
                continue
            out[f.metadata.get("yaml") or camel(f.name)] = _compact(item)  # the key the YAML uses
        return out
    if isinstance(value, list | tuple):
        return [_compact(v) for v in value]
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items()}
    return value


def _flow(value: Any) -> str:
    """``value`` in YAML flow style, the way scenario files write steps."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def describe_step(step: Step) -> str:
    """One line: ``startPod {name: a, claims: [gpu]}``."""
    args = _compact(step.args)
    if isinstance(args, dict):
        return f"{step.name} {_flow(args)}" if args else step.name
    return f"{step.name} {{{_flow(args)}}}" if args not in (None, "") else step.name


def reproduce_command(scenario: Scenario, options: RunOptions) -> str:
    """A command line that runs just this scenario again, with every option that changes its outcome.

    That is the driver (``--driver-cmd``, ``--driver-name``, ``--capability``), the fake
    plugin's injected bugs, ``--fsync`` and ``--time-scale``. Where files go
    (``--workspace-dir``, ``--keep-workspace``) and how many run at once do not change it.
    """
    words = ["drasim", "run", scenario.file or "<file>", "-k", scenario.name]
    if options.driver_cmd:
        words += ["--driver-cmd", options.driver_cmd]
        if options.driver_name:
            words += ["--driver-name", options.driver_name]
        for capability in options.capabilities:
            words += ["--capability", capability]
    for bug in options.bugs:
        words += ["--inject-bug", bug]
    if options.fsync:
        words.append("--fsync")
    if options.time_scale is not None:
        words += ["--time-scale", repr(options.time_scale)]
    if options.kubelet_version:
        words += ["--kubelet-version", options.kubelet_version]
    if options.scenario_timeout != DEFAULT_SCENARIO_TIMEOUT:
        words += ["--scenario-timeout", f"{options.scenario_timeout or 0:g}"]
    return shlex.join(words)


def _failure(
    world: World | None,
    message: str,
    *,
    index: int | None,
    step: Step | None,
    options: RunOptions,
    scenario: Scenario,
    expected: Any = None,
    actual: Any = None,
    similar: list[dict[str, Any]] | None = None,
) -> FailureInfo:
    text = describe_step(step) if step is not None else ""
    if step is not None and step.file:
        text = f"{text}  ({step.location})"
    tail = world.journal.tail(15) if world is not None and hasattr(world, "journal") else []
    return FailureInfo.build(
        message,
        # Step numbers count from 1 everywhere: terminal, reports and the journal's step events.
        step_index=None if index is None else index + 1,
        step_text=text,
        expected=expected,
        actual=actual,
        similar_events=similar,
        journal_tail=tail,
        reproduce=reproduce_command(scenario, options),
    )


def _skipped(result: ScenarioResult, scenario: Scenario, options: RunOptions) -> bool:
    """Name the result after its kubelet version; mark it skipped (True) when it must not run."""
    from drasim.runner.versions import matrix_name, resolve_version

    result.kubelet_version, reason = resolve_version(scenario, options)
    if options.kubelet_version:
        result.name = matrix_name(scenario.name, result.kubelet_version)
    if not reason and options.driver_cmd:
        from drasim.conformance import real_driver_skip_reason

        reason = real_driver_skip_reason(scenario, options.capabilities)
    if reason:
        result.status, result.skip_reason = "skipped", reason
    return bool(reason)


@dataclass
class _Progress:
    """Where a run is, for the report when its time limit stops it."""

    index: int | None = None
    step: Step | None = None


def run_scenario(scenario: Scenario, options: RunOptions | None = None) -> ScenarioResult:
    """Run one scenario in a fresh world; never raises for scenario or driver problems.

    With ``options.scenario_timeout`` the set-up and the steps run in a worker thread; when
    the limit passes, the world is aborted (waits end, kubelet and drivers stop, nothing new
    starts) and the result is a failure naming the step that was running. Teardown always
    runs, so driver processes are stopped and the workspace is removed either way.
    """
    options = options or RunOptions()
    started = time.monotonic()
    result = ScenarioResult.of(scenario, "passed")
    if _skipped(result, scenario, options):
        return result
    world = World(scenario, options)
    progress = _Progress()
    try:
        if options.scenario_timeout is None:
            _drive(world, scenario, options, result, progress)
        else:
            named = result
            result = _drive_with_limit(world, scenario, options, progress, options.scenario_timeout)
            result.name, result.kubelet_version = named.name, named.kubelet_version
    finally:
        _finish(world, result)
        result.duration = time.monotonic() - started
    return result


def _drive_with_limit(
    world: World, scenario: Scenario, options: RunOptions, progress: _Progress, limit: float
) -> ScenarioResult:
    """:func:`_drive` in a worker thread; abort the world if it outlasts ``limit`` real seconds."""
    attempt = ScenarioResult.of(scenario, "passed")
    worker = threading.Thread(
        target=_drive,
        args=(world, scenario, options, attempt, progress),
        name=f"drasim-scenario-{scenario.name}",
        daemon=True,
    )
    worker.start()
    try:
        worker.join(limit)
    except BaseException:  # Ctrl-C: stop the node before leaving
        world.abort()
        worker.join(ABORT_GRACE)
        raise
    if not worker.is_alive():
        return attempt
    index, step = progress.index, progress.step
    world.abort()
    worker.join(ABORT_GRACE)
    where = (
        f"during step {index + 1} ({step.name})"
        if index is not None and step is not None
        else "while setting up the node (drivers, kubelet, objects)"
    )
    message = (
        f"the scenario did not finish within its time limit of {limit:g}s (--scenario-timeout); "
        f"it was stopped {where}"
    )
    if worker.is_alive():
        message += f" (that step still had not returned {ABORT_GRACE:g}s after the node was stopped)"
    result = ScenarioResult.of(scenario, "failed")
    result.failure = _failure(world, message, index=index, step=step, options=options, scenario=scenario)
    return result


def _drive(
    world: World, scenario: Scenario, options: RunOptions, result: ScenarioResult, progress: _Progress
) -> None:
    """Set the world up and run the steps, recording the outcome in ``result``; never raises."""
    from drasim.runner.checks import run_check

    step: Step | None = None
    index: int | None = None
    try:
        try:
            world.setup()
        except DrasimError as err:
            if world.aborted.is_set():
                return
            result.status = "error"
            result.failure = _failure(
                world,
                f"setting up the node failed: {err}",
                index=None,
                step=None,
                options=options,
                scenario=scenario,
            )
            return
        marks: dict[str, int] = {}
        step_marks: list[int] = []
        step_names: list[str] = []
        for index, step in enumerate(scenario.spec.steps):
            if world.aborted.is_set():
                return
            progress.index, progress.step = index, step
            ctx = StepContext(index, step.name, step_marks, step_names, marks)
            step_marks.append(world.journal.mark())
            step_names.append(step.name)
            world.journal.record("step", index=index + 1, name=step.name, text=describe_step(step))
            if step.kind == "expectation":
                run_check(world, step.args, ctx)
            else:
                run_action(world, step.name, step.args, ctx)
    except StepFailure as failure:
        result.status = "failed"
        result.failure = _failure(
            world,
            failure.message,
            index=index,
            step=step,
            options=options,
            scenario=scenario,
            expected=failure.expected,
            actual=failure.actual,
            similar=failure.similar,
        )
    except SimulatedCrash as crash:
        result.status = "failed"
        result.failure = _failure(
            world,
            f"the kubelet crashed outside restartKubelet: {crash}",
            index=index,
            step=step,
            options=options,
            scenario=scenario,
        )
    except DrasimError as err:
        result.status = "error"
        result.failure = _failure(world, str(err), index=index, step=step, options=options, scenario=scenario)
    except Exception as err:
        result.status = "error"
        detail = "".join(traceback.format_exception_only(type(err), err)).strip()
        result.failure = _failure(
            world,
            f"internal error in drasim (please report it): {detail}",
            index=index,
            step=step,
            options=options,
            scenario=scenario,
            actual=traceback.format_exc(limit=8),
        )


def _finish(world: World, result: ScenarioResult) -> None:
    try:
        # Driver processes end first, so the report holds everything they wrote.
        world.shut_down()
        stdout, stderr = [], []
        for handle in world.drivers.values():
            if isinstance(handle, ProcessDriverHandle):
                out, err = handle.output()
                stdout.append(out)
                stderr.append(err)
        result.stdout = "".join(stdout)
        result.stderr = "".join(stderr)
        if world.options.keep_workspace and hasattr(world, "workspace"):
            result.artifacts["workspace"] = str(world.workspace.root)
    finally:
        world.teardown()
        if hasattr(world, "journal"):
            result.journal = world.journal.events()


def run_scenarios(
    scenarios: Sequence[Scenario],
    options: RunOptions | None = None,
    *,
    jobs: int = 1,
    fail_fast: bool = False,
    reporter: Reporter | None = None,
    environment: RunEnvironment | None = None,
) -> RunReport:
    """Run many scenarios (``jobs`` at a time); results keep the input order."""
    from drasim.runner.versions import matrix, matrix_name

    options = options or RunOptions()
    started = time.monotonic()
    runs = matrix(list(scenarios), options)
    results: list[ScenarioResult | None] = [None] * len(runs)
    stop = threading.Event()
    lock = threading.Lock()

    def one(i: int) -> None:
        scenario, run_options = runs[i]
        version = run_options.kubelet_version
        name = matrix_name(scenario.name, version) if version else scenario.name
        if stop.is_set():
            results[i] = ScenarioResult.of(
                scenario, "skipped", skip_reason="--fail-fast: an earlier scenario failed"
            )
            results[i].name = name  # type: ignore[union-attr]
        else:
            if reporter is not None:
                with lock:
                    reporter.scenario_started(name, f"{scenario.file}:{scenario.line}")
            results[i] = run_scenario(scenario, run_options)
            if fail_fast and results[i] is not None and results[i].status in ("failed", "error"):  # type: ignore[union-attr]
                stop.set()
        if reporter is not None:
            with lock:
                reporter.scenario_finished(results[i])  # type: ignore[arg-type]

    run: Callable[[int], None] = one
    if jobs <= 1:
        for i in range(len(runs)):
            run(i)
    else:
        pool = ThreadPoolExecutor(max_workers=jobs)
        try:
            list(pool.map(run, range(len(runs))))
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): start nothing new and do not wait for the
            # scenarios still running; the caller reaps their drivers and workspaces.
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    report = RunReport(
        results=[r for r in results if r is not None], environment=environment or RunEnvironment()
    )
    report.duration = time.monotonic() - started
    return report
