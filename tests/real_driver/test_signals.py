"""Killing ``drasim run`` with the example driver running leaves no process, socket or workspace."""

from __future__ import annotations

import importlib.util
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent


def _load(name: str, path: Path) -> Any:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


SIGNALS = _load("drasim_test_e2e_signals", HERE.parent / "e2e" / "signals.py")

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_killing_drasim_leaves_nothing_of_the_example_driver(
    sig: signal.Signals, example_driver_cmd: str, tmp_path: Path
) -> None:
    with SIGNALS.short_base() as base:
        run = SIGNALS.start_held_run(base, example_driver_cmd, tmp_path / "drasim.log")
        assert all(
            "dra-example-kubeletplugin" in Path(f"/proc/{pid}/cmdline").read_text() for pid in run.driver_pids
        )
        SIGNALS.interrupt_and_check(run, sig, base)
