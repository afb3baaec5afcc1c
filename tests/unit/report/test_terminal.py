"""The terminal report: progress lines, table, failure details, summary line."""

from __future__ import annotations

import io
import re

from drasim.report import RunReport, TerminalReporter, render_terminal, summary_line
from drasim.report.model import ScenarioResult

SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(, (\d+) skipped)?")


class TtyStream(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_summary_line_matches_the_documented_pattern(report: RunReport):
    line = summary_line(report)
    assert line == "2 passed, 1 failed, 1 skipped, 1 error in 1.25s"
    match = SUMMARY.match(line)
    assert match
    assert match.group(1, 2, 4) == ("2", "1", "1")
    empty = RunReport(duration=0.0)
    assert summary_line(empty) == "0 passed, 0 failed, 0 skipped in 0.00s"
    errors = RunReport(results=[ScenarioResult(name=n, status="error") for n in "ab"])
    assert summary_line(errors) == "0 passed, 0 failed, 0 skipped, 2 errors in 0.00s"


def test_streaming_reporter_prints_progress_then_table_failures_and_summary(report: RunReport, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    stream = io.StringIO()
    reporter = TerminalReporter(stream)
    assert reporter.colour is False  # not a tty
    for result in report.results:
        reporter.scenario_started(result.name, result.location)
        reporter.scenario_finished(result)
    reporter.finish(report)
    lines = stream.getvalue().splitlines()
    assert lines[:5] == [
        "PASS prepare-unprepare-round-trip (0.12s)",
        "FAIL unprepare-is-retried (0.50s)",
        "ERROR driver-crash (0.05s)",
        "SKIP health-stream (driver does not advertise the health service)",
        "PASS evil <script>alert(1)</script> (0.01s)",
    ]
    table = lines[6:12]
    assert table[0].split() == ["STATUS", "SCENARIO", "TIME", "LOCATION"]
    assert table[2].split() == [
        "FAIL",
        "unprepare-is-retried",
        "0.50s",
        "scenarios/kubelet/unprepare-retry.yaml:3",
    ]
    assert table[4].split() == ["SKIP", "health-stream", "0.00s", "scenarios/conformance/health.yaml:1"]
    # times are right-aligned under the TIME header
    time_end = table[0].index("TIME") + len("TIME")
    assert all(re.search(r"\d\.\d\ds$", line[:time_end]) for line in table[1:])
    text = stream.getvalue()
    failure = text[text.index("___ FAIL unprepare-is-retried") : text.index("___ ERROR")]
    assert failure.splitlines() == [
        "___ FAIL unprepare-is-retried (scenarios/kubelet/unprepare-retry.yaml:3) ___",
        "Failing step 2: delete_pod p1",
        "expected 1 NodeUnprepareResources call to gpu.example.com for claim default/gpu after step 2 "
        "(delete_pod p1); found 0 that succeeded.",
        "Expected vs actual:",
        "  --- expected",
        "  +++ actual",
        "  @@ -1,3 +1,3 @@",
        "   NodeUnprepareResources:",
        "     calls: 1",
        "  -  code: OK",
        "  +  code: Unavailable",
        "Similar events:",
        "  #10 t=0.004 rpc NodeUnprepareResources gpu.example.com claims=[default/gpu] -> Unavailable "
        "rpc error: code = Unavailable desc = injected (1.5ms)",
        "Journal tail:",
        "  #9 t=0.002 fault rpc: NodeUnprepareResources -> Unavailable",
        "  #10 t=0.004 rpc NodeUnprepareResources gpu.example.com claims=[default/gpu] -> Unavailable "
        "rpc error: code = Unavailable desc = injected (1.5ms)",
        "  #11 t=0.004 kubelet UnprepareResources pod=default/p1 error=NodeUnprepareResources failed",
        "Driver stderr (last lines):",
        "  E1202 plugin: unprepare failed",
        "Reproduce: drasim run scenarios/kubelet/unprepare-retry.yaml -k unprepare-is-retried",
        "",
    ]
    # a driver's escape sequences are shown, not interpreted
    assert "  panic: boom\\x1b[31m" in lines
    assert "\x1b" not in text
    assert lines[-2] == "drasim 0.1.0: driver=fake:gpu.example.com backend=memory time-scale=0.01"
    assert lines[-1] == "2 passed, 1 failed, 1 skipped, 1 error in 1.25s"
    assert "___ PASS" not in text
    assert "___ SKIP" not in text


def test_verbose_reporter_announces_starts():
    stream = io.StringIO()
    TerminalReporter(stream, verbose=True).scenario_started("a", "x.yaml:1")
    assert stream.getvalue() == "RUN  a (x.yaml:1)\n"


def test_colour_only_on_a_tty_without_no_color(report: RunReport, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = TtyStream()
    reporter = TerminalReporter(tty)
    assert reporter.colour is True
    reporter.scenario_finished(report.results[1])
    reporter.finish(report)
    out = tty.getvalue()
    assert out.startswith("\x1b[31mFAIL\x1b[0m unprepare-is-retried (0.50s)\n")
    assert out.rstrip("\n").endswith("\x1b[31m2 passed, 1 failed, 1 skipped, 1 error in 1.25s\x1b[0m")
    monkeypatch.setenv("NO_COLOR", "1")
    assert TerminalReporter(TtyStream()).colour is False


def test_render_terminal_equals_streamed_output(report: RunReport):
    stream = io.StringIO()
    reporter = TerminalReporter(stream, colour=False)
    for result in report.results:
        reporter.scenario_finished(result)
    reporter.finish(report)
    assert render_terminal(report) == stream.getvalue()


def test_failure_without_details_still_reports():
    report = RunReport(results=[ScenarioResult(name="odd", status="failed")], duration=0.1)
    text = render_terminal(report, with_progress=False)
    assert "___ FAIL odd ___\n(no failure details were recorded)\n" in text
    assert text.endswith("0 passed, 1 failed, 0 skipped in 0.10s\n")


def test_header_lists_each_time_scale_when_scenarios_ran_at_different_ones():
    from drasim.report.model import RunEnvironment

    def run(scales: list[float]) -> str:
        results = [ScenarioResult(name=f"s{i}", status="passed", time_scale=s) for i, s in enumerate(scales)]
        report = RunReport(
            results=results,
            environment=RunEnvironment(driver="fake", backend="memory", time_scale=max(scales)),
        )
        return render_terminal(report).splitlines()[-2]

    assert run([0.01, 0.01]).endswith(" time-scale=0.01")
    assert run([0.01, 0.05, 0.01, 0.01]).endswith(" time-scale=0.01 (3 scenarios), 0.05 (1)")
    assert run([0.5, 0.1, 0.1, 0.5, 1]).endswith(" time-scale=0.1 (2 scenarios), 0.5 (2), 1 (1)")


def test_each_result_records_the_scale_it_ran_at():
    """`--time-scale` overrides every scenario's own scale, so the results (and the header) say so."""
    from drasim.report.model import RESULTS
    from drasim.runner.options import RunOptions
    from drasim.runner.run import run_scenario
    from drasim.scenario.loader import load_text

    (scenario,) = load_text(
        """
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: scale, description: The scale a result records.}
spec:
  driver: {fake: {name: gpu.example.com}}
  kubelet: {timeScale: 0.05}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
"""
    )
    assert run_scenario(scenario, results=RESULTS).time_scale == 0.05
    overridden = run_scenario(scenario, RunOptions(time_scale=0.02), results=RESULTS)
    assert overridden.status == "passed"
    assert overridden.time_scale == 0.02
