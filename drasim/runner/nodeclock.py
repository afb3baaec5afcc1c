"""The node's clocks: the real-time clock components get, and the scenario's nominal clock.

Time has two faces. Real time is where gRPC deadlines and fault delays elapse (kubelet
durations multiplied by the plan's time scale): :attr:`NodeClock.real` is the clock handed to
the kubelet and the plugin host. The scenario's nominal clock (:attr:`NodeClock.now`) moves only
with ``advanceClock`` and downtimes and drives the kubelet's periodic work: reconcile passes
(:attr:`NodeClock.next_reconcile`), pod worker retries, slice wipes, registration retries.
This part never imports the world.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from drasim.clock import ScaledClock
from drasim.errors import ConfigError, DrasimError
from drasim.limits import MAX_TIMER_RUNS
from drasim.scenario.schema import Timers

__all__ = ["NodeClock"]


@dataclass
class NodeClock:
    """Nominal time (now, the next reconcile pass, how many timers fired) and the real clock."""

    scale: float
    """Real seconds per nominal second of the kubelet's timers (the plan's ``timer_scale``: never 0)."""
    aborted: threading.Event
    """Set when the run is stopped from outside (time limit): timers stop firing."""
    real: ScaledClock = field(init=False)
    """The clock handed to components (real time, scaled timers)."""
    now: float = 0.0
    next_reconcile: float | None = None
    """When the running kubelet's next reconcile pass is due (None: no kubelet runs)."""
    timer_runs: int = 0
    """Reconcile passes and pod-worker retries the nominal clock has fired so far."""

    def __post_init__(self) -> None:
        self.real = ScaledClock(self.scale)

    def kubelet_started(self, reconcile_period: float) -> None:
        """A kubelet started now: its first reconcile pass is one period away."""
        self.next_reconcile = self.now + float(reconcile_period)

    def kubelet_stopped(self) -> None:
        """No kubelet: no reconcile pass is due."""
        self.next_reconcile = None

    def count_timer_run(self, timers: Timers) -> None:
        """One more reconcile pass or pod retry fired; a run gets :data:`MAX_TIMER_RUNS`."""
        if self.aborted.is_set():
            msg = "the run was stopped (its time limit passed)"
            raise DrasimError(msg)
        self.timer_runs += 1
        if self.timer_runs > MAX_TIMER_RUNS:
            msg = (
                f"the nominal clock fired more than {MAX_TIMER_RUNS} reconcile passes and pod retries in "
                f"this scenario (reconcile passes every {timers.reconcile_period:g}s, pod retries after "
                f"{timers.backoff_period:g}s / {timers.resync_interval:g}s): advance the clock less or use "
                "longer timer periods"
            )
            raise ConfigError(msg)
