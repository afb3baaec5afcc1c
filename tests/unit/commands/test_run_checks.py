"""``drasim run`` refuses bad driver and report options at start: exit 2, one line, nothing run,
no report half-written; the pytest plugin gives the same message for the same mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drasim.cli import main

ROUND_TRIP = ["--suite", "conformance", "-k", "round-trip"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--driver-cmd", "drv --node {node}", "--inject-bug", "non-idempotent"],
            "--inject-bug switches a bug on in drasim's fake plugin, and with --driver-cmd no fake "
            "plugin runs: the bug would be ignored",
        ),
        (["--driver-name", "x.example.com"], "--driver-name needs --driver-cmd"),
        (
            ["--capability", "health"],
            "--capability says what the driver under test can do: it needs --driver-cmd",
        ),
        (
            ["--driver-cmd", "drv --node {nodename}"],
            "--driver-cmd: driver command: unknown placeholder {nodename} in '{nodename}'",
        ),
        (["--driver-cmd", "drv 'unclosed"], "--driver-cmd: cannot split"),
        (["--driver-cmd", "drv", "--capability", "Has Space"], "invalid capability name 'Has Space'"),
    ],
)
def test_bad_driver_options_exit_2_before_running(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *ROUND_TRIP, *args]) == 2
    out, err = capsys.readouterr()
    assert message in err
    assert "Traceback" not in err
    assert "passed" not in out  # nothing ran
    assert "FAIL" not in out


def test_bad_placeholder_message_is_the_pytest_plugins(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--drasim-driver-cmd", "drv --node {nodename}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--drasim-driver-cmd: driver command: unknown placeholder {nodename}" in result.stderr.str()


@pytest.mark.parametrize("flag", ["--junit", "--json", "--html"])
@pytest.mark.parametrize("where", ["directory", "missing-parent", "proc"])
def test_unwritable_report_path_exits_2_at_start(
    flag: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = {
        "directory": tmp_path,
        "missing-parent": tmp_path / "no" / "such" / "report",
        "proc": Path("/proc/drasim-report"),
    }[where]
    assert main(["run", *ROUND_TRIP, flag, str(path)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"drasim run: error: {flag} {path}: "), err
    assert "Traceback" not in err
    assert "passed" not in out  # found before the run, not after it
    assert sorted(tmp_path.iterdir()) == []  # nothing left behind


def test_existing_report_file_is_checked_without_changing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.json"
    old.write_text("previous run")
    fresh = tmp_path / "fresh.xml"
    assert (
        main(
            ["run", *ROUND_TRIP, "--driver-cmd", "drv {nodename}", "--json", str(old), "--junit", str(fresh)]
        )
        == 2
    )
    assert old.read_text() == "previous run"
    assert not fresh.exists()
    assert main(["run", *ROUND_TRIP, "--json", str(old), "--junit", str(fresh)]) == 0
    assert old.read_text().startswith("{")
    assert fresh.read_text().startswith("<?xml")


def test_quiet_run_prints_only_the_summary_when_green(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *ROUND_TRIP, "-q"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("1 passed, 0 failed, 0 skipped in ")
    assert "PASS" not in out


def test_green_run_prints_each_pass_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "conformance", "-k", "round-trip"]) == 0
    out = capsys.readouterr().out
    assert out.count("conformance-prepare-unprepare-round-trip") == 1


def test_report_headers_say_which_bug_was_injected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html, js = tmp_path / "r.html", tmp_path / "r.json"
    main(["run", *ROUND_TRIP, "--inject-bug", "non-idempotent", "--html", str(html), "--json", str(js)])
    header = [line for line in capsys.readouterr().out.splitlines() if line.startswith("drasim ")]
    assert header, "no header line"
    assert header[0].endswith(" injectedBugs=non-idempotent")
    assert '<td id="run-bugs">non-idempotent</td>' in html.read_text()
    assert '<p class="bugs" id="bug-banner"><b>Bugs injected</b>: non-idempotent,' in html.read_text()
    assert '"injectedBugs": "non-idempotent"' in js.read_text()


def test_report_header_names_the_backend_a_scenario_pins(tmp_path: Path) -> None:
    text = (
        Path(__file__).resolve().parents[3]
        / "scenarios"
        / "conformance"
        / "prepare-unprepare-round-trip.yaml"
    ).read_text()
    pinned = tmp_path / "pinned.yaml"
    pinned.write_text(text.replace("spec:\n", "spec:\n  backend: http\n", 1))
    js = tmp_path / "r.json"
    assert main(["run", str(pinned), "-q", "--json", str(js)]) == 0
    environment = json.loads(js.read_text())["environment"]
    assert environment["backend"] == "http"
    assert environment["driver"] == "fake"
