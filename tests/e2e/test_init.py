"""``drasim init``: the files it writes into a driver repository, and running them."""

from __future__ import annotations

import configparser
import sys
from pathlib import Path

import pytest

from drasim.cli import main

INIT = sys.modules["drasim_test_init_repo"]


def _init(root: Path, driver_cmd: str, *extra: str) -> int:
    return main(["init", str(root), "--driver-cmd", driver_cmd, "--driver-name", "gpu.example.com", *extra])


def test_init_writes_the_config_a_scenario_and_a_workflow(
    tmp_path: Path, driver_cmd: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _init(tmp_path, driver_cmd, "--capability", "health", "--build", "make build") == 0
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(tmp_path / "pytest.ini")
    section = ini["pytest"]
    assert section["drasim_suite"] == "conformance"
    assert section["drasim_driver_cmd"] == driver_cmd
    assert section["drasim_driver_name"] == "gpu.example.com"
    assert section["drasim_capabilities"].split() == ["health"]
    assert section["testpaths"] == "scenarios"
    assert section["junit_logging"] == "all"
    assert (tmp_path / "scenarios" / "gpu-round-trip.yaml").is_file()
    assert "KNOWN_BUGS" in (tmp_path / "conftest.py").read_text()

    flow = INIT.workflow(tmp_path)
    job = flow["jobs"]["drasim"]
    assert job["strategy"]["matrix"]["kubelet"] == ["1.34", "1.35", "1.36", "1.37"]
    steps = {s.get("name", s.get("uses")): s for s in job["steps"]}
    assert steps["Build the driver"]["run"] == "make build"
    # drasim is not on PyPI: by default CI checks out its repository and builds a wheel of it.
    get = steps["Get drasim (not on PyPI; its repository)"]
    assert get["uses"].startswith("actions/checkout@")
    assert get["with"] == {"repository": "OWNER/drasim", "path": ".drasim-src"}
    assert steps["Install drasim"]["run"] == (
        "python -m pip wheel --no-deps -w .drasim-dist ./.drasim-src"
        " && python -m pip install .drasim-dist/drasim-*.whl"
    )
    keep = steps["Keep the reports"]
    assert keep["uses"].startswith("actions/upload-artifact@")
    assert keep["if"] == "always()"
    assert keep["with"]["path"] == "drasim-reports/"
    command = INIT.test_command(tmp_path, "1.35")
    assert command[1:] == [
        "-m", "pytest", "--drasim-kubelet-version", "1.35", "--junitxml", "drasim-reports/pytest-junit.xml",
    ]  # fmt: skip
    out = capsys.readouterr().out
    assert out.count("wrote ") == 4
    assert "edit .github/workflows/drasim.yml: OWNER/drasim stands for drasim's repository" in out


def test_init_names_drasims_repository_or_installs_what_it_is_told(
    tmp_path: Path, driver_cmd: str, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, wheel = tmp_path / "a", tmp_path / "b"
    repo.mkdir()
    wheel.mkdir()
    assert _init(repo, driver_cmd, "--from-repo", "acme/drasim") == 0
    steps = {s.get("name"): s for s in INIT.workflow(repo)["jobs"]["drasim"]["steps"]}
    assert steps["Get drasim (not on PyPI; its repository)"]["with"]["repository"] == "acme/drasim"
    assert "edit .github" not in capsys.readouterr().out
    assert _init(wheel, driver_cmd, "--install", "git+https://example.com/acme/drasim@v1") == 0
    steps = {s.get("name"): s for s in INIT.workflow(wheel)["jobs"]["drasim"]["steps"]}
    assert "Get drasim (not on PyPI; its repository)" not in steps
    assert steps["Install drasim"]["run"] == "python -m pip install git+https://example.com/acme/drasim@v1"
    bad = tmp_path / "c"
    bad.mkdir()
    assert _init(bad, driver_cmd, "--from-repo", "not a repo") == 2
    assert "--from-repo 'not a repo': expected OWNER/NAME" in capsys.readouterr().err
    assert list(bad.iterdir()) == []


def test_init_writes_nothing_over_existing_files_or_for_bad_input(
    tmp_path: Path, driver_cmd: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "conftest.py").write_text("# mine\n")
    assert _init(tmp_path, driver_cmd) == 2
    assert "conftest.py already exist" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conftest.py"]
    assert (tmp_path / "conftest.py").read_text() == "# mine\n"
    bad = {
        ("--driver-cmd", "./bin/d --node={nodes}"): "unknown placeholder {nodes}",
        ("--capability", "fake-plugin"): "not a capability a driver can declare",
        ("--kubelet-versions", "1.34,latest"): "expected a list such as 1.34,1.37",
    }
    for args, message in bad.items():
        root = tmp_path / "bad"
        root.mkdir()
        argv = ["init", str(root), "--driver-name", "gpu.example.com", *args]
        if "--driver-cmd" not in args:
            argv += ["--driver-cmd", driver_cmd]
        assert main(argv) == 2
        assert message in capsys.readouterr().err
        assert list(root.iterdir()) == []
        root.rmdir()
    assert main(["init", str(tmp_path / "b"), "--driver-cmd", driver_cmd, "--driver-name", "GPU!"]) == 2
    assert "expected a DNS subdomain" in capsys.readouterr().err


def test_what_init_writes_runs_against_a_driver_process(tmp_path: Path, driver_cmd: str) -> None:
    """The workflow's test step in the written repository: its own scenario and the suite's round trip."""
    assert _init(tmp_path, driver_cmd) == 0
    done = INIT.run_tests(tmp_path, "1.37", "-k", "round-trip")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr
    assert "2 passed" in done.stdout.splitlines()[-1]
    reports = tmp_path / "drasim-reports"
    names = {"pytest-junit.xml", "drasim-report.xml", "drasim-report.json", "drasim-report.html"}
    assert names <= {p.name for p in reports.iterdir()}
    assert "gpu-round-trip" in (reports / "drasim-report.json").read_text()
