"""``drasim validate`` and ``drasim list`` through drasim.cli.main."""

from __future__ import annotations

from drasim.cli import main

from .conftest import HEADER

GOOD = HEADER + "  steps: [{reconcile: {}}]\n"


def test_validate_valid_files_prints_a_count(write, capsys):
    write(GOOD, "a/one.yaml")
    path = write(GOOD.replace("name: t", "name: u"), "a/two.yml")
    assert main(["validate", str(path.parent)]) == 0
    out, err = capsys.readouterr()
    assert out == "2 scenarios valid in 2 files\n"
    assert err == ""


def test_validate_prints_every_problem_and_exits_2(write, capsys):
    path = write(GOOD.replace("reconcile", "reconcil").replace("name: t", "name: T"))
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"{path}:11:12: spec.steps[0]: unknown step 'reconcil'. Did you mean 'reconcile'?",
        "1 problem found",
    ]


def test_validate_reports_a_missing_path(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read file: no such file or directory" in capsys.readouterr().err


def test_validate_without_paths_checks_the_builtin_library(capsys):
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    count = int(out.split()[0])
    assert count >= 40


def test_list_shows_name_tags_and_description(write, capsys):
    path = write(
        GOOD.replace("  description: A test scenario.\n", "  description: Proves x.\n  tags: [a, b]\n")
    )
    assert main(["list", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["t  a,b  Proves x.", "1 scenario"]


def test_list_filters_by_tag_and_keyword(capsys):
    assert main(["list", "--tag", "conformance", "-k", "round-trip"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "1 scenario"
    assert lines[0].startswith("conformance-prepare-unprepare-round-trip  ")


def test_list_of_invalid_files_is_a_usage_error(write, capsys):
    path = write(GOOD.replace("reconcile", "reconcil"))
    assert main(["list", str(path)]) == 2
    assert "unknown step 'reconcil'" in capsys.readouterr().err
