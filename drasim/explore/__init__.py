"""Generated-scenario exploration (``drasim explore``): random valid step sequences, invariants, reproducers.

Public API::

    explore(ExploreConfig(...)) -> ExploreOutcome
    run_choices(choices, RunOptions(...)) -> Trace
    write_reproducer(trace, out_dir, config) -> Path
"""

from __future__ import annotations

from drasim.explore.engine import ExploreConfig, ExploreOutcome, Trace, explore, run_choices
from drasim.explore.violations import INVARIANTS, InvariantViolation, Violation

__all__ = [
    "INVARIANTS",
    "ExploreConfig",
    "ExploreOutcome",
    "InvariantViolation",
    "Trace",
    "Violation",
    "explore",
    "run_choices",
]
