"""The HTML report's header: what the run ran against, one labelled row each.

Driver, backend and kubelet come from the front end's :class:`~drasim.report.model.RunEnvironment`
(``drasim run`` describes a ``--driver-cmd`` driver, a kubeconfig backend and an upstream
kubelet there); a run that switched fake-plugin bugs on (``--inject-bug``) says so in a banner
above everything, since its failures are the point. Each value cell has a stable id
(``run-driver``, ``run-backend``, ``run-kubelet``, ``run-bugs``, ...) and is escaped.
"""

from __future__ import annotations

from html import escape

from drasim.report.model import RunReport, ScenarioResult

CSS = """
table.run{border-collapse:collapse;margin:.4em 0}
table.run th{text-align:left;color:#57606a;font-weight:400;padding:.05em 1em .05em 0;vertical-align:top}
table.run td{padding:.05em 0}
.bugs{border-left:4px solid #bc4c00;background:#fff1e5;padding:.3em .8em;margin:.5em 0}
"""

#: extra keys the header shows in their own rows (the rest follow under their own names).
_KNOWN = {"kubeletVersions": "Kubelet versions", "injectedBugs": "Injected bugs"}


def _with_detail(value: str, detail: str) -> str:
    return escape(value) + (f' <span class="meta">({escape(detail)})</span>' if detail else "")


def header_html(report: RunReport) -> str:
    """The banner (when bugs were injected) and the table of the run's environment."""
    env = report.environment
    rows: list[tuple[str, str, str]] = [
        ("run-driver", "Driver", _with_detail(env.driver, env.driver_detail)),
        ("run-backend", "Backend", _with_detail(env.backend, env.backend_detail)),
    ]
    if env.kubelet:
        rows.append(("run-kubelet", "Kubelet", escape(env.kubelet)))
    if env.extra.get("kubeletVersions"):
        rows.append(("run-kubelet-versions", "Kubelet versions", escape(env.extra["kubeletVersions"])))
    rows.append(("run-time-scale", "Time scale", escape(f"{env.time_scale:g}")))
    bugs = env.injected_bugs
    if bugs:
        rows.append(("run-bugs", "Injected bugs", escape(", ".join(bugs))))
    rows += [
        ("run-started", "Started", escape(report.started_at)),
        ("run-drasim", "drasim", escape(report.drasim_version)),
    ]
    for key, value in sorted(env.extra.items()):
        if key not in _KNOWN:
            rows.append((f"run-extra-{escape(key, quote=True)}", escape(key), escape(value)))
    table = "".join(f'<tr><th>{label}</th><td id="{ident}">{value}</td></tr>' for ident, label, value in rows)
    banner = ""
    if bugs:
        banner = (
            f'<p class="bugs" id="bug-banner"><b>Bugs injected</b>: {escape(", ".join(bugs))}, switched on '
            "in every fake driver of every scenario (--inject-bug): a scenario that catches one fails.</p>"
        )
    return f'{banner}<table class="run" id="run">{table}</table>'


def scenario_bugs_html(result: ScenarioResult, report: RunReport) -> str:
    """The line a scenario section shows when a fake-plugin bug was on in it ('' otherwise)."""
    parts = []
    if result.bugs:
        parts.append(f"{escape(', '.join(result.bugs))} (the scenario's own fake driver spec)")
    run_bugs = [b for b in report.environment.injected_bugs if b not in result.bugs]
    if run_bugs and result.status != "skipped":
        parts.append(f"{escape(', '.join(run_bugs))} (--inject-bug, every fake driver)")
    if not parts:
        return ""
    return f'<p class="bugs">Bug injected: {"; ".join(parts)}</p>'
