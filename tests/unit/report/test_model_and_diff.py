"""The result model and the expected-vs-actual diff."""

from __future__ import annotations

import pytest

from drasim.report import FailureInfo, RunReport, ScenarioResult, pretty, unified_diff


def test_unified_diff_sorts_keys_and_shows_only_real_changes():
    expected = {"b": [1, 2], "a": {"y": "same", "x": 1}}
    actual = {"a": {"x": 2, "y": "same"}, "b": [1, 2]}
    assert unified_diff(expected, actual) == (
        "--- expected\n+++ actual\n@@ -1,5 +1,5 @@\n a:\n-  x: 1\n+  x: 2\n   y: same\n b:\n - 1\n"
    )
    assert unified_diff({"a": 1, "b": 2}, {"b": 2, "a": 1}) == ""


def test_diff_of_strings_and_values_needing_conversion():
    assert unified_diff("one\ntwo", "one\nthree").splitlines()[3:] == [" one", "-two", "+three"]
    assert pretty(("a", b"b")) == "- a\n- b\n"
    assert pretty(None) == "null\n"


def test_failure_build_fills_the_diff_only_with_values():
    with_values = FailureInfo.build("mismatch", expected={"calls": 1}, actual={"calls": 0})
    assert "-calls: 1\n+calls: 0\n" in with_values.diff
    assert FailureInfo.build("driver crashed").diff == ""


def test_scenario_result_validates_status_and_derives_folder_and_location():
    with pytest.raises(ValueError, match="must be one of passed, failed, error, skipped; got 'ok'"):
        ScenarioResult(name="x", status="ok")  # type: ignore[arg-type]
    result = ScenarioResult(name="x", status="passed", file="./scenarios/kubelet/restart/a.yaml", line=4)
    assert result.folder == "scenarios.kubelet.restart"
    assert result.location == "./scenarios/kubelet/restart/a.yaml:4"
    assert ScenarioResult(name="x", status="passed").folder == "drasim"
    assert ScenarioResult(name="x", status="passed", file="a.yaml").location == "a.yaml"


def test_run_report_counts(report: RunReport):
    assert report.counts == {"passed": 2, "failed": 1, "error": 1, "skipped": 1, "total": 5}
    assert not report.ok
    assert RunReport(results=[ScenarioResult(name="x", status="skipped")]).ok


def test_model_dict_round_trip(report: RunReport):
    again = RunReport.from_dict(report.to_dict())
    assert again == report


def test_folder_of_absolute_paths_does_not_depend_on_where_things_live(tmp_path, monkeypatch):
    """JUnit's classname (the folder) must be the same on every machine and checkout."""
    library = tmp_path / "site-packages" / "share" / "drasim" / "scenarios"
    (library / "kubelet" / "restart").mkdir(parents=True)
    monkeypatch.setenv("DRASIM_SCENARIOS", str(library))
    in_library = ScenarioResult(name="x", status="passed", file=str(library / "kubelet/restart/a.yaml"))
    assert in_library.folder == "scenarios.kubelet.restart"

    project = tmp_path / "home" / "me" / "my-driver"
    (project / "tests" / "drasim").mkdir(parents=True)
    monkeypatch.chdir(project)
    mine = ScenarioResult(name="x", status="passed", file=str(project / "tests/drasim/a.yaml"))
    assert mine.folder == "tests.drasim"
    assert ScenarioResult(name="x", status="passed", file=str(project / "a.yaml")).folder == "drasim"
    outside = str(tmp_path / "ci" / "job-7" / "suite" / "a.yaml")
    elsewhere = ScenarioResult(name="x", status="passed", file=outside)
    assert elsewhere.folder == "suite"
