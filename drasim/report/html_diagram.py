"""A scenario's journal drawn as a sequence diagram, in plain HTML and CSS.

Lifelines are columns (other API clients, the kubelet, one per plugin, the API
server); each event is a row: an arrow for an RPC, API call or registration, a
note for a checkpoint write, a kubelet operation, a plugin process change or an
injected fault, and a band for each scenario step. Errors are red. Every row is
a ``<details>`` element: clicking it shows the event's JSON (request, response).
Everything taken from the journal is escaped: it is untrusted text.

The left gutter is the time axis: each row's journal number and its time in seconds since
the scenario started (the journal's zero). Given an ``anchor`` prefix, every journal event
has an element with the id ``<anchor>-e<seq>`` (its row; an event that draws no row of its
own, a step's end, is anchored on the row before it), which the failure box links to.

A driver's own API calls start on that driver's lifeline, whichever client name
they were journaled under (the in-process fake's ``driver``, a driver process's
HTTP user agent). Runs of the runner's read-only API calls (its polling for
ResourceSlices, the reads of scheduling) fold into one muted row. A checkpoint
write names the claims it added, removed or changed since the previous write,
and its expanded row shows that diff.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from drasim.journal import claims_of, describe_event, short_method
from drasim.journal.kinds import STEP_END
from drasim.report.diff import diff_lines_html, unified_diff

KUBELET = "kubelet"
APISERVER = "API server"
SCENARIO = "scenario"
RUNNER = "runner"
MAX_CLAIMS_SHOWN = 3
MAX_CHANGES_SHOWN = 3
#: API verbs that only read; the runner's reads are its polling and scheduling, folded.
READ_VERBS = frozenset({"get", "list", "watch"})
#: Client names that are not a driver (everything else that calls the API server is one).
_NOT_DRIVERS = frozenset({KUBELET, RUNNER, SCENARIO})


@dataclass(frozen=True)
class Row:
    """One drawn event: an arrow (``src != dst``), a note (``src == dst``) or a step band (``src < 0``).

    ``events`` holds every event a folded row stands for (just ``event`` otherwise);
    ``detail`` is text shown above the JSON when the row is expanded (a checkpoint diff).
    """

    src: int
    dst: int
    label: str
    error: bool
    kind: str
    event: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...] = ()
    detail: str = ""
    muted: bool = False


def _drivers(events: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The drivers in order of appearance, and those that ran as processes (a real pid)."""
    drivers: list[str] = []
    processes: list[str] = []
    for event in events:
        kind = event.get("kind")
        driver = str(event.get("driver") or "")
        if kind in ("rpc", "registration", "plugin-process") and driver and driver not in drivers:
            drivers.append(driver)
        if kind == "plugin-process" and driver and event.get("pid") is not None and driver not in processes:
            processes.append(driver)
    return drivers, processes


def lifelines(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """Column names: other API clients first, then the kubelet, the drivers, and the API server.

    A driver's API client shares the driver's column (see :func:`api_lane`).
    """
    drivers, processes = _drivers(events)
    clients: list[str] = []
    has_api = False
    for event in events:
        if event.get("kind") == "api":
            has_api = True
            lane = api_lane(_client(event), drivers, processes)
            if lane != KUBELET and lane not in clients and lane not in drivers:
                clients.append(lane)
    return clients + [KUBELET] + drivers + ([APISERVER] if has_api else [])


def api_lane(client: str, drivers: Sequence[str], processes: Sequence[str] = ()) -> str:
    """The column an API call of ``client`` starts on.

    A client named after a driver is that driver. ``driver`` (the in-process fakes' client)
    is the only driver when there is one; any other name (a driver process's HTTP user agent)
    is the only driver process, else the only driver. What cannot be told apart keeps its
    own column.
    """
    if client in drivers or client in _NOT_DRIVERS:
        return client
    if client != "driver" and len(processes) == 1:
        return processes[0]
    if len(drivers) == 1:
        return drivers[0]
    return client


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


def _api_failed(event: Mapping[str, Any]) -> bool:
    code = event.get("code")
    return bool(event.get("error")) or (isinstance(code, int) and code >= 400)


def is_runner_read(event: Mapping[str, Any]) -> bool:
    """A successful read-only API call of the runner (polling, scheduling): folded in the diagram."""
    return (
        event.get("kind") == "api"
        and _client(event) == RUNNER
        and str(event.get("verb", "")).lower() in READ_VERBS
        and not _api_failed(event)
    )


def _api_label(event: Mapping[str, Any]) -> str:
    target = "/".join(str(p) for p in (event.get("namespace"), event.get("name")) if p)
    return f"{event.get('verb', '?')} {event.get('resource', '')} {target}".replace("  ", " ").strip()


def _folded_row(reads: Sequence[Mapping[str, Any]], src: int, dst: int) -> Row:
    """One muted row for a run of the runner's reads: ``3 reads: list resourceslices x2, get ... → 200``."""
    counts: dict[str, int] = {}
    for event in reads:
        label = _api_label(event)
        counts[label] = counts.get(label, 0) + 1
    parts = [f"{label} x{n}" if n > 1 else label for label, n in counts.items()]
    if len(parts) > MAX_CHANGES_SHOWN:
        parts = [*parts[:MAX_CHANGES_SHOWN], f"+{len(parts) - MAX_CHANGES_SHOWN} more"]
    label = f"{len(reads)} reads: {', '.join(parts)} → 200"
    return Row(src, dst, label, False, "api", reads[0], tuple(reads), muted=True)


def build_rows(events: Sequence[Mapping[str, Any]], columns: list[str]) -> list[Row]:  # noqa: C901 - one pass over the journal, one branch per event kind
    """The drawn rows for ``events`` in journal order (runs of the runner's reads folded)."""
    index = {name: i for i, name in enumerate(columns)}
    kubelet = index[KUBELET]
    drivers, processes = _drivers(events)
    rows: list[Row] = []
    reads: list[Mapping[str, Any]] = []
    checkpoint: dict[str, Any] | None = None

    def flush_reads() -> None:
        if not reads:
            return
        src = index.get(RUNNER, kubelet)
        if len(reads) == 1:
            event = reads[0]
            label = f"{_api_label(event)} → {event.get('code')}{_duration(event)}"
            rows.append(Row(src, index.get(APISERVER, src), label, False, "api", event, muted=True))
        else:
            rows.append(_folded_row(list(reads), src, index.get(APISERVER, src)))
        reads.clear()

    for event in events:
        kind = str(event.get("kind", ""))
        if kind == STEP_END:  # the next step's band (or the failure) says how a step ended
            continue
        if is_runner_read(event):
            reads.append(event)
            continue
        flush_reads()
        driver_col = index.get(str(event.get("driver") or ""), kubelet)
        if kind == "step":
            label = f"Step {event.get('index', '?')}: {event.get('text') or event.get('name', '')}"
            rows.append(Row(-1, -1, label, False, kind, event))
        elif kind == "rpc":
            rows.append(_rpc_row(event, kubelet, driver_col))
        elif kind == "api":
            src = index.get(api_lane(_client(event), drivers, processes), kubelet)
            label = f"{_api_label(event)} → {event.get('code')}{_duration(event)}"
            rows.append(Row(src, index.get(APISERVER, src), label, _api_failed(event), kind, event))
        elif kind == "registration":
            label = f"register {event.get('service') or ''} → {event.get('outcome') or ''}".replace("  ", " ")
            rows.append(Row(kubelet, driver_col, label, bool(event.get("error")), kind, event))
        elif kind == "checkpoint":
            row, checkpoint = _checkpoint_row(event, kubelet, checkpoint)
            rows.append(row)
        else:
            rows.append(_note_row(event, kind, kubelet, driver_col, index))
    flush_reads()
    return rows


def _entry_key(entry: Any, position: int) -> str:
    """``namespace/name`` of a checkpoint entry (its UID, or its position, when it has no name)."""
    if isinstance(entry, Mapping):
        name = entry.get("ClaimName") or entry.get("claimName") or entry.get("name")
        namespace = entry.get("Namespace") or entry.get("namespace") or ""
        if name:
            return f"{namespace}/{name}" if namespace else str(name)
        uid = entry.get("ClaimUID") or entry.get("claimUID") or entry.get("uid")
        if uid:
            return str(uid)
    return f"#{position}"


def _checkpoint_row(
    event: Mapping[str, Any], kubelet: int, previous: dict[str, Any] | None
) -> tuple[Row, dict[str, Any] | None]:
    """The note for a checkpoint write, with what changed since ``previous`` (the last write's entries).

    Returns the row and this write's entries by claim (``None`` when the event holds only
    their number, so the next write is not compared with a stale state).
    """
    entries = event.get("entries")
    count = len(entries) if isinstance(entries, list) else entries
    count = "?" if count is None else count
    noun = "entry" if count == 1 else "entries"
    label = f"checkpoint write: {count} {noun}, {event.get('size', '?')} B"
    if not isinstance(entries, list):
        return Row(kubelet, kubelet, label, False, "checkpoint", event), None
    current = {_entry_key(entry, i): entry for i, entry in enumerate(entries)}
    if previous is None:
        return Row(kubelet, kubelet, label, False, "checkpoint", event), current
    changes = [f"+{key}" for key in current if key not in previous]
    changes += [f"-{key}" for key in previous if key not in current]
    changes += [f"~{key}" for key in current if key in previous and current[key] != previous[key]]
    if len(changes) > MAX_CHANGES_SHOWN:
        changes = [*changes[:MAX_CHANGES_SHOWN], f"+{len(changes) - MAX_CHANGES_SHOWN} more"]
    label += f" ({', '.join(changes)})" if changes else " (unchanged)"
    detail = unified_diff(previous, current, "previous write", "this write")
    return Row(kubelet, kubelet, label, False, "checkpoint", event, detail=detail), current


def _rpc_row(event: Mapping[str, Any], kubelet: int, driver_col: int) -> Row:
    name = short_method(str(event.get("method", "")))
    label = f"{name}({_claims_label(event.get('request'))}) → {event.get('code', '?')}{_duration(event)}"
    if event.get("side", KUBELET) != KUBELET:
        return Row(driver_col, driver_col, f"plugin saw {label}", _rpc_has_error(event), "rpc", event)
    return Row(kubelet, driver_col, label, _rpc_has_error(event), "rpc", event)


def _note_row(
    event: Mapping[str, Any], kind: str, kubelet: int, driver_col: int, index: Mapping[str, int]
) -> Row:
    if kind == "kubelet":
        outcome = "error" if event.get("error") else "ok"
        subject = event.get("pod") or event.get("pod_uid") or event.get("driver") or ""
        label = f"{event.get('operation', '')} {subject} → {outcome}{_duration(event)}".replace("  ", " ")
        return Row(kubelet, kubelet, label, bool(event.get("error")), kind, event)
    if kind == "plugin-process":
        pid = event.get("pid")
        label = f"process {event.get('action', '')}" + (f" pid {pid}" if pid is not None else "")
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


def event_anchor(anchor: str, seq: object) -> str:
    """The id of journal event ``seq`` in the diagram whose ids start with ``anchor``."""
    return f"{anchor}-e{seq}"


def anchored_seqs(events: Sequence[Mapping[str, Any]]) -> set[int]:
    """The journal numbers a diagram of ``events`` has an anchor for (all of them, when drawn)."""
    return {e["seq"] for e in events if _is_seq(e.get("seq"))}


def _is_seq(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _assign_anchors(rows: Sequence[Row], events: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """For each row, the journal numbers anchored on it: its own events, then those that draw
    nothing (a step's end) up to the next row."""
    owner: dict[int, int] = {}
    for i, row in enumerate(rows):
        for event in row.events or (row.event,):
            if _is_seq(event.get("seq")):
                owner.setdefault(event["seq"], i)
    result: list[list[int]] = [[] for _ in rows]
    current = 0
    seen: set[int] = set()
    for event in events:
        seq = event.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq in seen:
            continue  # a journal number twice (a hand-made report) gets one anchor
        seen.add(seq)
        if seq in owner:
            current = owner[seq]
        if rows:
            result[owner.get(seq, current)].append(seq)
    return result


def _search_text(row: Row) -> str:
    """What the filter matches a row against: its label, driver and pod."""
    event = row.event
    extra = [str(event.get(key) or "") for key in ("driver", "pod", "client")]
    return " ".join(word for word in (row.label, *extra) if word)


def _time(event: Mapping[str, Any]) -> str:
    value = event.get("t")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.3f}s"
    return ""


def _row_html(
    row: Row, count: int, failing_step: int | None, anchor: str = "", seqs: Sequence[int] = ()
) -> str:
    classes = ["ev", row.kind.replace("_", "-")]
    if row.error:
        classes.append("err")
    if row.muted:
        classes.append("muted")
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
    shown = f"#{seq}"
    content: Any = row.event
    if len(row.events) > 1:
        last = escape(str(row.events[-1].get("seq", "")))
        shown = f"#{seq}-{last}"
        content = list(row.events)
    body = escape(json.dumps(content, indent=2, sort_keys=True, ensure_ascii=False, default=str))
    detail = f'<pre class="diff">{diff_lines_html(row.detail)}</pre>' if row.detail else ""
    ident = f' id="{escape(event_anchor(anchor, seqs[0]))}"' if anchor and seqs else ""
    more = "".join(f'<span class="anchor" id="{escape(event_anchor(anchor, s))}"></span>' for s in seqs[1:])
    when = _time(row.event)
    time = f'<span class="time" title="seconds since the scenario started">{when}</span>' if when else ""
    text = escape(_search_text(row), quote=True)
    lane = graphic if row.src < 0 else f'<span class="lane">{graphic}</span>'
    return (
        f'<details class="{" ".join(classes)}" data-seq="{seq}"{ident} data-text="{text}">'
        f'<summary>{more}<span class="seq">{shown}</span>{time}'
        f"{lane}</summary>{detail}<pre>{body}</pre></details>"
    )


def render_diagram(
    events: Sequence[Mapping[str, Any]], failing_step: int | None = None, anchor: str = ""
) -> str:
    """The sequence diagram of ``events`` as an HTML fragment; with ``anchor``, each event has
    the id :func:`event_anchor` (``anchor``, its seq)."""
    if not events:
        return '<p class="empty">No journal events were recorded.</p>'
    columns = lifelines(events)
    count = len(columns)
    heads = "".join(
        f'<span class="head" style="left:{_centre(i, count):.3f}%">{escape(name)}</span>'
        for i, name in enumerate(columns)
    )
    lines = "".join(f'<span class="life" style="left:{_centre(i, count):.3f}%"></span>' for i in range(count))
    rows = build_rows(events, columns)
    anchors = _assign_anchors(rows, events)
    drawn = "".join(
        _row_html(row, count, failing_step, anchor, seqs) for row, seqs in zip(rows, anchors, strict=True)
    )
    axis = '<span class="axis" title="journal number and seconds since the scenario started"># / t</span>'
    return (
        f'<div class="diagram-wrap"><div class="diagram" style="min-width:{count * 190 + 60}px">'
        f'<div class="heads">{axis}<span class="lane">{heads}</span></div>'
        f'<div class="lines">{lines}</div>{drawn}</div></div>'
    )
