"""``drasim run --suite NAME`` and ``drasim list --suite NAME``: a built-in suite by name, as pytest's
``--drasim-suite``, wherever drasim is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drasim.cli import main
from drasim.scenario import builtin_scenario_dir, load_paths

CONFORMANCE = sorted(s.name for s in load_paths([builtin_scenario_dir() / "conformance"]))


def test_list_names_the_suite_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--suite", "conformance"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == CONFORMANCE
    assert lines[-1] == f"{len(CONFORMANCE)} scenarios"


def test_run_suite_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the suite is found without a checkout-relative path
    code = main(["run", "--suite", "conformance", "-k", "round-trip", "--json", "r.json"])
    assert code == 0, capsys.readouterr().out
    names = [r["name"] for r in json.loads((tmp_path / "r.json").read_text())["results"]]
    assert names == [n for n in CONFORMANCE if "round-trip" in n]


def test_suite_and_paths_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = tmp_path / "own.yaml"
    own.write_text((builtin_scenario_dir() / "conformance" / "prepare-unprepare-round-trip.yaml").read_text())
    own.write_text(own.read_text().replace("conformance-prepare-unprepare-round-trip", "my-round-trip"))
    assert main(["list", str(own), "--suite", "conformance", "-k", "round-trip"]) == 0
    assert "2 scenarios" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["run", "list"])
def test_unknown_suite_is_bad_input(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--suite", "conformanse"]) == 2
    err = capsys.readouterr().err
    assert "--suite: unknown suite 'conformanse'; valid suites: conformance, kubelet, all" in err
    assert "Traceback" not in err


def test_list_with_no_match_exits_2_as_run_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--tag", "no-such-tag"]) == 2
    assert "drasim list: no scenario matched" in capsys.readouterr().err
    assert main(["run", "--tag", "no-such-tag"]) == 2
