"""`drasim run` as a user runs it: filters, reports, exit codes, parallel runs, clear errors."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from drasim.cli import main

PASSING = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: round-trip, description: prepare and unprepare one claim, tags: [smoke]}
spec:
  driver: {fake: {name: gpu.example.com, devices: 2}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
    - expectCalls: {NodePrepareResources: 1}
    - deletePod: a
    - expectCalls: {NodeUnprepareResources: 1}
    - expectCheckpoint: {entries: 0}
"""

FAILING = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: wrong-count, description: expects a call that never happens}
spec:
  driver: {fake: {name: gpu.example.com}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
    - expectCalls: {NodePrepareResources: 2}
"""


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    (tmp_path / "pass.yaml").write_text(PASSING)
    (tmp_path / "fail.yaml").write_text(FAILING)
    return tmp_path


def test_run_passing_scenario_writes_every_report(scenario_dir: Path, tmp_path: Path, capsys) -> None:
    junit, js, html = tmp_path / "r.xml", tmp_path / "r.json", tmp_path / "r.html"
    reports = ["--junit", str(junit), "--json", str(js), "--html", str(html)]
    code = main(["run", str(scenario_dir / "pass.yaml"), *reports])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1 passed, 0 failed" in out
    suite = ET.parse(junit).getroot()
    cases = suite.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["round-trip"]
    data = json.loads(js.read_text())
    assert data["reportVersion"] == 1
    [result] = data["results"]
    assert result["status"] == "passed"
    assert any(e["kind"] == "rpc" for e in result["journal"])
    page = html.read_text()
    assert "NodePrepareResources" in page
    assert "round-trip" in page


def test_failing_scenario_exits_1_with_step_and_diff(scenario_dir: Path, capsys) -> None:
    code = main(["run", str(scenario_dir)])
    out = capsys.readouterr().out
    assert code == 1
    assert "1 passed, 1 failed" in out
    assert "expectCalls" in out
    assert "expected 2 NodePrepareResources" in out
    assert "drasim run" in out  # the reproduce command


def test_keyword_and_tag_filters(scenario_dir: Path, capsys) -> None:
    assert main(["run", str(scenario_dir), "-k", "round"]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out
    assert main(["run", str(scenario_dir), "--tag", "smoke"]) == 0
    capsys.readouterr()
    assert main(["run", str(scenario_dir), "-k", "nothing-matches"]) == 2
    assert "no scenario matched" in capsys.readouterr().err


def test_fail_fast_skips_the_rest(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.yaml").write_text(FAILING)
    (tmp_path / "b.yaml").write_text(PASSING)
    assert main(["run", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "--fail-fast"]) == 1
    out = capsys.readouterr().out
    assert "0 passed, 1 failed, 1 skipped" in out


def test_parallel_run_keeps_results(scenario_dir: Path, tmp_path: Path, capsys) -> None:
    js = tmp_path / "r.json"
    assert main(["run", str(scenario_dir), "-j", "2", "--json", str(js)]) == 1
    statuses = {r["name"]: r["status"] for r in json.loads(js.read_text())["results"]}
    assert statuses == {"round-trip": "passed", "wrong-count": "failed"}


def test_injected_bug_is_caught(tmp_path: Path, capsys) -> None:
    scenario = tmp_path / "idem.yaml"
    scenario.write_text(IDEMPOTENT)
    assert main(["run", str(scenario)]) == 0
    assert main(["run", str(scenario), "--inject-bug", "non-idempotent"]) == 1
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-j", "0"], "-j/--jobs must be at least 1"),
        (["--time-scale", "0"], "--time-scale must be a positive number, got '0'"),
        (["--time-scale", "fast"], "--time-scale: expected a number, got 'fast'"),
        (["--backend", "etcd"], "--backend: 'etcd' is not a valid backend; valid backends: memory, http"),
        (["--driver-name", "x.example.com"], "--driver-name needs --driver-cmd"),
        (["--inject-bug", "nonsense"], "unknown bug 'nonsense'"),
    ],
)
def test_bad_options_are_clear_errors(scenario_dir: Path, capsys, argv: list[str], message: str) -> None:
    assert main(["run", str(scenario_dir), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_bad_scenario_file_is_reported_with_location(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(PASSING.replace("startPod", "startPood"))
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:8:" in err
    assert "startPood" in err
    assert "Traceback" not in err


def test_setup_error_is_reported_not_raised(tmp_path: Path, capsys) -> None:
    scenario = tmp_path / "nodrv.yaml"
    scenario.write_text(PASSING)
    code = main(["run", str(scenario), "--driver-cmd", "/nonexistent/driver --flag"])
    out = capsys.readouterr().out
    assert code == 1
    assert "cannot start driver command /nonexistent/driver --flag" in out


def test_real_driver_skips_fake_only_scenarios_with_reason(tmp_path: Path, capsys) -> None:
    scenario = tmp_path / "fault.yaml"
    scenario.write_text(
        PASSING.replace(
            "    - startPod: {name: a, claims: [gpu]}\n",
            "    - fault: {plugin: {rpc: NodePrepareResources, code: UNAVAILABLE, times: 1}}\n"
            "    - startPod: {name: a, claims: [gpu], expectError: Unavailable}\n",
            1,
        )
    )
    assert main(["run", str(scenario), "--driver-cmd", "/nonexistent/driver", "--no-proxy"]) == 0
    out = capsys.readouterr().out
    assert "0 passed, 0 failed, 1 skipped" in out
    assert "injects a plugin fault" in out
    # With the proxy (the default) plugin faults run; the driver's own health does not.
    scenario.write_text(
        PASSING.replace(
            "    - startPod: {name: a, claims: [gpu]}\n",
            "    - setDeviceHealth: {device: gpu-0, health: Unhealthy}\n"
            "    - startPod: {name: a, claims: [gpu]}\n",
            1,
        )
    )
    assert main(["run", str(scenario), "--driver-cmd", "/nonexistent/driver"]) == 0
    out = capsys.readouterr().out
    assert "0 passed, 0 failed, 1 skipped" in out
    assert "tells the driver a device's health" in out


def test_create_and_apply_stop_at_the_first_failing_object(tmp_path: Path, capsys) -> None:
    scenario = tmp_path / "objects.yaml"
    scenario.write_text(
        textwrap.dedent(
            """\
            apiVersion: drasim.dev/v1alpha1
            kind: Scenario
            metadata: {name: objects, description: create fails on an existing object but apply does not}
            spec:
              driver: {fake: {name: gpu.example.com}}
              steps:
                - create:
                    - {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
                - create:
                    objects:
                      - {apiVersion: v1, kind: Namespace, metadata: {name: team-b}}
                      - {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
                    expectError: already exists
                - apply:
                    - {apiVersion: v1, kind: Namespace, metadata: {name: team-a, labels: {x: y}}}
            """
        )
    )
    assert main(["run", str(scenario)]) == 0, capsys.readouterr().out


def test_failing_step_has_one_number_in_terminal_json_journal_and_html(
    scenario_dir: Path, tmp_path: Path, capsys
) -> None:
    """wrong-count fails at its second step: every output calls it step 2."""
    js, html = tmp_path / "r.json", tmp_path / "r.html"
    assert main(["run", str(scenario_dir / "fail.yaml"), "--json", str(js), "--html", str(html)]) == 1
    out = capsys.readouterr().out
    assert "Failing step 2: expectCalls {NodePrepareResources: 2}" in out
    [result] = json.loads(js.read_text())["results"]
    assert result["failure"]["stepIndex"] == 2
    steps = {e["index"]: e["text"] for e in result["journal"] if e["kind"] == "step"}
    assert steps[2] == "expectCalls {NodePrepareResources: 2}"
    band = r'<details class="ev step failing"[^>]*><summary>.*?<span class="band">([^<]*)</span>'
    failing_rows = re.findall(band, html.read_text())
    assert failing_rows == ["Step 2: expectCalls {NodePrepareResources: 2}"]


IDEMPOTENT = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: idempotent, description: re-prepare returns the same devices}
spec:
  driver: {fake: {name: gpu.example.com}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
    - restartKubelet: {}
    - recreateSandbox: a
    - expectConsistentReplies: {claim: gpu}
"""


def test_printed_reproduce_command_fails_again(tmp_path: Path, capsys) -> None:
    """The `Reproduce:` line, typed as printed, runs the scenario the same way and fails the same way."""
    scenario = tmp_path / "idem.yaml"
    scenario.write_text(IDEMPOTENT)
    assert main(["run", str(scenario), "--inject-bug", "non-idempotent", "--fsync", "-j", "2"]) == 1
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if line.startswith("Reproduce: ")]
    words = shlex.split(line.removeprefix("Reproduce: "))
    assert words[:2] == ["drasim", "run"]
    assert main(words[1:]) == 1, "the reproduce command passed: it lost an option"
    again = capsys.readouterr().out
    assert "0 passed, 1 failed" in again
    assert line in again


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--inject-bug", "non-idempotent", "--inject-bug", "forgets-state"],
        ["--fsync", "--time-scale", "0.25"],
        ["--driver-cmd", "my-driver --node {node}", "--driver-name", "gpu.example.com"],
        ["--driver-cmd", "d", "--capability", "health", "--capability", "cdi,metrics", "--fsync"],
        ["--scenario-timeout", "30"],
        ["--scenario-timeout", "0", "--time-scale", "1"],
        ["--backend", "http"],
        ["--backend", "kubeconfig", "--kubeconfig", "/tmp/kind.yaml", "--context", "kind-drasim"],
    ],
)
def test_reproduce_command_carries_every_option_that_changes_the_outcome(tmp_path: Path, argv) -> None:
    from drasim.cli import build_parser
    from drasim.commands.run import run_options
    from drasim.runner.run import reproduce_command
    from drasim.scenario import load_text

    (scenario,) = load_text(PASSING, str(tmp_path / "pass.yaml"))
    parser = build_parser()
    options = run_options(parser.parse_args(["run", "x.yaml", "--keep-workspace", "-j", "3", *argv]))
    words = shlex.split(reproduce_command(scenario, options))
    again = run_options(parser.parse_args(words[1:]))
    assert dataclasses.replace(again, keep_workspace=True) == options
    assert words[2:5] == [str(tmp_path / "pass.yaml"), "-k", "round-trip"]


def test_junit_classname_of_library_scenarios_is_the_same_wherever_drasim_is_installed(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from drasim.scenario import builtin_scenario_dir

    source = builtin_scenario_dir() / "conformance" / "prepare-unprepare-round-trip.yaml"
    classnames = []
    for install in ("machine-a/usr/local", "machine-b/opt/venv"):
        library = tmp_path / install / "share" / "drasim" / "scenarios"
        (library / "conformance").mkdir(parents=True)
        (library / "conformance" / source.name).write_text(source.read_text())
        monkeypatch.setenv("DRASIM_SCENARIOS", str(library))
        junit = tmp_path / f"{install.split('/')[0]}.xml"
        assert main(["run", "-k", "round-trip", "--junit", str(junit)]) == 0
        classnames += [c.get("classname") for c in ET.parse(junit).getroot().iter("testcase")]
    capsys.readouterr()
    assert classnames == ["scenarios.conformance", "scenarios.conformance"]


def test_each_fake_driver_calls_the_api_server_under_its_own_name(tmp_path: Path, capsys) -> None:
    """Two fake drivers: the report draws each one's slice publishing on its own lifeline."""
    from drasim.scenario import builtin_scenario_dir

    scenario = builtin_scenario_dir() / "kubelet" / "faults" / "multi-driver-partial-failure.yaml"
    js, html = tmp_path / "r.json", tmp_path / "r.html"
    assert main(["run", str(scenario), "--json", str(js), "--html", str(html)]) == 0
    capsys.readouterr()
    [result] = json.loads(js.read_text())["results"]
    publishers = {
        e["client"] for e in result["journal"] if e["kind"] == "api" and e["resource"] == "resourceslices"
    } - {"kubelet", "runner"}
    assert publishers == {"gpu.example.com", "nic.example.com"}
    heads = re.findall(r'<span class="head"[^>]*>([^<]*)</span>', html.read_text())
    assert heads == ["runner", "kubelet", "gpu.example.com", "nic.example.com", "API server"]
