"""The HTML report: one self-contained file a person opens in a browser.

No external assets: inline CSS, ``<details>`` for expanding, one inline script (the filter,
:mod:`drasim.report.html_filter`) and a Content-Security-Policy that forbids remote loads and
every script but that one (allowed by its hash), so even a journal with hostile content cannot
run code. Every value from the model is passed through :func:`html.escape`.

The header (:mod:`drasim.report.html_header`) says what the run ran against and which bugs it
injected. Scenario ``N`` of the page is the section ``scenario-N``; its journal event ``S`` is
the diagram row ``sN-eS``, which the event numbers in the failure box link to. The diagram's
left gutter is its time axis (seconds since the scenario started).
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from drasim.journal import describe_event
from drasim.report import html_filter, html_header
from drasim.report.diff import diff_lines_html
from drasim.report.files import atomic_write_text
from drasim.report.html_diagram import anchored_seqs, event_anchor, render_diagram
from drasim.report.model import RunReport, ScenarioResult
from drasim.report.terminal import LABELS, TAIL_LINES, summary_line

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1f24;background:#fff}
h1{margin:0 0 .2em}h2{font-size:1.1em;margin:.2em 0}.meta{color:#57606a}
table.results{border-collapse:collapse;margin:1em 0}
table.results td,table.results th{border:1px solid #d0d7de;padding:.25em .6em;text-align:left}
.badge{font-weight:600;padding:0 .4em;border-radius:3px;color:#fff}
.passed .badge{background:#1a7f37}.failed .badge,.error .badge{background:#cf222e}
.skipped .badge{background:#9a6700}
details.scenario{border:1px solid #d0d7de;border-radius:6px;margin:1em 0;padding:.5em 1em}
details.scenario>summary{cursor:pointer;font-weight:600}
.failure{border-left:4px solid #cf222e;background:#fff5f5;padding:.5em 1em;margin:.5em 0}
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;margin:.3em 0;white-space:pre-wrap}
.diff .add{color:#1a7f37}.diff .del{color:#cf222e}.diff .hunk{color:#8250df}
.diagram-wrap{overflow-x:auto;margin:.5em 0}
.diagram{position:relative;padding-top:2.2em;font-size:12px}
.heads{position:absolute;top:0;left:0;right:0;height:2em}
.head{position:absolute;transform:translateX(-50%);background:#ddf4ff;border:1px solid #54aeff;
 border-radius:4px;padding:.2em .6em;font-weight:600;white-space:nowrap}
.life{position:absolute;top:2em;bottom:0;border-left:1px dashed #8c959f}
details.ev{position:relative}
details.ev>summary{list-style:none;position:relative;height:2.4em;cursor:pointer}
details.ev>summary::-webkit-details-marker{display:none}
details.ev>summary:hover{background:rgba(84,174,255,.08)}
details.ev>pre{position:relative;z-index:1;margin:0 2em .5em;border:1px solid #d0d7de}
.seq{position:absolute;left:0;top:.7em;color:#8c959f;font-size:10px}
.arrow{position:absolute;top:1.5em;border-top:2px solid #0969da}
.arrow::after{content:"";position:absolute;top:-6px;border:5px solid transparent}
.arrow.ltr::after{right:-2px;border-left:8px solid #0969da}
.arrow.rtl::after{left:-2px;border-right:8px solid #0969da}
.arrow .label{position:absolute;bottom:.2em;left:0;right:0;text-align:center;white-space:nowrap;
 overflow:visible;color:#0550ae}
.err .arrow{border-top-color:#cf222e}.err .arrow .label{color:#cf222e;font-weight:600}
.err .arrow.ltr::after{border-left-color:#cf222e}.err .arrow.rtl::after{border-right-color:#cf222e}
.note{position:absolute;top:.35em;transform:translateX(-50%);background:#fff8c5;border:1px solid #d4a72c;
 padding:.1em .5em;white-space:nowrap;z-index:1}
.err .note{background:#ffebe9;border-color:#cf222e;color:#cf222e}
.fault .note{background:#fff1e5;border-color:#bc4c00}
.band{position:absolute;left:0;right:0;top:.5em;background:#eaeef2;padding:.2em 2.5em;font-weight:600;
 z-index:1}
.failing .band{background:#ffebe9;color:#cf222e}
.muted .arrow{border-top:1px dashed #afb8c1}.muted .arrow .label{color:#8c959f}
.muted .arrow.ltr::after{border-left-color:#afb8c1}.muted .arrow.rtl::after{border-right-color:#afb8c1}
.muted>summary{height:1.8em}.muted .arrow{top:1.2em}
.stderr{background:#1b1f24;color:#e6edf3}
.lane{position:absolute;left:4.5em;right:0;top:0;bottom:0}
.lines{position:absolute;top:2em;bottom:0;left:4.5em;right:0}
.lines .life{top:0}
.axis{position:absolute;left:0;top:.5em;color:#57606a;font-size:10px}
.time{position:absolute;left:0;top:1.35em;color:#57606a;font-size:10px;line-height:1}
details.ev>summary>.seq{top:.2em;line-height:1}
.muted>summary>.seq{top:.1em}.muted .time{top:.95em}
details.ev .band{left:4.5em;padding-left:1em}
details.ev:target>summary,details.ev:has(>summary>.anchor:target)>summary{background:#fff8c5}
a.ev-link{font-variant-numeric:tabular-nums}
"""


def _events_pre(events: list[dict[str, object]], anchor: str, seqs: set[int]) -> str:
    """Journal lines, each event number a link to its diagram row (when the diagram has it)."""
    lines = []
    for event in events:
        text = describe_event(event)
        seq = event.get("seq")
        head, _, rest = text.partition(" ")
        if isinstance(seq, int) and not isinstance(seq, bool) and seq in seqs:
            ident = escape(event_anchor(anchor, seq), quote=True)
            lines.append(f'<a class="ev-link" href="#{ident}">{escape(head)}</a> {escape(rest)}')
        else:
            lines.append(escape(text))
    return "<pre>" + "\n".join(lines) + "</pre>"


def _step_seq(result: ScenarioResult, index: int | None) -> int | None:
    """The journal number of the (last) start of step ``index``."""
    found = None
    for event in result.journal:
        seq = event.get("seq")
        if event.get("kind") == "step" and event.get("index") == index and isinstance(seq, int):
            found = seq
    return found


def _failure_html(result: ScenarioResult, anchor: str) -> str:
    failure = result.failure
    if failure is None:
        return '<div class="failure">No failure details were recorded.</div>'
    seqs = anchored_seqs(result.journal)
    parts = ['<div class="failure">']
    if failure.step_index is not None or failure.step_text:
        index = "?" if failure.step_index is None else str(failure.step_index)
        title = f"Failing step {escape(index)}"
        step = _step_seq(result, failure.step_index)
        if step is not None and step in seqs:
            title = f'<a class="ev-link" href="#{escape(event_anchor(anchor, step), quote=True)}">{title}</a>'
        parts.append(f"<p><b>{title}</b>: {escape(failure.step_text)}</p>")
    parts.append(f'<pre class="message">{escape(failure.message)}</pre>')
    if failure.diff:
        parts.append(f'<p>Expected vs actual:</p><pre class="diff">{diff_lines_html(failure.diff)}</pre>')
    if failure.similar_events:
        parts.append("<p>Similar events:</p>" + _events_pre(failure.similar_events, anchor, seqs))
    if failure.journal_tail:
        parts.append("<p>Journal tail:</p>" + _events_pre(failure.journal_tail, anchor, seqs))
    for title, text in (("Driver stderr", result.stderr), ("Driver stdout", result.stdout)):
        if text.strip():
            tail = "\n".join(text.splitlines()[-TAIL_LINES:])
            parts.append(f'<p>{title} (last lines):</p><pre class="stderr">{escape(tail)}</pre>')
    if failure.reproduce:
        parts.append(f"<p>Reproduce: <code>{escape(failure.reproduce)}</code></p>")
    parts.append("</div>")
    return "".join(parts)


def _scenario_html(number: int, result: ScenarioResult, report: RunReport) -> str:
    bad = result.status in ("failed", "error")
    anchor = f"s{number}"
    parts = [
        f'<details class="scenario {result.status}" id="scenario-{number}" data-status="{result.status}" '
        f'data-text="{html_filter.search_text(result)}"{" open" if bad else ""}>',
        f'<summary><span class="badge">{LABELS[result.status]}</span> {escape(result.name)} '
        f'<span class="meta">({result.duration:.2f}s)</span></summary>',
    ]
    if result.description:
        parts.append(f"<p>{escape(result.description)}</p>")
    meta = [escape(result.location)] if result.location else []
    if result.tags:
        meta.append("tags: " + escape(", ".join(result.tags)))
    if meta:
        parts.append(f'<p class="meta">{" · ".join(meta)}</p>')
    parts.append(html_header.scenario_bugs_html(result, report))
    if result.status == "skipped" and result.skip_reason:
        parts.append(f"<p>Skipped: {escape(result.skip_reason)}</p>")
    if bad:
        parts.append(_failure_html(result, anchor))
    failing_step = result.failure.step_index if result.failure else None
    parts.append("<h3>Sequence diagram</h3>" + render_diagram(result.journal, failing_step, anchor))
    for title, text in (("Driver stdout", result.stdout), ("Driver stderr", result.stderr)):
        if text:
            parts.append(f"<details><summary>{title}</summary><pre>{escape(text)}</pre></details>")
    if result.artifacts:
        items = "".join(
            f"<li>{escape(label)}: <code>{escape(path)}</code></li>"
            for label, path in result.artifacts.items()
        )
        parts.append(f"<p>Artifacts:</p><ul>{items}</ul>")
    parts.append("</details>")
    return "".join(parts)


def failures_first(results: list[ScenarioResult]) -> list[ScenarioResult]:
    """Errored and failed scenarios first, then the rest; run order within each group."""
    return sorted(results, key=lambda r: r.status not in ("failed", "error"))


def _summary_table(results: list[ScenarioResult]) -> str:
    rows = "".join(
        f'<tr class="{r.status}" id="row-scenario-{i}"><td><span class="badge">{LABELS[r.status]}</span></td>'
        f'<td><a href="#scenario-{i}">{escape(r.name)}</a></td><td>{r.duration:.2f}s</td>'
        f"<td>{escape(r.location)}</td></tr>"
        for i, r in enumerate(results, start=1)
    )
    head = "<tr><th>Status</th><th>Scenario</th><th>Time</th><th>Location</th></tr>"
    return f'<table class="results">{head}{rows}</table>'


CSP = f"default-src 'none'; style-src 'unsafe-inline'; script-src {html_filter.script_source()}"
"""The page's Content-Security-Policy: inline styles, and no script but the filter's."""


def render_html(report: RunReport, title: str = "drasim report") -> str:
    """The whole report as one HTML document."""
    results = failures_first(report.results)
    scenarios = "".join(_scenario_html(i, r, report) for i, r in enumerate(results, start=1))
    css = CSS + html_header.CSS + html_filter.CSS
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{escape(title)}</title><style>{css}</style></head><body>"
        f"<h1>{escape(title)}</h1>{html_header.header_html(report)}"
        f'<p class="summary"><b>{escape(summary_line(report))}</b></p>'
        f"{html_filter.controls_html(report)}"
        f"{_summary_table(results)}{scenarios}<script>{html_filter.SCRIPT}</script></body></html>\n"
    )


def write_html(report: RunReport, path: str | os.PathLike[str], title: str = "drasim report") -> None:
    """Write :func:`render_html` to ``path`` atomically."""
    atomic_write_text(Path(path), render_html(report, title))
