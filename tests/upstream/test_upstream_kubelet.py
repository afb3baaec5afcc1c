"""The upstream kubelet tier: upstream's own DRA manager runs the conformance suite beside the
emulation and the two must agree step by step (``drasim diff``).

Needs Go (tests/conftest.py's pytest_configure builds ``upstream/cmd/kubelet`` for the module's
own release, the newest, with the other Go programs, once; ``go_program`` hands it out).
Without Go every test here is skipped with the reason; the missing-Go error path itself is
tested without Go.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from drasim import gobuild
from drasim.scenario import builtin_scenario_dir, load_paths

ROOT = Path(__file__).resolve().parents[2]
NEWEST = gobuild.NEWEST_PATCH[max(gobuild.NEWEST_PATCH, key=lambda v: int(v.split(".")[1]))]
CONFORMANCE = sorted(load_paths([builtin_scenario_dir() / "conformance"]), key=lambda s: s.name)


@pytest.fixture(scope="session")
def upstream_kubelet(go_program: Callable[[str], Path]) -> Path:
    """The upstream kubelet for the module's own release (tests/conftest.py built it before the
    tests, with every Go program; skipped with the reason without Go)."""
    assert gobuild.default_release().version == NEWEST, "the Go module pins the newest release"
    return go_program("kubelet")


@pytest.mark.timeout(900)
@pytest.mark.parametrize("scenario", CONFORMANCE, ids=lambda s: s.name)
def test_conformance_agrees_with_upstream(upstream_kubelet: Path, scenario: object) -> None:
    from drasim.commands.diff import AGREE, NOT_COMPARABLE, diff_scenario, render_terminal

    row = diff_scenario(scenario, NEWEST, timeout=90.0)
    assert row.verdict in (AGREE, NOT_COMPARABLE), render_terminal([row])
    if row.verdict == NOT_COMPARABLE:
        assert "crashAt" in row.why or "skipped" in row.why, row.why


@pytest.mark.timeout(900)
def test_go_vet_and_go_test_of_the_program(upstream_kubelet: Path) -> None:
    out = gobuild.check("kubelet", NEWEST)
    assert "ok" in out


def test_without_go_run_exits_2_naming_go(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "drasim",
            "run",
            "--kubelet",
            "upstream",
            str(builtin_scenario_dir() / "conformance"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Go is not installed" in done.stderr
    assert "--kubelet upstream" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_kubelet_value_exits_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "drasim",
            "run",
            "--kubelet",
            "upstream@1.20",
            str(builtin_scenario_dir() / "conformance"),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "1.34 and newer" in done.stderr


@pytest.mark.timeout(300)
def test_pytest_plugin_runs_the_suite_on_upstream(upstream_kubelet: Path, tmp_path: Path) -> None:
    """``--drasim-kubelet upstream`` (the option table's row): the conformance items run on
    upstream's manager; the crashAt one is skipped as not comparable."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "--drasim-suite",
            "conformance",
            "--drasim-kubelet",
            "upstream",
            "-k",
            "registration or idempotent",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=tmp_path,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed, 1 skipped" in done.stdout, done.stdout
    assert "not comparable: restartKubelet with crashAt" in done.stdout, done.stdout


@pytest.mark.timeout(300)
def test_html_report_of_a_real_diff_shows_the_first_divergence_side_by_side(
    upstream_kubelet: Path, tmp_path: Path
) -> None:
    """Both kubelets run a scenario for real; upstream's journal loses its last checkpoint write
    (as if it had not written), and the page shows that write next to the emulation's."""
    from drasim.commands.diff import DIFFER, DiffRow, diff_scenario
    from drasim.commands.diff_html import render_html
    from drasim.conformance import real_driver_skip_reason
    from drasim.report import RESULTS
    from drasim.runner.options import RunOptions
    from drasim.runner.run import run_scenario
    from drasim.upstream_kubelet.compare import first_divergence

    del upstream_kubelet
    scenario = next(s for s in CONFORMANCE if s.name == "conformance-shared-claim")
    journals = {}
    for kind in ("emulated", "upstream"):
        options = RunOptions(kubelet=kind, kubelet_version="1.37", record_checkpoint_bytes=True)
        result = run_scenario(scenario, options, results=RESULTS, real_driver_skip=real_driver_skip_reason)
        assert result.status == "passed", result.failure
        journals[kind] = list(result.journal)
    upstream = journals["upstream"]
    last_write = max(i for i, e in enumerate(upstream) if e.get("kind") == "checkpoint" and "bytes" in e)
    divergence = first_divergence(journals["emulated"], upstream[:last_write] + upstream[last_write + 1 :])
    assert divergence is not None
    assert divergence.aspect == "writes"
    assert divergence.upstream["checkpoint"] is None
    hostile = "<script>alert(1)</script>"
    agree = diff_scenario(scenario, NEWEST, timeout=90.0)
    differ = DiffRow(
        hostile, NEWEST, DIFFER, why=f"step {divergence.step}: writes", divergence=divergence.to_dict()
    )
    page = render_html([agree, differ])
    (tmp_path / "diff.html").write_text(page, encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page  # no script of ours, and the scenario's text escaped
    assert html_escape(hostile) in page
    assert "http://" not in page
    assert "https://" not in page
    assert ">agree<" in page
    assert f"first divergence at step {divergence.step}" in page
    assert "<h3>emulated</h3>" in page
    assert "<h3>upstream</h3>" in page
    assert "&quot;write&quot;: " + str(divergence.emulated["write"]) in page  # JSON, escaped
    assert "ClaimInfoStateList" in page  # the emulated side shows the write upstream lacks


def html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)
