"""Options, ini keys and the UsageErrors for bad values."""

from __future__ import annotations

import json
from typing import Any

import pytest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--drasim-time-scale", "0"], "--drasim-time-scale must be a positive number, got '0'"),
        (["--drasim-time-scale", "fast"], "--drasim-time-scale: expected a number, got 'fast'"),
        (["--drasim-time-scale", "11"], "--drasim-time-scale must be at most 10, got '11'"),
        (
            ["--drasim-suite", "nope"],
            "--drasim-suite: unknown suite 'nope'; valid suites: conformance, kubelet, all",
        ),
        (["--drasim-driver-name", "x.example.com"], "--drasim-driver-name needs --drasim-driver-cmd"),
        (["--drasim-driver-cmd", "drv --node {nodename}"], "unknown placeholder {nodename}"),
        (["--drasim-driver-cmd", "drv 'unclosed"], "--drasim-driver-cmd: cannot split"),
        (
            ["--drasim-kubelet-profile", "missing.yaml"],
            "neither a named profile (default, v1-only, v1beta1-only)",
        ),
        (["--drasim-capability", "Has Space"], "invalid capability name 'Has Space'"),
        (["--drasim-workspace-dir", "no-such-dir"], "no-such-dir: not an existing directory"),
        (["--drasim-workspace-dir", "."], "characters long; unix socket paths under it would exceed 107"),
        (
            ["--drasim-scenario-timeout", "-1"],
            "--drasim-scenario-timeout must be a number of seconds (0 = no limit), got '-1'",
        ),
        (
            ["--drasim-scenario-timeout", "soon"],
            "--drasim-scenario-timeout: expected a number of seconds, got 'soon'",
        ),
    ],
)
def test_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_profile_file_with_a_wrong_field(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", profile="kubelet:\n  timeScal: 0.5\n")
    result = pytester.runpytest("--drasim-kubelet-profile", "profile.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*profile.yaml:2:3: kubelet: unknown field 'timeScal'*Did you mean 'timeScale'*"]
    )


def test_report_dir_that_is_a_file(pytester: pytest.Pytester) -> None:
    pytester.makefile(".txt", taken="x")
    result = pytester.runpytest("--drasim-report-dir", "taken.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "exists and is not a directory" in result.stderr.str()


def test_ini_keys_configure_the_run(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    pytester.makeini("[pytest]\ndrasim_report_dir = out\ndrasim_time_scale = 0.02\n")
    write("drasim_one.yaml", scenario_text("one"))
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    assert report["environment"]["timeScale"] == 0.02
    assert report["summary"]["passed"] == 1
    assert (pytester.path / "out" / "drasim-report.xml").read_text().startswith("<?xml")
    assert "<html" in (pytester.path / "out" / "drasim-report.html").read_text()


def test_command_line_wins_over_ini(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    pytester.makeini("[pytest]\ndrasim_time_scale = -1\n")
    write("drasim_one.yaml", scenario_text("one"))
    bad = pytester.runpytest("-q")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    good = pytester.runpytest("-q", "--drasim-time-scale", "0.02")
    good.assert_outcomes(passed=1)


SERVICE_CHECK = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: negotiated-service, description: which service the kubelet picked}
spec:
  driver:
    fake: {name: gpu.example.com}
  steps:
    - expectRegistered: {service: v1beta1.DRAPlugin}
"""


def test_named_kubelet_profile(pytester: pytest.Pytester, write: Any) -> None:
    # The default kubelet prefers v1 (proven by the first run); the profile leaves it only v1beta1.
    write("drasim_service.yaml", SERVICE_CHECK.replace("v1beta1.DRAPlugin", "v1.DRAPlugin"))
    pytester.runpytest("-q").assert_outcomes(passed=1)
    write("drasim_service.yaml", SERVICE_CHECK)
    pytester.runpytest("-q", "--drasim-kubelet-profile", "v1beta1-only").assert_outcomes(passed=1)


def test_kubelet_profile_file(pytester: pytest.Pytester, write: Any) -> None:
    write("drasim_service.yaml", SERVICE_CHECK)
    write("profiles/old.yaml", "services: [v1beta1.DRAPlugin]\ntimers: {callTimeout: 20}\n")
    result = pytester.runpytest("-q", "--drasim-kubelet-profile", "profiles/old.yaml")
    result.assert_outcomes(passed=1)


def test_workspace_dir_and_fsync_reach_the_runner(pytester: pytest.Pytester, write: Any) -> None:
    base = "/tmp"  # a short base: pytester's own directory is too long for unix sockets
    write(
        "drasim_check.yaml",
        """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: where, description: a pod runs}
spec:
  driver: {fake: {name: gpu.example.com, devices: 1}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
""",
    )
    pytester.makeconftest(
        """
from drasim.runner import world

seen = []
real_setup = world.World.setup

def setup(self):
    real_setup(self)
    seen.append((str(self.workspace.root.parent), self.plan.options.fsync))

def pytest_configure(config):
    world.World.setup = setup

def pytest_unconfigure(config):
    world.World.setup = real_setup  # pytester runs in this process: leave no patch behind
    with open("seen.txt", "w") as f:
        f.write(repr(seen))
"""
    )
    result = pytester.runpytest("--drasim-workspace-dir", base, "--drasim-fsync", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert (pytester.path / "seen.txt").read_text() == repr([(base, True)])
    from drasim.runner import world

    assert world.World.setup.__module__ == "drasim.runner.world"


HANGS = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: hangs, description: the driver never answers and the kubelet waits an hour}
spec:
  driver: {fake: {name: gpu.example.com}}
  kubelet: {timeScale: 1, timers: {callTimeout: 3600}}
  claims: [{name: gpu}]
  steps:
    - fault: {plugin: {rpc: NodePrepareResources, hang: true}}
    - startPod: {name: a, claims: [gpu]}
"""


@pytest.mark.parametrize("where", ["option", "ini"])
def test_scenario_timeout_fails_the_scenario_at_its_step(
    pytester: pytest.Pytester, write: Any, scenario_text: Any, where: str
) -> None:
    write("drasim_hangs.yaml", HANGS)
    write("drasim_one.yaml", scenario_text("one"))
    if where == "ini":
        pytester.makeini("[pytest]\ndrasim_scenario_timeout = 1\n")
        result = pytester.runpytest("-q")
    else:
        result = pytester.runpytest("-q", "--drasim-scenario-timeout", "1")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*the scenario did not finish within its time limit of 1s (--scenario-timeout); "
            "it was stopped during step 2 (startPod)*"
        ]
    )


# -- backends (issue 12) ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--drasim-backend", "etcd"],
            "--drasim-backend: 'etcd' is not a valid backend; valid backends: memory, http",
        ),
        (
            ["--drasim-kubeconfig", "kc.yaml"],
            "--drasim-kubeconfig and --drasim-context need --drasim-backend",
        ),
        (["--drasim-backend", "kubeconfig", "--drasim-kubeconfig", "nope.yaml"], "nope.yaml: no such file"),
    ],
)
def test_backend_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_backend_option_and_pin_reach_the_runner(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    write("drasim_plain.yaml", scenario_text("plain"))
    write("drasim_pinned.yaml", scenario_text("pinned").replace("spec:\n", "spec:\n  backend: memory\n", 1))
    result = pytester.runpytest("-q", "-rs", "--drasim-backend", "http", "--drasim-report-dir", "out")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*the scenario pins backend 'memory' (spec.backend); this run uses --backend http*"]
    )
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    assert report["environment"]["backend"] == "http"
    plain = next(r for r in report["results"] if r["name"] == "plain")
    # Over HTTP the API server journals the kubelet's claim reads under its user agent.
    assert any(e["kind"] == "api" and e["client"] == "kubelet" for e in plain["journal"])
