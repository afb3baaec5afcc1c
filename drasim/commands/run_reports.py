"""The end of ``drasim run``: the terminal table and summary, then the report files."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drasim.report import RunReport
    from drasim.report.terminal import TerminalReporter


def finish_run(report: RunReport, reporter: TerminalReporter, args: argparse.Namespace) -> None:
    """Print the table and counts and write ``--junit``/``--json``/``--html``; also called after
    Ctrl-C or SIGTERM, with what ran (the rest counted as not run)."""
    from drasim.report.html import write_html
    from drasim.report.json_report import write_json
    from drasim.report.junit import write_junit

    reporter.finish(report)
    for path, write in ((args.junit, write_junit), (args.json, write_json), (args.html, write_html)):
        if path is not None:
            write(report, path)
            print(f"wrote {path}")
