"""A driver process whose first registration dial misses its deadline still registers.

On a loaded machine the kubelet's first dial of a just-started driver can run out of time; the
plugin reconciler retries it with backoff (as upstream's does), so the runner must wait for the
retry instead of taking the timed-out dial as the registration's outcome.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from drasim.cli import main
from drasim.plugins import registration
from drasim.report.model import RESULTS
from drasim.runner.run import run_scenario
from drasim.scenario import builtin_scenario_dir, load_paths


def test_timed_out_registration_calls_are_not_final() -> None:
    timed_out = (
        "RegisterPlugin error -- dial failed at socket /r/x-reg.sock, err: failed to dial socket "
        "/r/x-reg.sock, err: context deadline exceeded"
    )
    assert registration.is_timeout(timed_out)
    assert registration.is_timeout(
        "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket /r/x-reg.sock, "
        "err: rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    )
    assert not registration.is_timeout(
        "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket /r/x-reg.sock, "
        "err: rpc error: code = Unavailable desc = injected"
    )


def _first_dial_times_out(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the kubelet's first registration dial fail as a timed-out dial does; the sockets it hit."""
    real_dial = registration._Session.dial
    failed: list[str] = []
    lock = threading.Lock()

    def first_dial_times_out(self: registration._Session) -> None:
        with lock:
            first = not failed
            if first:
                failed.append(self.socket_path)
        if first:
            path = self.socket_path
            raise registration.RegistrationFailedError(
                f"RegisterPlugin error -- dial failed at socket {path}, err: "
                f"failed to dial socket {path}, err: context deadline exceeded"
            )
        real_dial(self)

    monkeypatch.setattr(registration._Session, "dial", first_dial_times_out)
    return failed


def test_fake_driver_registers_after_a_timed_out_first_dial(monkeypatch: pytest.MonkeyPatch) -> None:
    failed = _first_dial_times_out(monkeypatch)
    (scenario,) = load_paths([builtin_scenario_dir() / "conformance" / "shared-claim.yaml"])
    result = run_scenario(scenario, results=RESULTS)
    assert result.status == "passed", result.failure
    assert failed, "the first dial was not intercepted"
    outcomes = [e.get("outcome") for e in result.journal if e["kind"] == "registration"]
    assert outcomes[:2] == ["failed", "registered"], outcomes


def test_driver_process_registers_after_a_timed_out_first_dial(
    tmp_path: Path, driver_cmd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed = _first_dial_times_out(monkeypatch)
    scenario = builtin_scenario_dir() / "conformance" / "prepare-unprepare-round-trip.yaml"
    report_path = tmp_path / "report.json"
    code = main(["run", str(scenario), "--driver-cmd", driver_cmd, "--json", str(report_path)])
    report = json.loads(report_path.read_text())
    (result,) = report["results"]
    assert code == 0, result.get("failure")
    assert failed, "the first dial was not intercepted"
    outcomes = [e.get("outcome") for e in result["journal"] if e["kind"] == "registration"]
    assert outcomes[:2] == ["failed", "registered"], outcomes


RESTART = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: e2e-quick-registration-after-kubelet-restart
  description: A running driver process registers with a restarted kubelet before the runner starts waiting.
spec:
  driver:
    fake: {name: gpu.example.com}
  claims:
    - {name: gpu}
  steps:
    - startPod: {name: a, claims: [gpu]}
    - restartKubelet: {}
    - expectRegistered: {registered: true, connected: true}
    - deletePod: a
    - expectCalls: {NodePrepareResources: 1, NodeUnprepareResources: 1}
    - expectCheckpoint: {entries: 0}
"""


def test_a_registration_done_before_the_wait_begins_counts(
    tmp_path: Path, driver_cmd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted kubelet's first scan registers a driver that is already running; on a busy
    machine that can finish before the runner starts waiting for it (seen with the upstream
    example driver and `-j 2`: a 30 s timeout although the journal showed it registered)."""
    from drasim.plugins.host import PluginHost

    real_start = PluginHost.start

    def start_and_register(self: PluginHost) -> None:
        real_start(self)
        self.sync(timeout=10)  # every socket already there is registered before start() returns

    monkeypatch.setattr(PluginHost, "start", start_and_register)
    scenario = tmp_path / "restart.yaml"
    scenario.write_text(RESTART)
    report_path = tmp_path / "report.json"
    code = main(["run", str(scenario), "--driver-cmd", driver_cmd, "--json", str(report_path)])
    (result,) = json.loads(report_path.read_text())["results"]
    assert code == 0, result.get("failure")
    outcomes = [e.get("outcome") for e in result["journal"] if e["kind"] == "registration"]
    assert outcomes == ["registered", "registered"], outcomes
