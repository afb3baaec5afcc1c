"""What a ``drasim run`` report header says the scenarios ran against: the driver and the backend,
from the options and from the scenarios themselves (a pinned ``spec.backend``, a scenario's own
``command`` driver), so the header does not name a backend or driver the run did not use."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drasim.scenario.schema import Scenario


def driver_and_backend(scenarios: Sequence[Scenario], args: argparse.Namespace) -> tuple[str, str]:
    """``(driver, backend)`` for the header; several backends are listed, comma-separated."""
    if args.driver_cmd:
        driver = args.driver_cmd
    else:
        kinds = {
            "command (scenario)" if d.command is not None else "fake"
            for s in scenarios
            for d in s.spec.all_drivers()
        }
        driver = " + ".join(sorted(kinds, key=lambda k: k != "fake")) or "fake"
    backends = {args.backend or s.spec.backend or _default_backend(s, args) for s in scenarios}
    return driver, ", ".join(sorted(backends)) or (args.backend or "memory")


def _default_backend(scenario: Scenario, args: argparse.Namespace) -> str:
    """A real driver reads the API server over HTTP (``apiServer.mode: auto``), the fake in memory."""
    real = args.driver_cmd or any(d.command is not None for d in scenario.spec.all_drivers())
    return "http" if real else "memory"
