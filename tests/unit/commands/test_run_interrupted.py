"""An interrupted ``drasim run`` (Ctrl-C, SIGTERM) still prints the counts and writes the reports
of what ran; the scenarios that never started are counted as not run."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from drasim.cli import main
from drasim.report.terminal import TerminalReporter


def test_ctrl_c_after_the_first_scenario_reports_what_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    original = TerminalReporter.scenario_finished
    finished: list[str] = []

    def finished_then_interrupted(self: TerminalReporter, result: object) -> None:
        original(self, result)  # type: ignore[arg-type]
        finished.append(getattr(result, "name", ""))
        if len(finished) == 1:
            raise KeyboardInterrupt  # as Ctrl-C arriving while the first scenario ends

    monkeypatch.setattr(TerminalReporter, "scenario_finished", finished_then_interrupted)
    out_json, out_xml = tmp_path / "r.json", tmp_path / "r.xml"
    code = main(["run", "--suite", "conformance", "--json", str(out_json), "--junit", str(out_xml)])
    assert code == 128 + signal.SIGINT
    out, err = capsys.readouterr()
    assert "drasim: interrupted (SIGINT)" in err
    report = json.loads(out_json.read_text())
    statuses = [r["status"] for r in report["results"]]
    assert statuses[0] == "passed"
    # The scenario the pool had started when the interrupt arrived stops at its next step.
    stopped = [r for r in report["results"][1:] if r["status"] != "skipped"]
    assert len(stopped) <= 1
    not_run = [r for r in report["results"] if r["status"] == "skipped"]
    assert not_run
    assert {r["skipReason"] for r in not_run} == {"not run: the run was interrupted"}
    assert len(statuses) == 1 + len(stopped) + len(not_run)
    assert out_xml.read_text().startswith("<?xml")
    assert f"{len(not_run)} not run (not run: the run was interrupted)" in out
    (summary,) = [line for line in out.splitlines() if line.startswith("1 passed, ")]
    assert summary.startswith(f"1 passed, 0 failed, {len(not_run)} skipped")
