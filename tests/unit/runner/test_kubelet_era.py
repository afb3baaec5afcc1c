"""Run as kubelet 1.31, which reads supported_versions as version numbers, a fake driver left at
the default services advertises what a driver of that era did (a version number), so the library
runs instead of failing to register; drivers a scenario configured, and pinned scenarios, are kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drasim.cli import main


def test_conformance_suite_as_kubelet_1_31(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    code = main(["run", "--suite", "conformance", "--kubelet-version", "1.31", "-q", "--json", str(out)])
    assert code == 0, capsys.readouterr().out
    results = json.loads(out.read_text())["results"]
    passed = [r for r in results if r["status"] == "passed"]
    assert len(passed) >= 10
    assert all(r["name"].endswith("[kubelet-1.31]") for r in results)
    skipped = [r for r in results if r["status"] == "skipped"]
    assert all(r["skipReason"] for r in skipped)


def test_a_pinned_scenario_keeps_its_driver(capsys: pytest.CaptureFixture[str]) -> None:
    # It shows kubelet 1.31 refusing today's service names; the era default must not hide that.
    code = main(
        ["run", "--suite", "kubelet", "-k", "versions-kubelet-1-31-rejects-service-names",
         "--kubelet-version", "1.31", "-q"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().out
