"""Killing ``drasim run`` with a real driver running leaves no process, socket or workspace."""

from __future__ import annotations

import signal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_killing_drasim_leaves_nothing_of_the_driver(
    sig: signal.Signals, real_driver: Any, e2e_signals: ModuleType, tmp_path: Path
) -> None:
    with e2e_signals.short_base() as base:
        run = e2e_signals.start_held_run(base, real_driver.cmd, tmp_path / "drasim.log")
        assert all(
            real_driver.process_name in Path(f"/proc/{pid}/cmdline").read_text() for pid in run.driver_pids
        )
        e2e_signals.interrupt_and_check(run, sig, base)
