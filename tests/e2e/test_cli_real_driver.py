"""``drasim run --driver-cmd``: registration wait, restart, kill, output capture and cleanup, for real."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from drasim.cli import main
from drasim.scenario import builtin_scenario_dir

HERE = Path(__file__).parent
CONFORMANCE = builtin_scenario_dir() / "conformance"


def _process_events(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in result["journal"] if e["kind"] == "plugin-process"]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_conformance_scenarios_through_a_driver_process(tmp_path: Path, driver_cmd: str) -> None:
    report_path = tmp_path / "report.json"
    files = [
        CONFORMANCE / "prepare-unprepare-round-trip.yaml",
        CONFORMANCE / "plugin-restart-keeps-state.yaml",
        HERE / "scenarios" / "process-lifecycle.yaml",
        HERE / "scenarios" / "republish-after-kubelet-restart.yaml",
    ]
    # Three driver processes and their proxies at once: at five times the default time scale
    # the kubelet's 45 s call deadline is 2.25 s, which a loaded CI machine does not miss.
    options = ["--driver-cmd", driver_cmd, "-j", "3", "--time-scale", "0.05", "--json", str(report_path)]
    code = main(["run", *map(str, files), *options])
    report = json.loads(report_path.read_text())
    failures = {r["name"]: r["failure"] for r in report["results"] if r["status"] != "passed"}
    assert code == 0, failures
    results = {r["name"]: r for r in report["results"]}
    assert report["environment"]["backend"] == "http"

    # Registration: the process got the kubeconfig of the HTTP API server and every directory.
    first = _process_events(results["conformance-prepare-unprepare-round-trip"])[0]
    argv = first["argv"]
    assert argv[:3] == [sys.executable, "-m", "fake_plugins"]
    kubeconfig = Path(argv[argv.index("--kubeconfig") + 1])
    assert kubeconfig.name == "kubeconfig"
    workspace = kubeconfig.parent
    # By default the process registers through drasim's proxy: its own registration directory,
    # mirrored into the kubelet's plugins_registry, where the kubelet registered it.
    assert argv[argv.index("--registry-dir") + 1] == str(workspace / "proxy" / "registry")
    journal = results["conformance-prepare-unprepare-round-trip"]["journal"]
    (registered,) = [e for e in journal if e["kind"] == "registration" and e.get("outcome") == "registered"]
    assert Path(registered["socket"]).parent == workspace / "kubelet" / "plugins_registry"
    served = [e for e in journal if e["kind"] == "rpc" and e.get("side") == "plugin"]
    assert {e["method"].rsplit("/", 1)[1] for e in served} >= {"GetInfo", "NodePrepareResources"}
    assert all(e.get("via") == "proxy" for e in served)

    # The devices came from the slices the process published over HTTP (the allocator used them).
    prepares = [
        e
        for e in results["conformance-prepare-unprepare-round-trip"]["journal"]
        if e["kind"] == "rpc" and e.get("side") == "kubelet" and e["method"].endswith("NodePrepareResources")
    ]
    (reply,) = [c for p in prepares for c in p["response"]["claims"].values()]
    assert reply["devices"][0]["pool_name"] == "node-1"
    assert reply["devices"][0]["device_name"].startswith("gpu-")

    # restartPlugin: SIGTERM (exit 0), then a new process.
    events = _process_events(results["conformance-plugin-restart-keeps-state"])
    actions = [(e["action"], e["pid"]) for e in events]
    assert [a for a, _ in actions] == ["started", "stopped", "started", "stopped"]
    assert actions[0][1] == actions[1][1] != actions[2][1] == actions[3][1]
    assert events[1]["returncode"] == 0

    # killPlugin: SIGKILL (-9), then startPlugin and restartPlugin start new processes.
    events = _process_events(results["e2e-process-kill-and-restart"])
    assert [e["action"] for e in events] == ["started", "killed", "started", "stopped", "started", "stopped"]
    assert events[1]["returncode"] == -9
    assert len({e["pid"] for e in events}) == 3

    # Output of every run is in the report, and nothing is left behind.
    stderr = results["e2e-process-kill-and-restart"]["stderr"]
    assert stderr.count("fake_plugins: gpu.example.com serving") == 3
    assert "--- run 3 ---" in stderr
    for result in results.values():
        assert all(_gone(e["pid"]) for e in _process_events(result))
    assert not workspace.exists()


def _failed_round_trip(command: str, tmp_path: Path) -> dict[str, Any]:
    """Run the conformance round trip with ``command`` as the driver; it must end in an error."""
    report_path = tmp_path / "report.json"
    scenario = str(CONFORMANCE / "prepare-unprepare-round-trip.yaml")
    code = main(["run", scenario, "--driver-cmd", command, "--json", str(report_path)])
    assert code == 1
    (result,) = json.loads(report_path.read_text())["results"]
    assert result["status"] == "error"
    return dict(result)


def test_driver_that_exits_is_an_error_with_its_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = "import sys; print('no devices found on this node', file=sys.stderr); sys.exit(3)"
    command = shlex.join([sys.executable, "-c", script]) + " {node}"
    result = _failed_round_trip(command, tmp_path)
    message = result["failure"]["message"]
    assert "driver exited with status 3 before driver gpu.example.com to register" in message
    assert "no devices found on this node" in message
    assert "no devices found on this node" in capsys.readouterr().out


def test_driver_already_dead_at_kubelet_start_is_reported_with_status_and_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A driver that exits before the kubelet even looks (like /bin/false) is an error at set-up.

    It used to be skipped as "not running", and the scenario then failed at its first pod
    with "0 available on node node-1". The start is made to wait for the exit, so the
    driver is dead when the kubelet starts, every time.
    """
    from drasim.runner.drivers import ProcessDriverHandle

    original = ProcessDriverHandle.start

    def start_and_wait_for_exit(self: ProcessDriverHandle) -> None:
        original(self)
        self.process.wait_until(lambda: not self.running, timeout=10, what="exit")

    monkeypatch.setattr(ProcessDriverHandle, "start", start_and_wait_for_exit)
    command = "sh -c 'echo starting up; echo no GPU found >&2; exit 1'"
    result = _failed_round_trip(command, tmp_path)
    message = result["failure"]["message"]
    assert "driver exited with status 1 before driver gpu.example.com to register" in message
    assert "no GPU found" in message
    assert "0 available" not in message
    assert result["stdout"] == "starting up\n"
    assert result["stderr"] == "no GPU found\n"
    assert result["failure"]["stepIndex"] is None  # no step ran
    exited = [e for e in _process_events(result) if e["action"] == "exited"]
    assert [(e["returncode"], e["stderr_tail"]) for e in exited] == [(1, "no GPU found\n")]


def test_the_fake_plugin_process_takes_a_bug_on_its_command_line(tmp_path: Path, driver_cmd: str) -> None:
    """``python -m fake_plugins --bug no-cdi-spec`` (no behaviour file): the conformance round trip,
    which passes against the plain process, catches the bug."""
    report_path = tmp_path / "report.json"
    scenario = str(CONFORMANCE / "prepare-unprepare-round-trip.yaml")
    code = main(
        ["run", scenario, "--driver-cmd", driver_cmd + " --bug no-cdi-spec", "--json", str(report_path)]
    )
    assert code == 1
    (result,) = json.loads(report_path.read_text())["results"]
    assert result["status"] == "failed"
    assert result["failure"]["stepText"].startswith("expectCdiSpecs {resolvable: true}")
    assert (
        "unresolved: pod default/a container ctr: gpu.example.com/gpu=gpu-0" in result["failure"]["message"]
    )
    started = _process_events(result)[0]["argv"]
    assert started[-2:] == ["--bug", "no-cdi-spec"]
