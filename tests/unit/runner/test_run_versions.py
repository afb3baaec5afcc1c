"""`drasim run --kubelet-version`: one row per (scenario, version) in every report; upgrades in a scenario."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from drasim.cli import main
from drasim.report.model import RESULTS
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.scenario import load_text

ROUND_TRIP = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: round-trip, description: prepare and unprepare one claim}
spec:
  driver: {fake: {name: gpu.example.com, devices: 2, services: ["1.0.0", v1.DRAPlugin, v1beta1.DRAPlugin]}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
    - deletePod: a
    - expectCalls: {NodePrepareResources: 1, NodeUnprepareResources: 1}
"""

NEW_ONLY = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: new-only, description: needs the v1 service}
spec:
  kubeletVersions: [">=1.34"]
  driver: {fake: {name: gpu.example.com}}
  steps:
    - expectRegistered: {service: v1.DRAPlugin}
"""


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    (tmp_path / "a.yaml").write_text(ROUND_TRIP)
    (tmp_path / "b.yaml").write_text(NEW_ONLY)
    return tmp_path


def test_matrix_rows_in_every_report(scenario_dir: Path, tmp_path: Path, capsys) -> None:
    junit, js, html = tmp_path / "r.xml", tmp_path / "r.json", tmp_path / "r.html"
    args = ["run", str(scenario_dir), "--kubelet-version", "1.31,1.33,1.37"]
    code = main([*args, "--junit", str(junit), "--json", str(js), "--html", str(html)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "4 passed, 0 failed, 2 skipped" in out
    names = [
        "round-trip[kubelet-1.31]",
        "round-trip[kubelet-1.33]",
        "round-trip[kubelet-1.37]",
        "new-only[kubelet-1.31]",
        "new-only[kubelet-1.33]",
        "new-only[kubelet-1.37]",
    ]
    for name in names:
        assert name in out
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert sorted(c.get("name") for c in cases) == sorted(names)
    skipped = [c.get("name") for c in cases if c.find("skipped") is not None]
    assert skipped == ["new-only[kubelet-1.31]", "new-only[kubelet-1.33]"]
    data = json.loads(js.read_text())
    assert sorted((r["name"], r["kubeletVersion"]) for r in data["results"]) == sorted(
        (n, n.split("kubelet-")[1].rstrip("]")) for n in names
    )
    assert data["environment"]["extra"] == {"kubeletVersions": "1.31,1.33,1.37"}
    page = html.read_text()
    for name in names:
        assert name in page


def test_without_a_version_each_scenario_runs_once_under_its_plain_name(scenario_dir: Path, capsys) -> None:
    assert main(["run", str(scenario_dir)]) == 0
    out = capsys.readouterr().out
    assert "2 passed, 0 failed, 0 skipped" in out
    assert "[kubelet-" not in out


def test_failure_reproduce_line_names_the_version(scenario_dir: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "c.yaml").write_text(NEW_ONLY.replace("new-only", "forced").replace('[">=1.34"]', "[]"))
    code = main(["run", str(tmp_path / "c.yaml"), "--kubelet-version", "1.33"])
    out = capsys.readouterr().out
    assert code == 1
    assert "forced[kubelet-1.33]" in out
    assert "--kubelet-version 1.33" in out


def test_bad_version_is_exit_2(scenario_dir: Path, capsys) -> None:
    assert main(["run", str(scenario_dir), "--kubelet-version", "1.30"]) == 2
    assert "--kubelet-version: unknown kubelet version '1.30'" in capsys.readouterr().err


def test_restart_kubelet_version_upgrades_and_journals(tmp_path: Path) -> None:
    text = ROUND_TRIP.replace(
        "    - deletePod: a\n",
        '    - restartKubelet: {version: "1.37"}\n    - expectRegistered: {service: v1.DRAPlugin}\n'
        "    - deletePod: a\n",
    )
    (scenario,) = load_text(text, "upgrade.yaml")
    result = run_scenario(scenario, RunOptions(kubelet_version="1.33"), results=RESULTS)
    assert result.status == "passed", result.failure.message if result.failure else ""
    starts = [e for e in result.journal if e["kind"] == "kubelet" and e.get("operation") == "start"]
    assert [e["version"] for e in starts] == ["1.33", "1.37"]
    changes = [e for e in result.journal if e["kind"] == "kubelet" and e.get("operation") == "version"]
    assert [(e["previous"], e["version"]) for e in changes] == [("1.33", "1.37")]


def test_unknown_restart_version_is_a_scenario_error() -> None:
    text = ROUND_TRIP.replace("    - deletePod: a\n", '    - restartKubelet: {version: "1.29"}\n')
    with pytest.raises(Exception, match=r"1\.29") as err:
        load_text(text, "bad.yaml")
    assert "bad.yaml:" in str(err.value)


def test_bad_kubelet_versions_constraint_is_a_scenario_error() -> None:
    text = NEW_ONLY.replace('[">=1.34"]', '["~1.34"]')
    with pytest.raises(Exception, match="invalid kubelet version constraint") as err:
        load_text(text, "bad.yaml")
    assert "bad.yaml:" in str(err.value)
    empty = NEW_ONLY.replace('[">=1.34"]', '["1.33", ">=1.34"]')
    with pytest.raises(Exception, match="allows no kubelet version"):
        load_text(empty, "empty.yaml")


def test_unknown_version_through_the_api_is_a_config_error() -> None:
    from drasim.errors import ConfigError

    (scenario,) = load_text(ROUND_TRIP, "a.yaml")
    with pytest.raises(ConfigError, match=r"kubelet version: unknown kubelet version '1\.99'"):
        run_scenario(scenario, RunOptions(kubelet_version="1.99"), results=RESULTS)
