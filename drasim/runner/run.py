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
from drasim.runner.backend_choice import backend_skip_reason
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.drivers import ProcessDriverHandle
from drasim.runner.world import RunOptions, SimulatedCrash, World
from drasim.scenario.limits import DEFAULT_SCENARIO_TIMEOUT
from drasim.scenario.registry import Step
from drasim.scenario.schema import Scenario
from drasim.scenario.typeinfo import camel

ABORT_GRACE = 10.0
"""Real seconds a timed-out run's step gets to return once its node was stopped."""
INTERRUPTED = "interrupted (Ctrl-C or SIGTERM): the scenario stopped and its node was torn down"


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
    if options.backend:
        words += ["--backend", options.backend]
    if options.kubeconfig is not None:
        words += ["--kubeconfig", str(options.kubeconfig)]
    if options.context is not None:
        words += ["--context", options.context]
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
    if not reason:
        reason = backend_skip_reason(scenario, options.backend, result.kubelet_version or "")
    if reason:
        result.status, result.skip_reason = "skipped", reason
    return bool(reason)


@dataclass
class _Progress:
    """Where a run is, for the report when its time limit stops it."""

    index: int | None = None
    step: Step | None = None


class Interruption:
    """Ctrl-C (or SIGTERM) of a run whose scenarios work in other threads.

    :meth:`interrupt` (from the main thread, which alone receives signals) aborts the world of
    every running scenario (waits end, kubelet and drivers stop, so a step blocked in an RPC
    returns at once); each scenario then reports itself interrupted and tears down as usual
    (driver processes ended, a real cluster's namespaces deleted). Scenarios not yet started
    are skipped.
    """

    def __init__(self) -> None:
        self.event = threading.Event()
        self._lock = threading.Lock()
        self._worlds: dict[int, World] = {}

    def is_set(self) -> bool:
        """Whether the run was interrupted."""
        return self.event.is_set()

    def attach(self, world: World) -> None:
        """A scenario's world exists (it is aborted on interruption)."""
        with self._lock:
            self._worlds[id(world)] = world
        if self.event.is_set():
            world.abort()

    def detach(self, world: World) -> None:
        """The scenario finished."""
        with self._lock:
            self._worlds.pop(id(world), None)

    def interrupt(self) -> None:
        """Mark the run interrupted and abort every running scenario (never raises)."""
        self.event.set()
        with self._lock:
            worlds = list(self._worlds.values())
        for world in worlds:
            world.abort()


def run_scenario(
    scenario: Scenario, options: RunOptions | None = None, *, interruption: Interruption | None = None
) -> ScenarioResult:
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
    if interruption is not None:
        interruption.attach(world)
    try:
        if options.scenario_timeout is None:
            _drive(world, scenario, options, result, progress)
        else:
            named = result
            result = _drive_with_limit(world, scenario, options, progress, options.scenario_timeout)
            result.name, result.kubelet_version = named.name, named.kubelet_version
    finally:
        if interruption is not None:
            interruption.detach(world)
            if interruption.is_set():
                result.status = "error"
                result.failure = _failure(
                    world,
                    INTERRUPTED,
                    index=progress.index,
                    step=progress.step,
                    options=options,
                    scenario=scenario,
                )
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
    from drasim.runner.expectations import run_check

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
    interruption = Interruption()

    def one(i: int) -> None:
        scenario, run_options = runs[i]
        version = run_options.kubelet_version
        name = matrix_name(scenario.name, version) if version else scenario.name
        if interruption.is_set():
            results[i] = ScenarioResult.of(
                scenario, "skipped", skip_reason="not run: the run was interrupted"
            )
            results[i].name = name  # type: ignore[union-attr]
        elif stop.is_set():
            results[i] = ScenarioResult.of(
                scenario, "skipped", skip_reason="--fail-fast: an earlier scenario failed"
            )
            results[i].name = name  # type: ignore[union-attr]
        else:
            if reporter is not None:
                with lock:
                    reporter.scenario_started(name, f"{scenario.file}:{scenario.line}")
            results[i] = run_scenario(scenario, run_options, interruption=interruption)
            if fail_fast and results[i] is not None and results[i].status in ("failed", "error"):  # type: ignore[union-attr]
                stop.set()
        if reporter is not None:
            with lock:
                reporter.scenario_finished(results[i])  # type: ignore[arg-type]

    run: Callable[[int], None] = one
    # Scenarios work in threads and the main thread waits, so Ctrl-C reaches it at once even
    # while a step is blocked in an RPC (see Interruption).
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="drasim-scenario")
    try:
        futures = [pool.submit(run, i) for i in range(len(runs))]
        for future in futures:
            future.result()
    except KeyboardInterrupt:
        interruption.interrupt()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    report = RunReport(
        results=[r for r in results if r is not None], environment=environment or RunEnvironment()
    )
    report.duration = time.monotonic() - started
    return report
