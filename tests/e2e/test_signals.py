"""Killing ``drasim run`` (SIGINT, SIGTERM, SIGKILL) leaves no driver process, socket or workspace."""

from __future__ import annotations

import shlex
import signal
import sys
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).parent
# The fake plugin as a driver process that holds every NodePrepareResources until the caller
# gives up (450 s in the hold scenario): drasim is busy from the driver's registration on,
# whenever the tests' signal arrives.
HOLD_IN_PREPARE = HERE / "scenarios" / "hold-in-prepare.yaml"


def holding_driver(tmp_path: Path) -> str:
    """The driver command, with a behaviour file that makes NodePrepareResources hang."""
    behaviour = tmp_path / "hang-prepare.yaml"
    behaviour.write_text("faults:\n  - {rpc: NodePrepareResources, hang: true}\n")
    return shlex.join([sys.executable, "-m", "fake_plugins", "--behaviour", str(behaviour)]) + (
        " --driver-name {driver_name} --node-name {node} --kubeconfig {kubeconfig} --publish-slices"
        " --registry-dir {registrar_dir} --plugin-dir {plugin_dir} --cdi-dir {cdi_dir}"
        " --state-dir {state_dir}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_killing_drasim_leaves_nothing_behind(
    sig: signal.Signals, e2e_signals: ModuleType, tmp_path: Path
) -> None:
    with e2e_signals.short_base() as base:
        run = e2e_signals.start_held_run(
            base, holding_driver(tmp_path), tmp_path / "drasim.log", scenario=HOLD_IN_PREPARE
        )
        e2e_signals.interrupt_and_check(run, sig, base)


@pytest.mark.slow
def test_sigterm_with_parallel_scenarios_leaves_nothing_behind(
    e2e_signals: ModuleType, tmp_path: Path
) -> None:
    # -j 2: the scenarios run in a thread pool; drasim must not wait for the pool to drain.
    with e2e_signals.short_base() as base:
        run = e2e_signals.start_held_run(
            base, holding_driver(tmp_path), tmp_path / "drasim.log", "-j", "2", scenario=HOLD_IN_PREPARE
        )
        e2e_signals.interrupt_and_check(run, signal.SIGTERM, base)
