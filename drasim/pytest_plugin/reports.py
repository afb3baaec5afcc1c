"""``--drasim-report-dir``: drasim's JUnit, JSON and HTML reports of what pytest ran with drasim.

That is every scenario item and every Python test that used one of drasim's fixtures
(:mod:`.pyitems`). Each puts its :class:`ScenarioResult` (JSON form) on its test report as the
``drasim_result`` attribute, which pytest-xdist ships from the workers to the controller, local
(``-n``) or remote (``--tx``) alike (and which, unlike ``user_properties``, stays out of
``--junitxml``); the controller (or a plain pytest run) gathers them here, one entry per node
id (the last phase's), and writes the files when the session ends. Workers never write. With
``--dist each`` every worker runs every test, so there the entries are per node id and worker.
A test whose worker died is an error entry (xdist's report of the crash carries no result).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from drasim.pytest_plugin.collect import RESULT_ATTRIBUTE
from drasim.pytest_plugin.options import REPORT_NAMES, Settings
from drasim.report.html import write_html
from drasim.report.json_report import write_json
from drasim.report.junit import write_junit
from drasim.report.model import FailureInfo, RunEnvironment, RunReport, ScenarioResult
from drasim.timescale import reported_time_scale

COLLECTOR_KEY = pytest.StashKey["ResultCollector"]()
CRASHED = "???"
"""The phase of the report pytest-xdist's controller makes for a test whose worker died."""


def crashed_result(report: pytest.TestReport) -> ScenarioResult:
    """An error entry for a test whose xdist worker died while running it (so its own result
    never arrived): lost entries would make a crashing driver test look like it never ran."""
    path, _, name = report.nodeid.partition("::")
    return ScenarioResult(
        name=name or path,
        status="error",
        file=path,
        failure=FailureInfo(message=str(report.longrepr)),
    )


class ResultCollector:
    """Results by node id, in the order they finished."""

    def __init__(self, settings: Settings, *, is_worker: bool = False, per_worker: bool = False) -> None:
        self.settings = settings
        self.is_worker = is_worker
        self.per_worker = per_worker
        """``--dist each``: the same test from each worker is its own entry."""
        self.results: dict[str, ScenarioResult] = {}
        self.written: list[Path] = []
        self.started = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Hook: gather what each test report carries (on the xdist controller too)."""
        self.add(report)

    def pytest_sessionfinish(self) -> None:
        """Hook: write the report directory (never on an xdist worker)."""
        if not self.is_worker:
            self.write(time.monotonic() - self.started)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Hook: say where the reports went."""
        for path in self.written:
            terminalreporter.write_line(f"drasim: wrote {path}")

    def add(self, report: pytest.TestReport) -> None:
        """Take the scenario result a test report carries (any phase; the last one wins)."""
        value = getattr(report, RESULT_ATTRIBUTE, None)
        if isinstance(value, dict):
            result = ScenarioResult.from_dict(value)
        elif report.when == CRASHED:
            result = crashed_result(report)
        else:
            return
        key = report.nodeid
        worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)
        if self.per_worker and worker:
            key = f"{key}@{worker}"
            result.name = f"{result.name}@{worker}"
        self.results[key] = result

    def write(self, duration: float) -> list[Path]:
        """Write the three reports into the report directory; returns their paths."""
        directory = self.settings.report_dir
        if directory is None or not self.results:
            return []
        directory.mkdir(parents=True, exist_ok=True)
        settings = self.settings
        report = RunReport(
            results=list(self.results.values()),
            environment=RunEnvironment(
                driver=settings.driver_cmd or "fake",
                backend=settings.backend or ("http" if settings.driver_cmd else "memory"),
                time_scale=reported_time_scale(
                    (r.time_scale for r in self.results.values() if r.time_scale is not None),
                    settings.time_scale,
                ),
                extra={"runner": "pytest", **({"suite": settings.suite} if settings.suite else {})},
            ),
        )
        report.duration = duration
        writers: dict[str, Any] = {"junit": write_junit, "json": write_json, "html": write_html}
        for kind, writer in writers.items():
            path = directory / REPORT_NAMES[kind]
            writer(report, path)
            self.written.append(path)
        return self.written
