"""Journal: stamping, queries, JSON lines, merging another process's file."""

from __future__ import annotations

import itertools
import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from drasim._proto.dra.v1 import api_pb2
from drasim.clock import VirtualClock
from drasim.errors import ConfigError
from drasim.interfaces import Recorder
from drasim.journal import Journal, describe_event, to_jsonable
from drasim.values import ClaimRef, Device, PrepareResult

PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
UNPREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
GPU = ClaimRef(namespace="default", uid="uid-1", name="gpu")
NET = ClaimRef(namespace="default", uid="uid-2", name="net")


def rpc(journal: Journal, method: str, claims: list[ClaimRef], **extra) -> None:
    journal.record(
        "rpc",
        side=extra.pop("side", "kubelet"),
        driver=extra.pop("driver", "gpu.example.com"),
        endpoint="/var/lib/kubelet/plugins/gpu/dra.sock",
        method=method,
        request={"claims": claims},
        response=extra.pop("response", {"claims": {c.uid: {"error": ""} for c in claims}}),
        code=extra.pop("code", "OK"),
        error=extra.pop("error", ""),
        duration=0.002,
        **extra,
    )


def test_journal_is_a_recorder_and_stamps_seq_and_clock_time():
    clock = VirtualClock(start=100.0)
    journal = Journal(clock)
    assert isinstance(journal, Recorder)
    journal.record("step", index=1, name="start_pod", text="start_pod a")
    clock.advance(1.5)
    journal.record("api", verb="GET", resource="resourceclaims", namespace="default", name="gpu", code=200)
    events = journal.events()
    assert [(e["seq"], e["t"], e["kind"]) for e in events] == [(1, 0.0, "step"), (2, 1.5, "api")]
    assert events[1]["resource"] == "resourceclaims"
    assert journal.mark() == 2


def test_record_converts_dataclasses_tuples_bytes_and_protobuf():
    journal = Journal(VirtualClock())
    message = api_pb2.NodePrepareResourcesRequest(
        claims=[api_pb2.Claim(namespace="default", uid="uid-1", name="gpu")]
    )
    journal.record(
        "rpc",
        request=message,
        response={"uid-1": PrepareResult(devices=(Device("pool", "dev-0", cdi_device_ids=("a.com/x=y",)),))},
        raw=b"\xff\x00",
        text=b"hello",
        pair=("a", 1),
        err=ValueError("boom"),
        path=Path("/tmp/x"),
    )
    (event,) = journal.events()
    json.dumps(event)  # JSON-ready
    assert event["request"] == {"claims": [{"namespace": "default", "uid": "uid-1", "name": "gpu"}]}
    device = event["response"]["uid-1"]["devices"][0]
    assert device == {
        "pool_name": "pool",
        "device_name": "dev-0",
        "request_names": None,
        "cdi_device_ids": ["a.com/x=y"],
        "share_id": None,
    }
    assert event["raw"] == "base64:/wA="
    assert event["text"] == "hello"
    assert event["pair"] == ["a", 1]
    assert event["err"] == "boom"
    assert event["path"] == "/tmp/x"


def test_to_jsonable_handles_odd_values():
    @dataclass
    class Node:
        child: object = None

    loop: list[object] = []
    loop.append(loop)
    assert to_jsonable(float("nan")) == "nan"
    assert to_jsonable({1: {3, 2}}) == {"1": [2, 3]}
    assert "nested too deeply" in json.dumps(to_jsonable(loop))
    assert to_jsonable(Node(Node())) == {"child": {"child": None}}
    assert to_jsonable(api_pb2.NodeUnprepareResourcesResponse()) == {"claims": {}}


def test_to_jsonable_copies_plain_containers_and_cuts_deep_nesting_at_the_same_depth():
    leaf = {"a": 1, "b": [1, "x", None]}
    converted = to_jsonable({"leaf": leaf, "keys": {1: "x", None: "y"}})
    assert converted == {"leaf": leaf, "keys": {"1": "x", "None": "y"}}
    # plain dicts and lists are copied, never shared with the caller
    assert converted["leaf"] is not leaf
    assert converted["leaf"]["b"] is not leaf["b"]
    deep: dict[str, object] = {"v": 0}
    for level in range(1, 45):
        deep = {"v": level, "n": deep}
    text = json.dumps(to_jsonable(deep))
    # MAX_DEPTH (40) containers are converted; what sits below them, leaves included, is cut
    assert text.count('"v"') == 41
    assert text.count("<nested too deeply>") == 2


def test_record_keeps_a_forwarded_seq_and_t_under_other_names_and_rejects_bad_kind():
    journal = Journal(VirtualClock())
    with pytest.raises(ValueError, match="non-empty string"):
        journal.record("")
    journal.record("rpc", seq=7, t=99.0, side="plugin", details="injected")
    (event,) = journal.events()
    assert (event["seq"], event["t"], event["source_seq"], event["source_t"]) == (1, 0.0, 7, 99.0)
    assert journal.rpc_calls(side="plugin")[0].error == "injected"


def test_events_filters_by_kind_since_and_fields():
    journal = Journal(VirtualClock())
    journal.record("kubelet", operation="PrepareResources", pod="default/a", pod_uid="p-a")
    mark = journal.mark()
    journal.record("kubelet", operation="UnprepareResources", pod="default/a", pod_uid="p-a")
    journal.record("kubelet", operation="PrepareResources", pod="default/b", pod_uid="p-b")
    journal.record("api", verb="GET")
    assert [e["seq"] for e in journal.events("kubelet")] == [1, 2, 3]
    assert [e["seq"] for e in journal.events("kubelet", since_seq=mark)] == [2, 3]
    assert [e["seq"] for e in journal.events(operation="PrepareResources")] == [1, 3]
    assert [e["seq"] for e in journal.events(since_seq=mark, pod="default/a")] == [2]
    assert journal.events(missing="x") == []
    # copies: mutating a result does not change the journal
    journal.events()[0]["pod"] = "changed"
    assert journal.events()[0]["pod"] == "default/a"
    assert [e["seq"] for e in journal.tail(2)] == [3, 4]


def test_last_is_the_newest_matching_event_as_a_copy():
    journal = Journal(VirtualClock())
    assert journal.last("kubelet") is None
    journal.record("kubelet", operation="PrepareResources", pod="default/a")
    journal.record("api", verb="GET")
    journal.record("kubelet", operation="UnprepareResources", pod="default/a")
    journal.record("api", verb="LIST")
    last = journal.last("kubelet")
    assert last is not None
    assert last["seq"] == 3
    assert journal.last()["seq"] == 4
    assert journal.last("kubelet", operation="PrepareResources")["seq"] == 1
    assert journal.last("kubelet", operation="missing") is None
    last["operation"] = "changed"
    assert journal.last("kubelet")["operation"] == "UnprepareResources"


def test_rpc_calls_extracts_claims_and_scopes_by_side_driver_method_and_mark():
    journal = Journal(VirtualClock())
    rpc(journal, PREPARE, [GPU, NET])
    rpc(journal, PREPARE, [GPU], side="plugin")
    step = journal.mark()
    rpc(
        journal,
        UNPREPARE,
        [NET],
        driver="net.example.com",
        response={"claims": {"uid-2": {"error": "device busy"}}},
    )
    rpc(journal, PREPARE, [GPU], code="Unavailable", error="rpc error: code = Unavailable desc = x")

    prepares = journal.rpc_calls("NodePrepareResources")
    assert [c.seq for c in prepares] == [1, 4]
    assert prepares[0].claims == (GPU, NET)
    assert prepares[0].claim_keys == ["default/gpu", "default/net"]
    assert prepares[0].ok
    assert prepares[0].name == "NodePrepareResources"
    assert not prepares[1].ok
    assert prepares[1].error.startswith("rpc error")
    assert [c.seq for c in journal.rpc_calls("NodePrepareResources", side=None)] == [1, 2, 4]
    assert [c.seq for c in journal.rpc_calls("NodePrepareResources", since_seq=step)] == [4]
    assert [c.seq for c in journal.rpc_calls("DRAPlugin/NodePrepareResources")] == [1, 4]
    assert [c.seq for c in journal.rpc_calls(PREPARE)] == [1, 4]
    assert journal.rpc_calls("PrepareResources") == []
    (unprepare,) = journal.rpc_calls("NodeUnprepareResources", driver="net.example.com")
    assert unprepare.claim_errors == {"uid-2": "device busy"}
    assert journal.rpc_calls("NodeUnprepareResources", driver="gpu.example.com") == []
    assert len(journal.rpc_calls()) == 3


def test_concurrent_record_gives_unique_consecutive_seq():
    journal = Journal()
    threads = [
        threading.Thread(target=lambda i=i: [journal.record("api", worker=i, n=n) for n in range(200)])
        for i in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = journal.events()
    assert [e["seq"] for e in events] == list(range(1, 1601))
    assert all(a["t"] <= b["t"] for a, b in itertools.pairwise(events))
    for worker in range(8):
        assert [e["n"] for e in journal.events(worker=worker)] == list(range(200))


def test_wait_for_returns_event_recorded_by_another_thread_and_times_out():
    journal = Journal()
    assert journal.wait_for(0.01, "rpc") is None
    started = threading.Event()

    def later() -> None:
        started.wait(5)
        journal.record("rpc", method=PREPARE)

    thread = threading.Thread(target=later)
    thread.start()
    started.set()
    event = journal.wait_for(5, "rpc", method=PREPARE)
    thread.join()
    assert event is not None
    assert event["seq"] == 1


def test_jsonl_round_trip(tmp_path):
    clock = VirtualClock()
    journal = Journal(clock)
    journal.record("step", index=1, name="start_pod", text="start_pod a")
    clock.advance(0.25)
    rpc(journal, PREPARE, [GPU])
    text = journal.to_jsonl()
    lines = text.splitlines()
    assert len(lines) == 2
    assert list(json.loads(lines[1]))[:3] == ["seq", "t", "kind"]
    target = tmp_path / "sub" / "journal.jsonl"
    journal.write_jsonl(target)
    assert target.read_text() == text
    assert list(target.parent.iterdir()) == [target]  # no temp file left behind
    loaded = Journal.from_jsonl(target)
    assert loaded.events() == journal.events()
    assert loaded.rpc_calls("NodePrepareResources")[0].claims == (GPU,)


def test_from_jsonl_names_file_and_line(tmp_path):
    bad = tmp_path / "j.jsonl"
    bad.write_text('{"seq": 1, "t": 0, "kind": "step"}\n\n[1, 2]\n')
    with pytest.raises(ConfigError, match=r"j\.jsonl:3: expected a JSON object, got list"):
        Journal.from_jsonl(bad)
    bad.write_text('{"seq": 1, "t": 0}\n')
    with pytest.raises(ConfigError, match=r"j\.jsonl:1: event has no 'kind' string"):
        Journal.from_jsonl(bad)
    bad.write_text("{nope\n")
    with pytest.raises(ConfigError, match=r"j\.jsonl:1: not valid JSON"):
        Journal.from_jsonl(bad)
    with pytest.raises(ConfigError, match="cannot read journal"):
        Journal.from_jsonl(tmp_path / "missing.jsonl")


def test_merge_jsonl_folds_in_new_complete_lines_only(tmp_path):
    journal = Journal(VirtualClock())
    journal.record("step", index=1, name="start_pod", text="start_pod a")
    plugin_file = tmp_path / "plugin.jsonl"
    assert journal.merge_jsonl(plugin_file, source="fake-plugin") == 0  # not there yet
    line = {
        "seq": 1,
        "t": 0.5,
        "kind": "rpc",
        "side": "plugin",
        "driver": "gpu.example.com",
        "method": PREPARE,
        "request": {"claims": [{"namespace": "default", "uid": "uid-1", "name": "gpu"}]},
        "code": "OK",
    }
    with plugin_file.open("w") as handle:
        handle.write(json.dumps(line) + "\n")
        handle.write('{"seq": 2, "kind": "rpc", "met')  # a line still being written
    assert journal.merge_jsonl(plugin_file, source="fake-plugin") == 1
    merged = journal.events(source="fake-plugin")
    assert len(merged) == 1
    assert merged[0]["seq"] == 2
    assert merged[0]["source_seq"] == 1
    assert merged[0]["source_t"] == 0.5
    assert journal.rpc_calls("NodePrepareResources", side="plugin")[0].claims == (GPU,)
    with plugin_file.open("a") as handle:
        handle.write('hod": "x"}\nnot json\n')
    assert journal.merge_jsonl(plugin_file, source="fake-plugin") == 2
    kinds = [e["kind"] for e in journal.events()]
    assert kinds == ["step", "rpc", "rpc", "merge-error"]
    error = journal.events("merge-error")[0]
    assert error["line"] == 3
    assert error["message"].startswith("not valid JSON")
    assert journal.merge_jsonl(plugin_file, source="fake-plugin") == 0


def test_merge_jsonl_places_wall_stamped_lines_on_the_journal_timeline(tmp_path):
    journal = Journal()
    plugin_file = tmp_path / "p.jsonl"
    lines = [
        {"kind": "rpc", "wall": journal.started_wall + 2.0},
        {"kind": "rpc", "start": journal.started_wall + 3.0},  # the fake plugin's stamp
    ]
    plugin_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    journal.merge_jsonl(plugin_file)
    first, second = journal.events()
    assert first["t"] == pytest.approx(2.0)
    assert second["t"] == pytest.approx(3.0)
    assert first["source"] == "plugin"


def test_describe_event_lines():
    journal = Journal(VirtualClock())
    journal.record("step", index=3, name="delete_pod", text="delete_pod p1")
    rpc(journal, UNPREPARE, [GPU], code="Unavailable", error="boom")
    journal.record(
        "api",
        client="kubelet",
        verb="GET",
        resource="resourceclaims",
        namespace="default",
        name="gpu",
        code=404,
        duration=0.001,
    )
    journal.record("checkpoint", path="/x/dra_manager_state", entries=[{}, {}], size=312)
    journal.record("kubelet", operation="PrepareResources", pod="default/p1", error="failed")
    journal.record("kubelet", operation="ReconcileUnprepare", pod_uid="p-9", error=None)
    journal.record("registration", driver="gpu.example.com", service=None, outcome="deregistered")
    journal.record("api", verb="PATCH", resource="pods", subresource="status", name="p1", code=200)
    journal.record("plugin-process", action="killed", driver="gpu.example.com", pid=42, returncode=-9)
    journal.record("fault", where="rpc", description="NodePrepareResources -> Unavailable x2")
    journal.record("custom", a=1, nested={"x": 1})
    lines = [describe_event(e) for e in journal.events()]
    assert lines == [
        "#1 t=0.000 step 3: delete_pod p1",
        "#2 t=0.000 rpc NodeUnprepareResources gpu.example.com claims=[default/gpu]"
        " -> Unavailable boom (2.0ms)",
        "#3 t=0.000 api kubelet: GET resourceclaims default/gpu -> 404 (1.0ms)",
        "#4 t=0.000 checkpoint write /x/dra_manager_state entries=2 size=312",
        "#5 t=0.000 kubelet PrepareResources pod=default/p1 error=failed",
        "#6 t=0.000 kubelet ReconcileUnprepare pod=p-9 ok",
        "#7 t=0.000 registration gpu.example.com deregistered",
        "#8 t=0.000 api PATCH pods/status p1 -> 200",
        "#9 t=0.000 plugin-process killed gpu.example.com pid=42 returncode=-9",
        "#10 t=0.000 fault rpc: NodePrepareResources -> Unavailable x2",
        "#11 t=0.000 custom a=1",
    ]


def test_ready_events_are_kept_as_handed_over_and_equal_to_recorded_ones():
    from drasim.interfaces import ready_recording

    entry = {"ClaimName": "gpu", "PodUIDs": {"p1": {}}, "DriverState": None}
    response = {"u1": {"devices": [], "error": None}}
    journal = Journal(clock=VirtualClock())
    record = ready_recording(journal)
    assert record == journal.record_ready
    record("checkpoint", {"path": "/x", "entries": [entry], "size": 3})
    record("rpc", {"request": {"claims": []}, "response": {"claims": response}, "duration": 0.5})
    checkpoint, call = journal.events()
    assert list(checkpoint) == ["seq", "t", "kind", "path", "entries", "size"]
    assert (checkpoint["seq"], checkpoint["kind"], call["seq"], call["kind"]) == (1, "checkpoint", 2, "rpc")
    assert checkpoint["entries"] == [entry]
    assert checkpoint["entries"][0] is entry  # the producer vouches it never changes: no copy
    assert call["response"]["claims"] is response
    # The same events recorded the ordinary way (deep conversion) give the same JSON lines.
    plain = Journal(clock=VirtualClock())
    plain.record("checkpoint", path="/x", entries=[entry], size=3)
    plain.record("rpc", request={"claims": []}, response={"claims": response}, duration=0.5)
    assert plain.to_jsonl() == journal.to_jsonl()
    assert plain.events()[0]["entries"][0] is not entry


def test_ready_recording_reaches_other_recorders_through_record_and_skips_the_null_one():
    from drasim.interfaces import NullRecorder, ready_recording

    seen: list[tuple[str, dict[str, object]]] = []

    class Listing:
        def record(self, kind: str, **fields: object) -> None:
            seen.append((kind, fields))

    ready_recording(Listing())("api", {"verb": "get", "code": 200})
    assert seen == [("api", {"verb": "get", "code": 200})]
    ready_recording(NullRecorder())("api", {"verb": "get"})  # dropped, and nothing fails
    assert len(seen) == 1

    class MakesUpAttributes(Listing):  # a proxy or mock answers any name, record_ready too
        def __getattr__(self, name: str) -> object:
            return lambda *args, **kwargs: pytest.fail(f"{name} called instead of record")

    ready_recording(MakesUpAttributes())("api", {"verb": "list"})
    assert seen[-1] == ("api", {"verb": "list"})


def test_an_event_recorded_ready_notifies_waiting_threads() -> None:
    journal = Journal()
    notified: list[int] = []
    journal._cond.notify_all = lambda: notified.append(len(journal._events))  # type: ignore[method-assign]
    journal.record_ready("rpc", {"method": "m"})
    assert notified == []  # nobody waits: no notify
    journal._waiters = 1  # as wait_for() does while it blocks
    journal.record_ready("rpc", {"method": "n"})
    assert notified == [2]  # notified once the event is in
    assert journal.wait_for(0, "rpc", method="n") is not None


# -- hold / release: events on their way -----------------------------------------------------


def _waiting(journal: Journal, thread: threading.Thread) -> bool:
    """Until ``thread`` is done or waits in the journal (its condition has a waiter)."""
    until = sys.modules["drasim_test_proxy_waiting"].until  # loaded by tests/conftest.py
    return bool(until(lambda: not thread.is_alive() or journal._waiters))


@pytest.mark.parametrize("reader", ["mark", "events", "last", "tail", "rpc_calls", "to_jsonl"])
def test_readers_wait_for_a_held_event(reader: str) -> None:
    journal = Journal()
    journal.record("step", index=0)
    ticket = journal.hold()
    out: list[object] = []
    read = threading.Thread(target=lambda: out.append(getattr(journal, reader)()))
    read.start()
    assert _waiting(journal, read)
    assert read.is_alive(), f"{reader}() read while an event was on its way"
    rpc(journal, PREPARE, [GPU])  # the holder's own writes do not wait
    journal.release(ticket)
    read.join(5)
    assert not read.is_alive()
    [value] = out
    expected = {"mark": 2, "events": 2, "last": "rpc", "tail": 2, "rpc_calls": 1, "to_jsonl": 2}[reader]
    if reader == "last":
        assert isinstance(value, dict)
        assert value["kind"] == expected
    elif reader == "to_jsonl":
        assert isinstance(value, str)
        assert value.count("\n") == expected
    else:
        assert (value if isinstance(value, int) else len(value)) == expected  # type: ignore[arg-type]


def test_another_threads_write_goes_after_the_held_events() -> None:
    """The kubelet that had the reply records its consequence after the call's own event."""
    journal = Journal()
    ticket = journal.hold()
    write = threading.Thread(target=lambda: journal.record("kubelet", operation="after-the-reply"))
    write.start()
    assert _waiting(journal, write)
    assert write.is_alive(), "another thread's write went before the held event"
    rpc(journal, PREPARE, [GPU])
    journal.release(ticket)
    write.join(5)
    assert [e["kind"] for e in journal.events()] == ["rpc", "kubelet"]


def test_holds_keep_their_order_across_threads() -> None:
    """Two connections: the newer hold's events wait for the older hold's."""
    journal = Journal()
    older = journal.hold()
    newer_done = threading.Event()

    def newer() -> None:
        ticket = journal.hold()
        journal.record("rpc", side="plugin", method="newer")
        journal.release(ticket)
        newer_done.set()

    thread = threading.Thread(target=newer)
    thread.start()
    assert _waiting(journal, thread)
    assert not newer_done.is_set()
    journal.record("rpc", side="plugin", method="older")
    journal.release(older)
    thread.join(5)
    assert [e["method"] for e in journal.events()] == ["older", "newer"]


def test_a_write_does_not_wait_for_holds_taken_after_it() -> None:
    journal = Journal()
    journal.hold()  # never released, taken by this thread: its own writes go
    journal.record("step", index=0)
    assert journal._holds


def test_a_hold_never_released_delays_others_only_so_long(monkeypatch: pytest.MonkeyPatch) -> None:
    from drasim.journal import journal as module

    monkeypatch.setattr(module, "HOLD_WAIT", 0.05)
    journal = Journal()
    journal.record("step", index=0)
    holder = threading.Thread(target=journal.hold)
    holder.start()
    holder.join(5)
    assert journal.mark() == 1
    journal.record("step", index=1)
    assert [e["index"] for e in journal.events()] == [0, 1]


def test_holds_nest_and_readers_wait_for_the_last_release() -> None:
    journal = Journal()
    first, second = journal.hold(), journal.hold()
    out: list[int] = []
    read = threading.Thread(target=lambda: out.append(journal.mark()))
    read.start()
    assert _waiting(journal, read)
    journal.release(first)
    journal.record("step", index=0)
    assert read.is_alive()
    journal.release(second)
    read.join(5)
    assert out == [1]


def test_holding_finds_a_journals_hold_and_nothing_on_other_recorders() -> None:
    from drasim.interfaces import NullRecorder, holding

    journal = Journal()
    held = holding(journal)
    assert held is not None
    ticket = held[0]()
    assert list(journal._holds) == [ticket]
    held[1](ticket)
    assert not journal._holds
    assert holding(NullRecorder()) is None
