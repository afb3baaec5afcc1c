"""The HTML report's filter: by status and by text (scenario, driver, claim, pod).

One small script, inlined, with no remote loads: the page's Content-Security-Policy allows
exactly this script by its SHA-256 (:func:`script_source`) and nothing else, so the hostile
text a journal may carry still cannot run. Without the script (or with it blocked) the page
shows everything, as before.

Each scenario section carries ``data-status`` and ``data-text`` (:func:`search_text`: its
name, location, tags, kubelet version, and the drivers, claims and pods its journal names);
each diagram row carries its own ``data-text``. Every term of the text box must occur
(case-insensitive) for a scenario to stay; inside a shown scenario, rows that do not match
are dimmed. The script also opens the ``<details>`` around a linked event (``#s1-e34``).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from html import escape
from typing import Any

from drasim.journal import claims_of
from drasim.report.model import STATUSES, RunReport, ScenarioResult
from drasim.report.terminal import LABELS

SCRIPT = """
(function () {
  "use strict";
  var form = document.getElementById("filter");
  if (!form) { return; }
  var boxes = form.querySelectorAll("input[name=status]");
  var text = document.getElementById("filter-text");
  var count = document.getElementById("filter-count");
  function terms() { return text.value.toLowerCase().split(/\\s+/).filter(Boolean); }
  function matches(hay, ts) {
    hay = (hay || "").toLowerCase();
    for (var i = 0; i < ts.length; i++) { if (hay.indexOf(ts[i]) < 0) { return false; } }
    return true;
  }
  function apply() {
    var on = {};
    boxes.forEach(function (b) { on[b.value] = b.checked; });
    var ts = terms(), shown = 0, total = 0;
    document.querySelectorAll("details.scenario").forEach(function (s) {
      total++;
      var ok = on[s.getAttribute("data-status")] === true && matches(s.getAttribute("data-text"), ts);
      s.hidden = !ok;
      if (ok) { shown++; }
      var row = document.getElementById("row-" + s.id);
      if (row) { row.hidden = !ok; }
      s.querySelectorAll("details.ev").forEach(function (ev) {
        var dim = ok && ts.length > 0 && !ev.classList.contains("step") &&
          !matches(ev.getAttribute("data-text"), ts);
        ev.classList.toggle("dim", dim);
      });
    });
    count.textContent = shown + " of " + total + " scenarios shown";
  }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) { return; }
    for (var p = el; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") { p.open = true; }
      if (p.hidden) { p.hidden = false; }
    }
    el.scrollIntoView({block: "center"});
  }
  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  text.addEventListener("input", apply);
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  window.addEventListener("hashchange", reveal);
  apply();
  reveal();
})();
"""

CSS = """
[hidden]{display:none!important}
form.filter{display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center;margin:.8em 0;padding:.4em .8em;
 border:1px solid #d0d7de;border-radius:6px;background:#f6f8fa}
form.filter fieldset{border:0;margin:0;padding:0;display:flex;gap:.8em}
form.filter input[type=search]{min-width:22em;padding:.2em .4em}
details.ev.dim{opacity:.3}
"""


def script_source() -> str:
    """The CSP source that allows :data:`SCRIPT` and nothing else: ``'sha256-...'``."""
    digest = hashlib.sha256(SCRIPT.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def controls_html(report: RunReport) -> str:
    """The filter form: one checkbox per status (with its count) and the text box."""
    counts = report.counts
    boxes = "".join(
        f'<label><input type="checkbox" name="status" value="{status}" checked> '
        f"{LABELS[status]} ({counts[status]})</label>"
        for status in STATUSES
    )
    return (
        '<form id="filter" class="filter" role="search">'
        f"<fieldset><legend hidden>Status</legend>{boxes}</fieldset>"
        '<label>Filter: <input type="search" id="filter-text" '
        'placeholder="scenario, driver, claim or pod" autocomplete="off"></label>'
        f'<output id="filter-count">{counts["total"]} scenarios</output></form>'
    )


def search_text(result: ScenarioResult) -> str:
    """What the filter matches a scenario against (attribute-escaped)."""
    words: dict[str, None] = dict.fromkeys(
        [result.name, result.status, result.location, result.kubelet_version, *result.tags]
    )
    for event in result.journal:
        for word in _names(event):
            words[word] = None
    return escape(" ".join(w for w in words if w), quote=True)


def _names(event: Mapping[str, Any]) -> list[str]:
    """Drivers, pods and claims an event names."""
    names = [str(event.get(key) or "") for key in ("driver", "pod")]
    for claim in claims_of(event.get("request")):
        names += [claim.name or "", f"{claim.namespace}/{claim.name}" if claim.name else claim.uid]
    if event.get("kind") == "api" and event.get("resource") in ("pods", "resourceclaims"):
        names += [str(event.get("name") or ""), f"{event.get('namespace') or ''}/{event.get('name') or ''}"]
    return names
