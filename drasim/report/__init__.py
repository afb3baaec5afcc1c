"""Reports of a run: the result model and its renderers.

The runner fills :class:`ScenarioResult` / :class:`FailureInfo` (built by :data:`RESULTS`,
which its callers hand it), the callers wrap them in a :class:`RunReport` and call the
renderers: :class:`TerminalReporter` (streaming), :func:`render_junit`,
:func:`render_json` and :func:`render_html` (each with a ``write_*`` twin that
writes a file atomically). docs/reports.md shows every output.
"""

from __future__ import annotations

from drasim.report.diff import pretty, unified_diff
from drasim.report.html import render_html, write_html
from drasim.report.json_report import REPORT_VERSION, load_json_report, render_json, write_json
from drasim.report.junit import render_junit, write_junit
from drasim.report.model import (
    RESULTS,
    FailureInfo,
    ResultBuilder,
    RunEnvironment,
    RunReport,
    ScenarioResult,
    Status,
)
from drasim.report.terminal import TerminalReporter, render_terminal, summary_line

__all__ = [
    "REPORT_VERSION",
    "RESULTS",
    "FailureInfo",
    "ResultBuilder",
    "RunEnvironment",
    "RunReport",
    "ScenarioResult",
    "Status",
    "TerminalReporter",
    "load_json_report",
    "pretty",
    "render_html",
    "render_json",
    "render_junit",
    "render_terminal",
    "summary_line",
    "unified_diff",
    "write_html",
    "write_json",
    "write_junit",
]
