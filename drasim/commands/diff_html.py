"""The HTML form of ``drasim diff``'s report (``--html FILE``): one self-contained page.

The scenario x release table first (agree / differ / not comparable, with why), then each
scenario's first divergence with the emulated and the upstream side next to each other. No
scripts, fonts or style sheets are fetched; every text from a run is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["render_html"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
td.agree { background: #e6f4ea; }
td.differ { background: #fde7e9; font-weight: bold; }
td.nc { background: #f1f3f4; color: #555; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.pair pre { background: #f8f9fa; border: 1px solid #ddd; padding: 0.5em; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; font-size: 0.85em; }
h2 { font-size: 1.1em; margin-top: 2em; }
"""


class Row(Protocol):
    """What the page needs of a row (:class:`drasim.commands.diff.DiffRow`)."""

    scenario: str
    release: str
    verdict: str
    why: str
    divergence: dict[str, Any] | None


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _cell(row: Row | None) -> str:
    if row is None:
        return "<td></td>"
    if row.verdict == "agree":
        return '<td class="agree">agree</td>'
    css = "differ" if row.verdict == "differ" else "nc"
    label = "differ" if row.verdict == "differ" else "not comparable"
    link = f'<a href="#{_e(_anchor(row))}">{label}</a>' if row.divergence else label
    return f'<td class="{css}">{link}<br><small>{_e(row.why)}</small></td>'


def _anchor(row: Row) -> str:
    return f"d-{row.scenario}-{row.release}"


def _side(value: Any) -> str:
    return _e(json.dumps(value, indent=1, sort_keys=True, default=str))


def render_html(rows: Sequence[Row], *, title: str = "drasim diff") -> str:
    """The whole page for ``rows``."""
    releases = list(dict.fromkeys(r.release for r in rows))
    by_key = {(r.scenario, r.release): r for r in rows}
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        "<p>" + _e(", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))) + "</p>",
        "<table><thead><tr><th>Scenario</th>"
        + "".join(f"<th>{_e(r)}</th>" for r in releases)
        + "</tr></thead><tbody>",
    ]
    for scenario in sorted(dict.fromkeys(r.scenario for r in rows)):
        cells = "".join(_cell(by_key.get((scenario, release))) for release in releases)
        parts.append(f"<tr><td>{_e(scenario)}</td>{cells}</tr>")
    parts.append("</tbody></table>")
    for row in rows:
        d = row.divergence
        if d is None:
            continue
        parts += [
            f'<h2 id="{_e(_anchor(row))}">{_e(row.scenario)} @ {_e(row.release)}: first divergence at step '
            f"{_e(d.get('step'))} ({_e(d.get('step_name'))}) in {_e(d.get('aspect'))}</h2>",
            f"<p>Step: <code>{_e(d.get('step_text'))}</code></p>",
            '<div class="pair">',
            f"<div><h3>emulated</h3><pre>{_side(d.get('emulated'))}</pre></div>",
            f"<div><h3>upstream</h3><pre>{_side(d.get('upstream'))}</pre></div>",
            "</div>",
        ]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
