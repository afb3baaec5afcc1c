"""What a ``drasim run`` report header says the scenarios ran against: the driver and the backend,
from the options and from the scenarios themselves (a pinned ``spec.backend``, a scenario's own
``command`` driver), so the header does not name a backend or driver the run did not use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drasim.runner.options import RunOptions
    from drasim.scenario.schema import Scenario


def driver_and_backend(scenarios: Sequence[Scenario], options: RunOptions) -> tuple[str, str]:
    """``(driver, backend)`` for the header; several backends are listed, comma-separated."""
    if options.driver_cmd:
        driver = options.driver_cmd
    else:
        kinds = {
            "command (scenario)" if d.command is not None else "fake"
            for s in scenarios
            for d in s.spec.all_drivers()
        }
        driver = " + ".join(sorted(kinds, key=lambda k: k != "fake")) or "fake"
    backends = {options.backend or s.spec.backend or _default_backend(s, options) for s in scenarios}
    return driver, ", ".join(sorted(backends)) or (options.backend or "memory")


def _default_backend(scenario: Scenario, options: RunOptions) -> str:
    """A real driver reads the API server over HTTP (``apiServer.mode: auto``), the fake in memory."""
    real = options.driver_cmd or any(d.command is not None for d in scenario.spec.all_drivers())
    return "http" if real else "memory"
