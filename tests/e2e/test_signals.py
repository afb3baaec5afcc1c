"""Killing ``drasim run`` (SIGINT, SIGTERM, SIGKILL) leaves no driver process, socket or workspace."""

from __future__ import annotations

import shlex
import signal
import sys
from pathlib import Path
from types import ModuleType

import pytest

# The fake plugin as a driver process that publishes no slices: the runner then waits 10 s
# after its registration, which is when the tests interrupt drasim.
QUIET_DRIVER = shlex.join([sys.executable, "-m", "fake_plugins"]) + (
    " --driver-name {driver_name} --node-name {node} --kubeconfig {kubeconfig}"
    " --registry-dir {registrar_dir} --plugin-dir {plugin_dir} --cdi-dir {cdi_dir} --state-dir {state_dir}"
)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_killing_drasim_leaves_nothing_behind(
    sig: signal.Signals, e2e_signals: ModuleType, tmp_path: Path
) -> None:
    with e2e_signals.short_base() as base:
        run = e2e_signals.start_held_run(base, QUIET_DRIVER, tmp_path / "drasim.log")
        e2e_signals.interrupt_and_check(run, sig, base)


@pytest.mark.slow
def test_sigterm_with_parallel_scenarios_leaves_nothing_behind(
    e2e_signals: ModuleType, tmp_path: Path
) -> None:
    # -j 2: the scenarios run in a thread pool; drasim must not wait for the pool to drain.
    with e2e_signals.short_base() as base:
        run = e2e_signals.start_held_run(base, QUIET_DRIVER, tmp_path / "drasim.log", "-j", "2")
        e2e_signals.interrupt_and_check(run, signal.SIGTERM, base)
