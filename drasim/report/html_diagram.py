"""A scenario's journal drawn as a sequence diagram, in plain HTML and CSS.

Lifelines are columns (other API clients, the kubelet, one per plugin, the API
server); each event is a row: an arrow for an RPC, API call or registration, a
note for a checkpoint write, a kubelet operation, a plugin process change or an
injected fault, and a band for each scenario step. Errors are red. Every row is
a ``<details>`` element: clicking it shows the event's JSON (request, response).
Everything taken from the journal is escaped: it is untrusted text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from drasim.journal import claims_of, describe_event, short_method

KUBELET = "kubelet"
APISERVER = "API server"
SCENARIO = "scenario"
MAX_CLAIMS_SHOWN = 3


@dataclass(frozen=True)
class Row:
    """One drawn event: an arrow (``src != dst``), a note (``src == dst``) or a step band (``src < 0``)."""

    src: int
    dst: int
    label: str
    error: bool
    kind: str
    event: Mapping[str, Any]


def lifelines(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """Column names: other API clients first, then the kubelet, the drivers, and the API server."""
    clients: list[str] = []
    drivers: list[str] = []
    has_api = False
    for event in events:
        kind = event.get("kind")
        driver = str(event.get("driver") or "")
        if kind in ("rpc", "registration", "plugin-process") and driver and driver not in drivers:
            drivers.append(driver)
        if kind == "api":
            has_api = True
            client = _client(event)
            if client != KUBELET and client not in clients:
                clients.append(client)
    clients = [c for c in clients if c not in drivers]
    return clients + [KUBELET] + drivers + ([APISERVER] if has_api else [])


def _client(event: Mapping[str, Any]) -> str:
    return str(event.get("client") or SCENARIO)


def _claims_label(request: Any) -> str:
    names = [c.name or c.uid for c in claims_of(request)]
    if len(names) > MAX_CLAIMS_SHOWN:
        names = [*names[:MAX_CLAIMS_SHOWN], f"+{len(names) - MAX_CLAIMS_SHOWN} more"]
    return ", ".join(names)


def _duration(event: Mapping[str, Any]) -> str:
    value = event.get("duration")
    return f" {value * 1000:.1f}ms" if isinstance(value, int | float) and not isinstance(value, bool) else ""


def _rpc_has_error(event: Mapping[str, Any]) -> bool:
    if event.get("code") not in ("OK", None) or event.get("error"):
        return True
    response = event.get("response")
    claims = response.get("claims") if isinstance(response, Mapping) else None
    return isinstance(claims, Mapping) and any(
        isinstance(entry, Mapping) and entry.get("error") for entry in claims.values()
    )


def build_rows(events: Sequence[Mapping[str, Any]], columns: list[str]) -> list[Row]:
    """The drawn rows for ``events`` in journal order."""
    index = {name: i for i, name in enumerate(columns)}
    kubelet = index[KUBELET]
    rows = []
    for event in events:
        kind = str(event.get("kind", ""))
        driver_col = index.get(str(event.get("driver") or ""), kubelet)
        if kind == "step":
            label = f"Step {event.get('index', '?')}: {event.get('text') or event.get('name', '')}"
            rows.append(Row(-1, -1, label, False, kind, event))
        elif kind == "rpc":
            rows.append(_rpc_row(event, kubelet, driver_col))
        elif kind == "api":
            src = index.get(_client(event), kubelet)
            code = event.get("code")
            target = "/".join(str(p) for p in (event.get("namespace"), event.get("name")) if p)
            label = (
                f"{event.get('verb', '?')} {event.get('resource', '')} {target} → {code}{_duration(event)}"
            )
            failed = bool(event.get("error")) or (isinstance(code, int) and code >= 400)
            rows.append(Row(src, index.get(APISERVER, src), label, failed, kind, event))
        elif kind == "registration":
            label = f"register {event.get('service') or ''} → {event.get('outcome') or ''}".replace("  ", " ")
            rows.append(Row(kubelet, driver_col, label, bool(event.get("error")), kind, event))
        else:
            rows.append(_note_row(event, kind, kubelet, driver_col, index))
    return rows


def _rpc_row(event: Mapping[str, Any], kubelet: int, driver_col: int) -> Row:
    name = short_method(str(event.get("method", "")))
    label = f"{name}({_claims_label(event.get('request'))}) → {event.get('code', '?')}{_duration(event)}"
    if event.get("side", KUBELET) != KUBELET:
        return Row(driver_col, driver_col, f"plugin saw {label}", _rpc_has_error(event), "rpc", event)
    return Row(kubelet, driver_col, label, _rpc_has_error(event), "rpc", event)


def _note_row(
    event: Mapping[str, Any], kind: str, kubelet: int, driver_col: int, index: Mapping[str, int]
) -> Row:
    if kind == "checkpoint":
        entries = event.get("entries")
        count = len(entries) if isinstance(entries, list) else entries
        count = "?" if count is None else count
        noun = "entry" if count == 1 else "entries"
        label = f"checkpoint write: {count} {noun}, {event.get('size', '?')} B"
        return Row(kubelet, kubelet, label, False, kind, event)
    if kind == "kubelet":
        outcome = "error" if event.get("error") else "ok"
        subject = event.get("pod") or event.get("pod_uid") or event.get("driver") or ""
        label = f"{event.get('operation', '')} {subject} → {outcome}{_duration(event)}".replace("  ", " ")
        return Row(kubelet, kubelet, label, bool(event.get("error")), kind, event)
    if kind == "plugin-process":
        label = f"process {event.get('action', '')} pid {event.get('pid', '?')}"
        bad = event.get("action") == "killed" or event.get("returncode") not in (None, 0)
        return Row(driver_col, driver_col, label, bad, kind, event)
    if kind == "fault":
        col = kubelet
        if event.get("driver"):
            col = driver_col
        elif event.get("where") == "api":
            col = index.get(APISERVER, kubelet)
        label = f"fault: {event.get('description', '')}"
        return Row(col, col, label, False, kind, event)
    text = describe_event(event).split(" ", 2)[-1]
    return Row(kubelet, kubelet, text, kind == "merge-error", kind, event)


def _centre(col: int, count: int) -> float:
    return (col + 0.5) * 100.0 / count


def _row_html(row: Row, count: int, failing_step: int | None) -> str:
    classes = ["ev", row.kind.replace("_", "-")]
    if row.error:
        classes.append("err")
    label = escape(row.label)
    if row.src < 0:
        if failing_step is not None and row.event.get("index") == failing_step:
            classes.append("failing")
        graphic = f'<span class="band">{label}</span>'
    elif row.src == row.dst:
        graphic = f'<span class="note" style="left:{_centre(row.src, count):.3f}%">{label}</span>'
    else:
        left, right = sorted((row.src, row.dst))
        x1, x2 = _centre(left, count), _centre(right, count)
        direction = "rtl" if row.src > row.dst else "ltr"
        graphic = (
            f'<span class="arrow {direction}" style="left:{x1:.3f}%;width:{x2 - x1:.3f}%">'
            f'<span class="label">{label}</span></span>'
        )
    seq = escape(str(row.event.get("seq", "")))
    body = escape(json.dumps(row.event, indent=2, sort_keys=True, ensure_ascii=False, default=str))
    return (
        f'<details class="{" ".join(classes)}" data-seq="{seq}"><summary><span class="seq">#{seq}</span>'
        f"{graphic}</summary><pre>{body}</pre></details>"
    )


def render_diagram(events: Sequence[Mapping[str, Any]], failing_step: int | None = None) -> str:
    """The sequence diagram of ``events`` as an HTML fragment (``""`` for no events)."""
    if not events:
        return '<p class="empty">No journal events were recorded.</p>'
    columns = lifelines(events)
    count = len(columns)
    heads = "".join(
        f'<span class="head" style="left:{_centre(i, count):.3f}%">{escape(name)}</span>'
        for i, name in enumerate(columns)
    )
    lines = "".join(f'<span class="life" style="left:{_centre(i, count):.3f}%"></span>' for i in range(count))
    rows = "".join(_row_html(row, count, failing_step) for row in build_rows(events, columns))
    return (
        f'<div class="diagram-wrap"><div class="diagram" style="min-width:{count * 190}px">'
        f'<div class="heads">{heads}</div>{lines}{rows}</div></div>'
    )
