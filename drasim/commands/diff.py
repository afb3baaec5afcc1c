"""``drasim diff``: every scenario run twice, by the emulated kubelet and by upstream's own
DRA manager (``--kubelet upstream``), and the two journals compared step by step.

A row per scenario and release: ``agree``, ``differ`` (with the first divergence side by
side) or ``not comparable`` (with why: the scenario does not run at that kubelet version,
or it uses something only the emulation has, such as crashAt hook points). See
docs/kubelet-fidelity.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from drasim.errors import ConfigError

AGREE, DIFFER, NOT_COMPARABLE = "agree", "differ", "not comparable"
NOT_COMPARABLE_MARKERS = ("cannot run upstream",)
"""Failures of the upstream run that mean "not comparable" (a step needing a capability the
upstream kubelet lacks, crashAt's hook points, is a skip: :class:`drasim.runner.kubeletslot.Unsupported`)."""


@dataclass
class DiffRow:
    """One scenario at one release."""

    scenario: str
    release: str
    verdict: str
    why: str = ""
    emulated_status: str = ""
    upstream_status: str = ""
    divergence: dict[str, Any] | None = None
    seconds: dict[str, float] = field(default_factory=dict)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="run scenarios with the emulated and with upstream's DRA manager and compare them step by step",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, help="scenario files or directories (default: the library)"
    )
    parser.add_argument(
        "--release",
        action="append",
        default=[],
        metavar="R",
        help="upstream release to compare with (1.37, 1.35.4; repeatable; default: 1.37)",
    )
    parser.add_argument("-k", "--keyword", default="", help="only scenarios whose name contains this")
    parser.add_argument("--tag", action="append", default=[], help="only scenarios with this tag")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the rows as JSON")
    parser.add_argument(
        "--markdown", type=Path, metavar="FILE", help="write the scenario x release table as Markdown"
    )
    parser.add_argument(
        "--html", type=Path, metavar="FILE", help="write the report as one self-contained HTML page"
    )
    parser.add_argument("--scenario-timeout", type=float, default=120.0, metavar="SECONDS")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each row as it is done")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from drasim import gobuild
    from drasim.commands.list_cmd import select
    from drasim.scenario import builtin_scenario_dir, load_paths
    from drasim.upstream_kubelet.choice import upstream_binary

    releases: list[str] = []
    for text in args.release or ["1.37"]:
        try:
            releases.append(gobuild.parse_release(text).version)
        except gobuild.GoError as err:
            raise ConfigError(f"--release: {err}") from None
    for release in releases:
        upstream_binary(release, quiet=False)
    scenarios = select(
        load_paths(args.paths or [builtin_scenario_dir()]), tags=args.tag, keyword=args.keyword
    )
    if not scenarios:
        print("drasim diff: no scenario matched", file=sys.stderr)
        return 2
    rows: list[DiffRow] = []
    for release in releases:
        for scenario in scenarios:
            row = diff_scenario(scenario, release, timeout=args.scenario_timeout)
            rows.append(row)
            if args.verbose:
                print(row_line(row), flush=True)
    print(render_terminal(rows))
    _write_reports(args, rows)
    return 1 if any(r.verdict == DIFFER for r in rows) else 0


def _write_reports(args: argparse.Namespace, rows: list[DiffRow]) -> None:
    """The --json, --markdown and --html files asked for."""
    from drasim.commands.diff_html import render_html

    renderers: list[tuple[Path | None, Callable[[], str]]] = [
        (args.json, lambda: json.dumps([asdict(r) for r in rows], indent=1) + "\n"),
        (args.markdown, lambda: render_markdown(rows)),
        (args.html, lambda: render_html(rows)),
    ]
    for path, render in renderers:
        if path is None:
            continue
        try:
            path.write_text(render(), encoding="utf-8")
        except OSError as err:
            raise ConfigError(f"{path}: cannot write the report: {err.strerror or err}") from None
        print(f"wrote {path}")


def diff_scenario(scenario: Any, release: str, *, timeout: float | None = 120.0) -> DiffRow:
    """Run ``scenario`` both ways at ``release`` and compare."""
    from drasim.conformance import real_driver_skip_reason
    from drasim.report import RESULTS
    from drasim.runner.options import RunOptions
    from drasim.runner.run import run_scenario
    from drasim.upstream_kubelet.compare import first_divergence

    minor = ".".join(release.split(".")[:2])
    results = {}
    seconds = {}
    # Plain "upstream" with the release's minor as the kubelet version: a restartKubelet step
    # that changes the version starts that version's upstream binary, as it switches profiles.
    for kind in ("emulated", "upstream"):
        options = RunOptions(
            kubelet=kind,
            kubelet_version=minor,
            record_checkpoint_bytes=True,
            scenario_timeout=timeout,
        )
        started = time.monotonic()
        results[kind] = run_scenario(
            scenario, options, results=RESULTS, real_driver_skip=real_driver_skip_reason
        )
        seconds[kind] = round(time.monotonic() - started, 2)
    emulated, upstream = results["emulated"], results["upstream"]
    row = DiffRow(
        scenario.name,
        release,
        AGREE,
        emulated_status=emulated.status,
        upstream_status=upstream.status,
        seconds=seconds,
    )
    if emulated.status == "skipped":
        row.verdict, row.why = NOT_COMPARABLE, f"skipped at kubelet {minor}: {emulated.skip_reason}"
        return row
    if upstream.status == "skipped":
        row.verdict, row.why = NOT_COMPARABLE, str(upstream.skip_reason or "skipped")
        return row
    failure_text = _failure(upstream)
    if any(marker in failure_text for marker in NOT_COMPARABLE_MARKERS):
        row.verdict, row.why = NOT_COMPARABLE, failure_text.splitlines()[0]
        return row
    divergence = first_divergence(emulated.journal, upstream.journal)
    if divergence is not None:
        row.verdict, row.divergence = DIFFER, divergence.to_dict()
        row.why = f"step {divergence.step} ({divergence.step_name}): {divergence.aspect}"
    elif emulated.status != upstream.status:
        row.verdict = DIFFER
        row.why = (
            f"emulated {emulated.status}, upstream {upstream.status}: {failure_text or _failure(emulated)}"
        )
    return row


def _failure(result: Any) -> str:
    failure = getattr(result, "failure", None)
    return str(getattr(failure, "message", "") or "") if failure is not None else ""


def row_line(row: DiffRow) -> str:
    return f"{row.verdict.upper():15} {row.release:8} {row.scenario}  {row.why}"


def render_terminal(rows: list[DiffRow]) -> str:
    """The table, then each divergence side by side."""
    lines = [row_line(r) for r in rows]
    for row in rows:
        if row.divergence is None:
            continue
        d = row.divergence
        lines += [
            "",
            f"== {row.scenario} @ {row.release}: first divergence at step {d['step']} ({d['step_name']}) "
            f"in {d['aspect']}",
            f"   step: {d['step_text']}",
            f"   emulated: {json.dumps(d['emulated'])[:600]}",
            f"   upstream: {json.dumps(d['upstream'])[:600]}",
        ]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    lines += ["", ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))]
    return "\n".join(lines)


def render_markdown(rows: list[DiffRow]) -> str:
    """One line per scenario, one column per release: agree, differ (first divergence) or
    not comparable (why), as in docs/kubelet-fidelity.md."""
    releases = list(dict.fromkeys(r.release for r in rows))
    by_key = {(r.scenario, r.release): r for r in rows}
    lines = [
        "| Scenario | " + " | ".join(releases) + " |",
        "|---|" + "---|" * len(releases),
    ]
    for scenario in sorted(dict.fromkeys(r.scenario for r in rows)):
        cells = []
        for release in releases:
            row = by_key.get((scenario, release))
            cells.append("" if row is None else _cell(row))
        lines.append(f"| {scenario} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(row: DiffRow) -> str:
    if row.verdict == AGREE:
        return "agree"
    why = row.why.replace("|", "/")
    if row.verdict == NOT_COMPARABLE:
        if "crashAt" in why:
            why = "crashAt hook"
        elif "service-narrowing" in why:
            why = "kubelet.services narrowed"
        elif "scaled-reconnect" in why:
            why = "gRPC reconnect backoff is real time"
        elif "outside this scenario's kubeletVersions" in why:
            why = "version not in scenario"
        elif "cannot run upstream" in why:
            why = "kubelet < 1.34"
        return f"n/c ({why})"
    return f"**differ** ({why[:80]})"
