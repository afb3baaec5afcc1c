"""Time scaling in one place: how nominal kubelet seconds become real waits.

A scenario's ``spec.kubelet.timeScale`` (default :data:`DEFAULT_TIME_SCALE`) says how many
real seconds one nominal kubelet second takes; ``--time-scale`` (``drasim run``) or
``drasim_time_scale`` (pytest) overrides it for every scenario. The runner's world, the CLI's
report and the pytest plugin's report all ask this module, so the scale a report records is
the one the scenarios really ran at.

PURE: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["DEFAULT_TIME_SCALE", "effective_time_scale", "reported_time_scale"]

DEFAULT_TIME_SCALE = 0.01
"""A scenario's time scale when it gives none: 100 nominal seconds take one real second."""


def effective_time_scale(scenario_scale: float, override: float | None) -> float:
    """The scale one scenario runs at: the run's override, else the scenario's own."""
    return float(override if override is not None else scenario_scale)


def reported_time_scale(scenario_scales: Iterable[float], override: float | None) -> float:
    """The scale a run report records for a set of scenarios.

    The override when there is one; else the scenarios' common scale; when they differ, the
    largest (the slowest: the one that bounds how long the run's timers took); with no
    scenario, :data:`DEFAULT_TIME_SCALE`.
    """
    if override is not None:
        return float(override)
    scales = [float(s) for s in scenario_scales]
    return max(scales) if scales else DEFAULT_TIME_SCALE
