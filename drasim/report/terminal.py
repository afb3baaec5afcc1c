"""The terminal report: a line per scenario as it finishes, a table, failure details, a summary.

:class:`TerminalReporter` streams (the runner calls ``scenario_started`` and
``scenario_finished`` from any thread, then ``finish``); :func:`render_terminal`
gives the same final text as a string. Colour is used only when the stream is a
terminal and ``NO_COLOR`` is unset or empty (https://no-color.org).
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from typing import TextIO

from drasim.journal import describe_event
from drasim.report.model import RunReport, ScenarioResult

LABELS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}
_COLOURS = {"passed": "32", "failed": "31", "error": "31;1", "skipped": "33"}
TAIL_LINES = 20
"""At most this many driver output lines are shown per failure."""
NOT_RUN = ("--fail-fast:", "not run:")
"""Skip reasons of scenarios the run never started (after a failure with --fail-fast, after
Ctrl-C): counted in one line instead of a line each."""


def _not_run(result: ScenarioResult) -> bool:
    return result.status == "skipped" and result.skip_reason.startswith(NOT_RUN)


def use_colour(stream: TextIO) -> bool:
    """Whether to colour output written to ``stream``."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def summary_line(report: RunReport) -> str:
    """``3 passed, 1 failed, 0 skipped in 1.20s`` (``, N error(s)`` before ``in`` when any errored)."""
    text = (
        f"{report.count('passed')} passed, {report.count('failed')} failed, {report.count('skipped')} skipped"
    )
    errors = report.count("error")
    if errors:
        text += f", {errors} error" + ("s" if errors != 1 else "")
    return f"{text} in {report.duration:.2f}s"


def progress_line(result: ScenarioResult) -> str:
    """``PASS name (0.12s)``; a skip shows its reason instead of the time."""
    label = LABELS[result.status]
    if result.status == "skipped":
        return printable(
            f"{label} {result.name}" + (f" ({result.skip_reason})" if result.skip_reason else "")
        )
    return printable(f"{label} {result.name} ({result.duration:.2f}s)")


def results_table(results: list[ScenarioResult]) -> list[str]:
    """An aligned STATUS / SCENARIO / TIME / LOCATION table."""
    rows = [("STATUS", "SCENARIO", "TIME", "LOCATION")]
    rows += [(LABELS[r.status], r.name, f"{r.duration:.2f}s", r.location) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [
        f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]}".rstrip()
        for row in rows
    ]


def failure_lines(result: ScenarioResult) -> list[str]:
    """Everything a person needs to understand one failed or errored scenario."""
    where = f" ({result.location})" if result.location else ""
    lines = [f"___ {LABELS[result.status]} {result.name}{where} ___"]
    failure = result.failure
    if failure is None:
        return [*lines, "(no failure details were recorded)"]
    if failure.step_index is not None or failure.step_text:
        index = "?" if failure.step_index is None else str(failure.step_index)
        lines.append(f"Failing step {index}: {failure.step_text}".rstrip(": "))
    lines += failure.message.splitlines() or [""]
    if failure.diff:
        lines.append("Expected vs actual:")
        lines += _indent(failure.diff.splitlines())
    if failure.similar_events:
        lines.append("Similar events:")
        lines += _indent([describe_event(e) for e in failure.similar_events])
    if failure.journal_tail:
        lines.append("Journal tail:")
        lines += _indent([describe_event(e) for e in failure.journal_tail])
    for title, text in (("Driver stdout", result.stdout), ("Driver stderr", result.stderr)):
        if text.strip():
            lines.append(f"{title} (last lines):")
            lines += _indent(text.splitlines()[-TAIL_LINES:])
    if failure.reproduce:
        lines.append(f"Reproduce: {failure.reproduce}")
    return lines


def printable(text: str) -> str:
    """``text`` with control characters (ANSI escapes from a driver, say) shown as ``\\xNN``."""
    return "".join(ch if ch == "\t" or (ch >= " " and ch != "\x7f") else f"\\x{ord(ch):02x}" for ch in text)


def _indent(lines: list[str]) -> list[str]:
    return ["  " + line for line in lines]


def report_lines(report: RunReport, *, verbose: bool = False, quiet: bool = False) -> list[str]:
    """The final part of the terminal report: table, failure details, summary line.

    The table lists the scenarios that did not pass (each pass already had its progress line),
    every scenario with ``verbose``; scenarios never started are one line after it. ``quiet``
    leaves out the table.
    """
    rows = [r for r in report.results if verbose or (r.status != "passed" and not _not_run(r))]
    lines = ["", *results_table(rows)] if rows and not quiet else []
    not_run = [r for r in report.results if _not_run(r)]
    if not_run and not verbose and not quiet:
        lines += ["", f"{len(not_run)} not run ({not_run[0].skip_reason})"]
    for result in report.results:
        if result.status in ("failed", "error"):
            lines += ["", *failure_lines(result)]
    env = report.environment
    lines += [
        "",
        f"drasim {report.drasim_version}: driver={env.driver} backend={env.backend} "
        f"time-scale={_time_scales(report)}"
        + "".join(f" {key}={value}" for key, value in sorted(env.extra.items())),
        summary_line(report),
    ]
    return [printable(line) for line in lines]


def _time_scales(report: RunReport) -> str:
    """The run's time scale; when its scenarios ran at different ones, each with its count
    (most used first), e.g. ``0.01 (100 scenarios), 0.05 (1)``."""
    counts = Counter(r.time_scale for r in report.results if r.time_scale is not None)
    if len(counts) < 2:
        return f"{report.environment.time_scale:g}"
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    (first, many), rest = ranked[0], ranked[1:]
    return ", ".join([f"{first:g} ({many} scenarios)", *(f"{scale:g} ({n})" for scale, n in rest)])


def render_terminal(report: RunReport, with_progress: bool = True, *, verbose: bool = False) -> str:
    """The whole terminal report as plain text (no colour), as :class:`TerminalReporter` streams it."""
    lines = [progress_line(r) for r in report.results if not _not_run(r)] if with_progress else []
    return "\n".join(lines + report_lines(report, verbose=verbose)) + "\n"


class TerminalReporter:
    """Streams the terminal report to ``stream``; safe to call from several runner threads."""

    def __init__(
        self,
        stream: TextIO | None = None,
        colour: bool | None = None,
        verbose: bool = False,
        quiet: bool = False,
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.colour = use_colour(self.stream) if colour is None else colour
        self.verbose = verbose
        self.quiet = quiet  # no progress lines: only failures and the summary
        self._lock = threading.Lock()

    def scenario_started(self, name: str, location: str = "") -> None:
        """A scenario began; printed only when ``verbose`` (lines would interleave under ``-j``)."""
        if self.verbose:
            self._write(f"RUN  {name}" + (f" ({location})" if location else ""))

    def scenario_finished(self, result: ScenarioResult) -> None:
        """Print the scenario's progress line (none with ``quiet``, none for a scenario never started)."""
        if self.quiet or _not_run(result):
            return
        line = progress_line(result)
        if self.colour:
            label = LABELS[result.status]
            line = self._paint(label, result.status) + line[len(label) :]
        self._write(line)
        if "workspace" in result.artifacts:  # kept with --keep-workspace: say where
            self._write(printable(f"     workspace: {result.artifacts['workspace']}"))

    def finish(self, report: RunReport) -> None:
        """Print the table, the failure details and the summary line."""
        lines = report_lines(report, verbose=self.verbose, quiet=self.quiet)
        if self.colour:
            status = "passed" if report.ok else "failed"
            lines[-1] = self._paint(lines[-1], status)
        self._write("\n".join(lines))

    def _paint(self, text: str, status: str) -> str:
        return f"\x1b[{_COLOURS[status]}m{text}\x1b[0m"

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text + "\n")
            self.stream.flush()
