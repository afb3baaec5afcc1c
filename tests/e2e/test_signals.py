"""Killing ``drasim run`` (SIGINT, SIGTERM, SIGKILL) leaves no driver process, socket or workspace."""

from __future__ import annotations

import importlib.util
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

import pytest


def _signals() -> Any:
    name = "drasim_test_e2e_signals"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("signals.py"))
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


S = _signals()

# The fake plugin as a driver process that publishes no slices: the runner then waits 10 s
# after its registration, which is when the tests interrupt drasim.
QUIET_DRIVER = shlex.join([sys.executable, "-m", "fake_plugins"]) + (
    " --driver-name {driver_name} --node-name {node} --kubeconfig {kubeconfig}"
    " --registry-dir {registrar_dir} --plugin-dir {plugin_dir} --cdi-dir {cdi_dir} --state-dir {state_dir}"
)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_killing_drasim_leaves_nothing_behind(sig: signal.Signals, tmp_path: Path) -> None:
    with S.short_base() as base:
        run = S.start_held_run(base, QUIET_DRIVER, tmp_path / "drasim.log")
        S.interrupt_and_check(run, sig, base)


@pytest.mark.slow
def test_sigterm_with_parallel_scenarios_leaves_nothing_behind(tmp_path: Path) -> None:
    # -j 2: the scenarios run in a thread pool; drasim must not wait for the pool to drain.
    with S.short_base() as base:
        run = S.start_held_run(base, QUIET_DRIVER, tmp_path / "drasim.log", "-j", "2")
        S.interrupt_and_check(run, signal.SIGTERM, base)
