"""Running scenario steps on a world, the one way the runner, the pytest plugin and explore do it.

:class:`StepSession` runs one step at a time on a :class:`~drasim.runner.world.World`:
it journals the step's start (``step``) and end (``step-end``, with its outcome), builds
the :class:`~drasim.runner.context.StepContext` the handler gets (the windows ``since``
and ``mark`` use), dispatches to the step's action or expectation, and remembers which
step is running. :meth:`StepSession.within` runs work under a real-time limit, aborting
the world when it passes; :class:`Interruption` aborts the worlds of a run on Ctrl-C.

Public API::

    StepSession(world).run(step)            # raises StepFailure, DrasimError, ...
    StepSession(world).within(limit, work)  # -> TimedOut | None
    describe_step(step) -> str
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from drasim.errors import DrasimError
from drasim.journal.kinds import STEP, STEP_END
from drasim.runner.actions import run_action
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.expectations import run_check
from drasim.runner.world import SimulatedCrash, World
from drasim.scenario.registry import Step
from drasim.scenario.typeinfo import camel

ABORT_GRACE = 10.0
"""Real seconds a timed-out run's step gets to return once its node was stopped."""


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


@dataclass(frozen=True)
class TimedOut:
    """Work that outlasted its time limit: the world was aborted."""

    limit: float
    index: int | None
    """The step running when the limit passed (0-based); ``None``: the node was being set up."""
    step: Step | None
    still_running: bool
    """The step had not returned :data:`ABORT_GRACE` seconds after the world was aborted."""

    @property
    def message(self) -> str:
        """The failure message, naming where the run was stopped."""
        where = (
            f"during step {self.index + 1} ({self.step.name})"
            if self.index is not None and self.step is not None
            else "while setting up the node (drivers, kubelet, objects)"
        )
        text = (
            f"the scenario did not finish within its time limit of {self.limit:g}s (--scenario-timeout); "
            f"it was stopped {where}"
        )
        if self.still_running:
            text += f" (that step still had not returned {ABORT_GRACE:g}s after the node was stopped)"
        return text


@dataclass
class StepSession:
    """The steps run so far on one world, and the one way to run the next.

    Step numbers count from 1 in the journal (and everywhere a person reads them);
    ``index`` is 0-based in code.
    """

    world: World
    marks: dict[str, int] = field(default_factory=dict)
    """``mark`` step names → the journal sequence number where they were set."""
    step_marks: list[int] = field(default_factory=list)
    """The journal sequence number when step ``i`` started (its events have a higher one)."""
    step_names: list[str] = field(default_factory=list)
    index: int | None = None
    """The step running (or that ran last), 0-based; ``None`` before the first."""
    step: Step | None = None
    _last_checkpoint: str | None = field(default=None, repr=False)

    def context(self, step: Step) -> StepContext:
        """The context of the next step (its index and the journal windows it may use)."""
        return StepContext(len(self.step_names), step.name, self.step_marks, self.step_names, self.marks)

    def run(self, step: Step) -> None:
        """Run ``step``: journal ``step``, run its action or expectation, journal ``step-end``.

        Raises what the step raised (:class:`StepFailure` when it did not hold); ``step-end``
        says ``passed``, ``failed`` (a StepFailure or a simulated kubelet crash) or ``error``.
        """
        journal = self.world.journal
        ctx = self.context(step)
        self.index, self.step = ctx.index, step
        self.step_marks.append(journal.mark())
        self.step_names.append(step.name)
        number = ctx.index + 1
        journal.record(STEP, index=number, name=step.name, text=describe_step(step))
        outcome, error = "error", ""
        try:
            if step.kind == "expectation":
                run_check(self.world, step.args, ctx)
            else:
                run_action(self.world, step.name, step.args, ctx)
            outcome = "passed"
        except StepFailure as failure:
            outcome, error = "failed", failure.message
            raise
        except SimulatedCrash as crash:
            outcome, error = "failed", str(crash)
            raise
        except BaseException as err:
            error = str(err) or type(err).__name__
            raise
        finally:
            if self.world.plan.options.record_checkpoint_bytes:
                self._record_checkpoint_bytes()
                self._record_metrics()
            journal.record(STEP_END, index=number, name=step.name, outcome=outcome, error=error or None)

    def _record_checkpoint_bytes(self) -> None:
        """For ``drasim diff``: the checkpoint file's bytes at the end of a step, when they changed."""
        try:
            data = self.world.workspace.checkpoint_path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            data = None
        if data != self._last_checkpoint:
            self._last_checkpoint = data
            self.world.journal.record("checkpoint-file", bytes=data)

    def _record_metrics(self) -> None:
        """For ``drasim diff``: the kubelet's metrics at the end of a step, as Prometheus text
        (upstream's registry with ``--kubelet upstream``, else drasim's); none while it is down."""
        kubelet: Any = self.world.kubelet
        if kubelet is None:
            return
        try:
            text = kubelet.metrics_text() if self.world.upstream_kubelet else self.world.metrics.to_text()
        except DrasimError as err:
            text = f"# metrics unavailable: {err}"
        self.world.journal.record("metrics-snapshot", text=text)

    def within(self, limit: float | None, work: Callable[[], None]) -> TimedOut | None:
        """Run ``work`` (set-up and steps) with at most ``limit`` real seconds (``None``: no limit).

        With a limit, ``work`` runs in a worker thread; when the limit passes the world is
        aborted (waits end, kubelet and drivers stop, nothing new starts) and the result
        names the step that was running. Ctrl-C while waiting aborts the world too.
        """
        if limit is None:
            work()
            return None
        name = f"drasim-scenario-{self.world.plan.scenario.name}"
        worker = threading.Thread(target=work, name=name, daemon=True)
        worker.start()
        try:
            worker.join(limit)
        except BaseException:  # Ctrl-C: stop the node before leaving
            self.world.abort()
            worker.join(ABORT_GRACE)
            raise
        if not worker.is_alive():
            return None
        index, step = self.index, self.step
        self.world.abort()
        worker.join(ABORT_GRACE)
        return TimedOut(limit, index, step, still_running=worker.is_alive())


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
