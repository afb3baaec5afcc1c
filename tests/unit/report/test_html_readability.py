"""The HTML report as a driver author reads it: failures first, their driver stderr beside them,
one lifeline per driver, the runner's polling folded away, checkpoint writes as diffs."""

from __future__ import annotations

from typing import Any

from drasim.report import RunReport, ScenarioResult, render_html
from drasim.report.html_diagram import APISERVER, KUBELET, build_rows, lifelines, render_diagram

from .test_html import parse


def api(
    seq: int, client: str, verb: str, resource: str, name: str = "", *, code: int = 200
) -> dict[str, Any]:
    return {
        "seq": seq,
        "t": 0,
        "kind": "api",
        "client": client,
        "verb": verb,
        "resource": resource,
        "namespace": "default" if resource == "resourceclaims" else "",
        "name": name,
        "code": code,
    }


def started(seq: int, driver: str, pid: int | None) -> dict[str, Any]:
    return {"seq": seq, "t": 0, "kind": "plugin-process", "action": "started", "driver": driver, "pid": pid}


def test_each_driver_draws_its_own_api_calls_on_its_lifeline() -> None:
    events = [
        started(1, "gpu.example.com", None),
        started(2, "net.example.com", None),
        api(3, "gpu.example.com", "create", "resourceslices"),
        api(4, "net.example.com", "create", "resourceslices"),
        api(5, "runner", "create", "pods", "a"),
    ]
    columns = lifelines(events)
    assert columns == ["runner", KUBELET, "gpu.example.com", "net.example.com", APISERVER]
    rows = build_rows(events, columns)
    assert [(r.src, r.dst) for r in rows[2:]] == [(2, 4), (3, 4), (0, 4)]


def test_a_single_drivers_unnamed_or_http_client_is_that_driver() -> None:
    # The in-process fakes' shared client name, and a driver process's HTTP user agent.
    fake = [started(1, "gpu.example.com", None), api(2, "driver", "create", "resourceslices")]
    assert lifelines(fake) == [KUBELET, "gpu.example.com", APISERVER]
    process = [
        started(1, "gpu.example.com", 4242),
        api(2, "OpenAPI-Generator/37.0.2/python", "list", "resourceslices"),
        api(3, "dra-example-kubeletplugin/v0.1.0 (linux/amd64)", "create", "resourceslices"),
    ]
    columns = lifelines(process)
    assert columns == [KUBELET, "gpu.example.com", APISERVER]
    assert [(r.src, r.dst) for r in build_rows(process, columns)[1:]] == [(1, 2), (1, 2)]
    # Two drivers and a client that names neither: it keeps a lifeline of its own.
    two = [started(1, "a.example.com", None), started(2, "b.example.com", None), api(3, "driver", "get", "x")]
    assert lifelines(two) == ["driver", KUBELET, "a.example.com", "b.example.com", APISERVER]


def test_runs_of_the_runners_reads_fold_into_one_muted_row() -> None:
    events = [
        api(1, "runner", "list", "resourceslices"),
        api(2, "runner", "list", "resourceslices"),
        api(3, "runner", "list", "resourceslices"),
        api(4, "runner", "get", "resourceclaims", "gpu"),
        api(5, "runner", "update", "resourceclaims", "gpu"),  # a write: drawn on its own
        api(6, "runner", "get", "resourceclaims", "gpu"),  # a lone read: muted, not folded
        api(7, "runner", "get", "resourceclaims", "missing", code=404),  # an error is never hidden
        api(8, "kubelet", "get", "resourceclaims", "gpu"),  # other clients' reads stay
        api(9, "runner", "list", "resourceslices"),
        api(10, "runner", "list", "resourceslices"),
    ]
    columns = lifelines(events)
    rows = build_rows(events, columns)
    assert [(r.event["seq"], len(r.events) or 1, r.muted, r.error) for r in rows] == [
        (1, 4, True, False),
        (5, 1, False, False),
        (6, 1, True, False),
        (7, 1, False, True),
        (8, 1, False, False),
        (9, 2, True, False),
    ]
    assert rows[0].label == "4 reads: list resourceslices x3, get resourceclaims default/gpu → 200"
    doc = parse(render_diagram(events))
    folded = [a for t, a in doc.tags if t == "details" and a.get("data-seq") == "1"]
    assert folded[0]["class"] == "ev api muted"
    assert ("seq", "#1-4") in doc.texts
    # Expanded, the folded row shows every event it stands for.
    bodies = [text for cls, text in doc.texts if cls == "" and '"seq": 4' in text]
    assert bodies
    assert '"seq": 1' in bodies[0]


def entry(name: str, devices: list[str] | None, pods: tuple[str, ...] = ("pod-1",)) -> dict[str, Any]:
    return {
        "ClaimName": name,
        "ClaimUID": f"uid-{name}",
        "Namespace": "default",
        "PodUIDs": {p: {} for p in pods},
        "DriverState": {"gpu.example.com": {"Devices": [{"DeviceName": d} for d in devices or []] or None}},
    }


def checkpoint(seq: int, entries: Any, size: int = 100) -> dict[str, Any]:
    return {
        "seq": seq,
        "t": 0,
        "kind": "checkpoint",
        "path": "/x/dra_manager_state",
        "entries": entries,
        "size": size,
    }


def test_checkpoint_writes_show_what_changed_since_the_previous_write() -> None:
    events = [
        checkpoint(1, []),
        checkpoint(2, [entry("gpu", None)]),
        checkpoint(3, [entry("gpu", ["gpu-0"])]),
        checkpoint(4, [entry("gpu", ["gpu-0"]), entry("net", ["eth-1"])]),
        checkpoint(5, [entry("gpu", ["gpu-0"]), entry("net", ["eth-1"])]),
        checkpoint(6, [entry("net", ["eth-1"])]),
        checkpoint(7, 65),  # beyond 64 entries only their number is journaled: nothing to compare
        checkpoint(8, []),
    ]
    rows = build_rows(events, lifelines(events))
    assert [r.label.split(" B", 1)[1] for r in rows] == [
        "",
        " (+default/gpu)",
        " (~default/gpu)",
        " (+default/net)",
        " (unchanged)",
        " (-default/gpu)",
        "",
        "",
    ]
    assert rows[0].detail == ""
    assert rows[2].detail.startswith("--- previous write\n+++ this write\n")
    assert "\n-      Devices: null\n+      Devices:\n+      - DeviceName: gpu-0\n" in rows[2].detail
    doc = parse(render_diagram(events))
    diffs = [text for cls, text in doc.texts if cls == "add"]
    assert "+default/net:" in diffs


def test_failures_come_first_with_the_driver_stderr_in_the_failure_box(report: RunReport) -> None:
    text = render_html(report)
    doc = parse(text)
    sections = [a["id"] for t, a in doc.tags if t == "details" and "scenario" in (a.get("class") or "")]
    assert len(sections) == len(report.results)
    order = [r.status for r in report.results]
    assert order[0] == "passed"  # the run order puts a pass first ...
    first = text.index('id="scenario-1"')
    assert text.index("unprepare-is-retried", first) < text.index("prepare-unprepare-round-trip", first)
    # ... the failure box holds the driver's stderr, before the diagram.
    failed_section = text[text.index('id="scenario-1"') : text.index('id="scenario-2"')]
    box = failed_section[failed_section.index('class="failure"') : failed_section.index("Sequence diagram")]
    assert "Driver stderr (last lines):" in box
    assert "E1202 plugin: unprepare failed" in box


def test_long_stderr_shows_its_last_lines_in_the_box_and_all_of_it_below() -> None:
    from drasim.report import FailureInfo

    stderr = "".join(f"line {i}\n" for i in range(100))
    result = ScenarioResult(
        name="x", status="error", failure=FailureInfo.build("driver exited with status 1"), stderr=stderr
    )
    text = render_html(RunReport(results=[result]))
    box = text[text.index('class="failure"') : text.index("Sequence diagram")]
    assert "line 99" in box
    assert "line 80" in box
    assert "line 79\n" not in box
    assert "line 0\n" in text[text.index("Sequence diagram") :]
