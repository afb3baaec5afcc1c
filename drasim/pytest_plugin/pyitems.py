"""Python tests that use drasim's fixtures: their failure details and their report entries.

A failing test that used ``drasim_node`` (or ``drasim_run``) gets what a failing YAML scenario
shows, as sections of its pytest report: the failing step, the journal tail, the driver's
stdout/stderr and a command that runs just this test again. Every test that used a drasim
fixture also gets a :class:`~drasim.report.model.ScenarioResult` (pass/fail/skip, duration,
the same failure details, the node's whole journal) on its report, which the report directory
collects like a scenario's (:mod:`.reports`).

The fixtures note what they made in :func:`record_of` (the item's stash); the plugin's
``pytest_runtest_makereport`` hook calls :func:`annotate` for each phase's report.
"""

from __future__ import annotations

import inspect
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from drasim.report.model import FailureInfo, ScenarioResult, Status
from drasim.report.terminal import TAIL_LINES, failure_lines, printable

if TYPE_CHECKING:
    from drasim.pytest_plugin.harness import DrasimNode, FailedStep
    from drasim.pytest_plugin.options import Settings

JOURNAL_TAIL = 15
"""Journal events a failure shows (as many as a failing scenario's)."""
_DRASIM = Path(__file__).resolve().parents[1]
"""The drasim package: a failure raised inside it is not located there (only in a test's own code)."""
SECTION_PREFIX = "drasim "
"""Every section this module adds is titled ``drasim ...``; with ``-o junit_logging=...`` they are
the test's captured stdout too, so that pytest's ``--junitxml`` has them in ``<system-out>``."""


@dataclass
class FixtureRecord:
    """What drasim's fixtures made for one test item."""

    nodes: list[DrasimNode] = field(default_factory=list)
    runs: list[ScenarioResult] = field(default_factory=list)
    """Results of ``drasim_run`` calls, in order."""
    kubelet_version: str | None = None
    setup_duration: float = 0.0
    reported: ScenarioResult | None = None
    """The result put on a report already (a teardown error does not replace a call's failure)."""


RECORD_KEY = pytest.StashKey[FixtureRecord]()


def record_of(item: pytest.Item) -> FixtureRecord:
    """The item's record (made on first use)."""
    record = item.stash.get(RECORD_KEY, None)
    if record is None:
        record = item.stash[RECORD_KEY] = FixtureRecord()
    return record


def uses_drasim(item: pytest.Item, fixture_names: frozenset[str]) -> bool:
    """Whether ``item`` is a Python test that uses one of drasim's fixtures."""
    return bool(fixture_names.intersection(getattr(item, "fixturenames", ())))


def annotate(
    item: pytest.Item,
    report: pytest.TestReport,
    error: BaseException | None,
    settings: Settings,
    attribute: str,
) -> None:
    """Add the failure sections to a failing phase's report and the drasim result (as
    ``attribute``) to the report that decides the test's outcome: setup when it did not pass,
    call, teardown when it failed after a pass. ``error``: what the phase raised."""
    record = item.stash.get(RECORD_KEY, None) or FixtureRecord()
    if report.when == "setup":
        record.setup_duration = report.duration
    step = failing_step(record, error)
    if report.failed:
        sections = failure_sections(item, record, settings, step)
        report.sections.extend(sections)
        if str(item.config.getini("junit_logging")) not in ("", "no"):
            # pytest's --junitxml writes <system-out> from the last (teardown) report's
            # "Captured stdout" sections, which it gathers from the item's sections.
            text = "".join(f"{title}:\n{body}" for title, body in sections)
            item.add_report_section(report.when, "stdout", text)
    passed_before = record.reported is None or record.reported.status == "passed"
    decides = (
        (report.when == "setup" and not report.passed)
        or report.when == "call"
        or (report.when == "teardown" and report.failed and passed_before)
    )
    if decides:
        result = python_result(item, report, record, settings, step)
        record.reported = result
        setattr(report, attribute, result.to_dict())


def failing_step(record: FixtureRecord, error: BaseException | None) -> FailedStep | None:
    """The node step whose failure ``error`` is (None when the test failed for another reason)."""
    if error is None:
        return None
    return next((n.failed_step for n in record.nodes if n.failed_step and n.failed_step.error is error), None)


# ------------------------------------------------------------------ sections
def failure_sections(
    item: pytest.Item, record: FixtureRecord, settings: Settings, step: FailedStep | None = None
) -> list[tuple[str, str]]:
    """(title, text) pairs for a failing report: the failing step (``step``), the journal tail,
    the driver's output, the scenarios ``drasim_run`` ran that did not pass, a reproduce line."""
    sections: list[tuple[str, str]] = []
    if step is not None:
        lines = [f"Failing step {step.index}: {step.text}", *step.message.splitlines()]
        sections.append((f"{SECTION_PREFIX}failing step", _text(lines)))
    several = len(record.nodes) > 1
    for number, node in enumerate(record.nodes, start=1):
        label = f" (node {number})" if several else ""
        tail = _tail_lines(node.journal.tail(JOURNAL_TAIL))
        if tail:
            sections.append((f"{SECTION_PREFIX}journal tail{label}", _text(tail)))
        stdout, stderr = node.driver_output()
        for kind, text in (("stdout", stdout), ("stderr", stderr)):
            if text.strip():
                lines = text.splitlines()[-TAIL_LINES:]
                sections.append((f"{SECTION_PREFIX}driver {kind}{label} (last lines)", _text(lines)))
    for result in record.runs:
        if result.status in ("failed", "error"):
            sections.append((f"{SECTION_PREFIX}scenario {result.name}", _text(failure_lines(result)[1:])))
    sections.append((f"{SECTION_PREFIX}reproduce", reproduce_command(item, settings) + "\n"))
    return sections


def _text(lines: list[str]) -> str:
    return "".join(printable(line) + "\n" for line in lines)


def _tail_lines(events: list[dict[str, Any]]) -> list[str]:
    from drasim.journal import describe_event

    return [describe_event(event) for event in events]


def reproduce_command(item: pytest.Item, settings: Settings) -> str:
    """``python -m pytest '<node id>' --drasim-...``: this test alone, with every drasim option that
    changes its outcome (the driver, its capabilities, the time scale, the kubelet, the backend).

    Run from pytest's rootdir (the node id is relative to it); a ``cd`` says so when pytest was
    started elsewhere.
    """
    words = ["python", "-m", "pytest", item.nodeid]
    if settings.driver_cmd:
        words += ["--drasim-driver-cmd", settings.driver_cmd]
        if settings.driver_name:
            words += ["--drasim-driver-name", settings.driver_name]
        for capability in sorted(settings.declared_capabilities):
            words += ["--drasim-capability", capability]
        if not settings.proxy:
            words.append("--drasim-no-proxy")
    if settings.profile_source:
        words += ["--drasim-kubelet-profile", settings.profile_source]
    single = [
        ("--drasim-time-scale", None if settings.time_scale is None else repr(settings.time_scale)),
        ("--drasim-kubelet-version", ",".join(settings.kubelet_versions) or None),
        ("--drasim-kubelet", None if settings.kubelet == "emulated" else settings.kubelet),
        ("--drasim-backend", settings.backend),
        ("--drasim-kubeconfig", None if settings.kubeconfig is None else str(settings.kubeconfig)),
        ("--drasim-context", settings.context),
    ]
    words += [word for flag, value in single if value for word in (flag, value)]
    if settings.fsync:
        words.append("--drasim-fsync")
    command = shlex.join(words)
    rootdir = Path(item.config.rootpath)
    if Path(item.config.invocation_params.dir).resolve() != rootdir.resolve():
        command = f"cd {shlex.quote(str(rootdir))} && {command}"
    return command


# ------------------------------------------------------------------ the report entry
def python_result(
    item: pytest.Item,
    report: pytest.TestReport,
    record: FixtureRecord,
    settings: Settings,
    step: FailedStep | None = None,
) -> ScenarioResult:
    """The test as a report entry: its outcome, where it is, how long it took, and on failure
    the same details a scenario's failure has."""
    path, line, _ = item.reportinfo()
    doc = inspect.getdoc(getattr(item, "obj", None)) or ""
    node = record.nodes[0] if record.nodes else None
    result = ScenarioResult(
        name=item.nodeid.split("::", 1)[-1],
        status=_status(report),
        file=str(path),
        line=(line or 0) + 1,
        description=doc.splitlines()[0] if doc else "",
        tags=["python"],
        duration=report.duration + (record.setup_duration if report.when != "setup" else 0.0),
        kubelet_version=record.kubelet_version or "",
    )
    if node is not None:
        result.time_scale = node.scenario.spec.kubelet.time_scale
        result.journal = node.journal.events()
        result.stdout, result.stderr = node.driver_output()
    elif record.runs:
        last = record.runs[-1]
        result.time_scale = last.time_scale
        result.journal, result.stdout, result.stderr = last.journal, last.stdout, last.stderr
    if result.status == "skipped":
        result.skip_reason = _skip_reason(report)
    elif result.status in ("failed", "error"):
        result.failure = _failure(item, report, record, settings, step)
    return result


def _status(report: pytest.TestReport) -> Status:
    if report.skipped:
        return "skipped"
    if report.passed:
        return "passed"
    return "failed" if report.when == "call" else "error"


def _skip_reason(report: pytest.TestReport) -> str:
    wasxfail = getattr(report, "wasxfail", None)
    if wasxfail is not None:
        return f"xfail: {wasxfail}" if wasxfail else "xfail"
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _failure(
    item: pytest.Item,
    report: pytest.TestReport,
    record: FixtureRecord,
    settings: Settings,
    step: FailedStep | None,
) -> FailureInfo:
    crash = getattr(report.longrepr, "reprcrash", None)
    if step is not None:
        message = step.message  # the step's own words; the diff comes from expected/actual
    else:
        message = str(getattr(crash, "message", "") or "").strip()
        if not message:
            lines = report.longreprtext.strip().splitlines()
            message = lines[-1] if lines else report.outcome
        message = message.removeprefix("Failed: ")  # pytest.fail's
    where = str(getattr(crash, "path", "") or "")
    if where and not Path(where).resolve().is_relative_to(_DRASIM):
        message += f"\n(at {where}:{getattr(crash, 'lineno', '?')})"
    if report.when != "call":
        message = f"{report.when}: {message}"
    node = record.nodes[0] if record.nodes else None
    tail = node.journal.tail(JOURNAL_TAIL) if node is not None else []
    if node is None and record.runs and record.runs[-1].failure is not None:
        tail = record.runs[-1].failure.journal_tail
    return FailureInfo.build(
        message,
        step_index=step.index if step else None,
        step_text=step.text if step else "",
        expected=step.expected if step else None,
        actual=step.actual if step else None,
        similar_events=step.similar if step else None,
        journal_tail=tail,
        reproduce=reproduce_command(item, settings),
    )
