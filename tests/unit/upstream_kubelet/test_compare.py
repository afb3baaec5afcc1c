"""drasim.upstream_kubelet.compare: journals cut into steps and compared."""

from __future__ import annotations

import json
import zlib
from typing import Any

from drasim.upstream_kubelet.compare import (
    canonical_checkpoint,
    canonical_metrics,
    first_divergence,
    steps_of,
)

POD = "2c6e5a90-02bd-5aa0-9c61-6649c4a2859f"


def _checkpoint(entries: list[dict[str, Any]]) -> str:
    data = json.dumps(
        {
            "kind": "DRACheckpoint",
            "apiVersion": "checkpoint.dra.kubelet.k8s.io/v1",
            "ClaimInfoStateList": entries,
        }
    )
    return json.dumps({"Data": data, "Checksum": zlib.crc32(data.encode())})


def _entry(name: str, uid: str) -> dict[str, Any]:
    return {
        "ClaimUID": uid,
        "ClaimName": name,
        "Namespace": "default",
        "PodUIDs": {POD: {}},
        "DriverState": {},
    }


def _journal(
    *, rpc_claims: list[str], error: str | None, entries: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    return [
        {"kind": "step", "t": 1.0, "index": 1, "name": "startPod", "text": "startPod {name: a}"},
        {
            "kind": "rpc",
            "side": "plugin",
            "t": 1.5,
            "duration": 0.1,
            "driver": "gpu.example.com",
            "method": "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
            "request": {"claims": [{"namespace": "default", "name": n} for n in rpc_claims]},
        },
        {"kind": "kubelet", "operation": "PrepareResources", "pod": "default/a", "error": error},
        {"kind": "checkpoint-file", "bytes": _checkpoint(entries)},
        {"kind": "step-end", "index": 1, "name": "startPod", "outcome": "passed"},
    ]


def test_same_run_with_other_uids_and_map_order_agrees() -> None:
    emulated = _journal(
        rpc_claims=["a", "b"],
        error="pod a ("
        + POD
        + ") is not allowed to use ResourceClaim gpu (11111111-1111-1111-1111-111111111111)",
        entries=[
            _entry("a", "11111111-1111-1111-1111-111111111111"),
            _entry("b", "22222222-2222-2222-2222-222222222222"),
        ],
    )
    upstream = _journal(
        rpc_claims=["b", "a"],  # the claims of one request compare as a set
        error="pod a ("
        + POD
        + ") is not allowed to use ResourceClaim gpu (33333333-3333-3333-3333-333333333333)",
        entries=[
            _entry("b", "44444444-4444-4444-4444-444444444444"),
            _entry("a", "55555555-5555-5555-5555-555555555555"),
        ],
    )
    assert first_divergence(emulated, upstream) is None


def test_first_divergence_names_step_and_aspect() -> None:
    emulated = _journal(rpc_claims=["a"], error=None, entries=[_entry("a", "u")])
    upstream = _journal(rpc_claims=["a"], error="prepare dynamic resources: boom", entries=[_entry("a", "u")])
    found = first_divergence(emulated, upstream)
    assert found is not None
    assert (found.step, found.step_name, found.aspect) == (1, "startPod", "errors")
    assert found.emulated == []
    assert found.upstream == [["PrepareResources", "default/a", "prepare dynamic resources: boom"]]


def test_a_late_call_belongs_to_the_step_it_began_in() -> None:
    journal = [
        {"kind": "step", "t": 1.0, "index": 1, "name": "startPod"},
        {"kind": "step-end", "index": 1, "name": "startPod", "outcome": "passed"},
        {"kind": "step", "t": 2.0, "index": 2, "name": "advance"},
        # recorded in step 2, but it began at t=1.5 (a call the kubelet gave up on)
        {"kind": "rpc", "side": "plugin", "t": 2.5, "duration": 1.0, "method": "x/NodePrepareResources"},
    ]
    steps = steps_of(journal)
    assert [len(s.rpc) for s in steps] == [0, 1, 0]


def test_checkpoint_checksum_and_truncation() -> None:
    good = canonical_checkpoint(_checkpoint([_entry("a", "u")]))
    assert good["checksumOk"] is True
    assert good["data"]["ClaimInfoStateList"][0]["ClaimUID"] == "<uid of default/a>"
    broken = json.loads(_checkpoint([]))
    broken["Checksum"] += 1
    assert canonical_checkpoint(json.dumps(broken))["checksumOk"] is False
    cut = canonical_checkpoint('{"Data":"{\\"ClaimUID\\":\\"12345678-1234-1234-1234-123456789abc')
    assert cut == {"unparsed": '{"Data":"{\\"ClaimUID\\":\\"<uid>'}


def test_a_run_that_stopped_early_differs_in_outcome() -> None:
    upstream = _journal(rpc_claims=["a"], error=None, entries=[])
    emulated = [*upstream, {"kind": "step", "t": 3.0, "index": 2, "name": "deletePod"}]
    found = first_divergence(emulated, upstream)
    assert found is not None
    assert (found.step, found.aspect) == (2, "outcome")
    assert found.upstream == "(the run stopped before this step)"


def test_devices_raced_by_a_parallel_step_compare_as_a_set() -> None:
    def run(first: str, second: str) -> list[dict[str, Any]]:
        entries = [
            _entry("c1", "u1") | {"DriverState": {"d": {"Devices": [{"DeviceName": first}]}}},
            _entry("c2", "u2") | {"DriverState": {"d": {"Devices": [{"DeviceName": second}]}}},
        ]
        return [
            {
                "kind": "step",
                "t": 1.0,
                "index": 1,
                "name": "parallel",
                "text": "parallel {steps: [startPod...]}",
            },
            {
                "kind": "kubelet",
                "operation": "GetResources",
                "pod": "default/p1",
                "container": "c",
                "cdi": [[first]],
            },
            {
                "kind": "kubelet",
                "operation": "GetResources",
                "pod": "default/p2",
                "container": "c",
                "cdi": [[second]],
            },
            {"kind": "checkpoint-file", "bytes": _checkpoint(entries)},
            {"kind": "step-end", "index": 1, "name": "parallel", "outcome": "passed"},
        ]

    assert first_divergence(run("gpu-0", "gpu-1"), run("gpu-1", "gpu-0")) is None
    found = first_divergence(run("gpu-0", "gpu-1"), run("gpu-0", "gpu-2"))
    assert found is not None
    assert found.aspect == "cdi"


def _writes_journal(step_name: str, writes: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"kind": "step", "t": 1.0, "index": 1, "name": step_name, "text": f"{step_name} {{}}"},
    ]
    events += [{"kind": "checkpoint", "path": "/x", "bytes": _checkpoint(w)} for w in writes]
    events.append({"kind": "step-end", "index": 1, "name": step_name, "outcome": "passed"})
    return events


def test_every_checkpoint_write_is_compared_and_the_first_differing_one_is_named() -> None:
    a = _entry("a", "11111111-1111-1111-1111-111111111111")
    b = _entry("b", "22222222-2222-2222-2222-222222222222")
    emulated = _writes_journal("startPod", [[a], [a, b], [a, b]])
    upstream = _writes_journal("startPod", [[a], [a, b]])
    assert [len(s.writes) for s in steps_of(emulated)] == [0, 3]
    divergence = first_divergence(emulated, upstream)
    assert divergence is not None
    assert divergence.aspect == "writes"
    assert divergence.emulated["write"] == 3
    assert divergence.emulated["of"] == 3
    assert divergence.emulated["checkpoint"] is not None
    assert divergence.upstream == {"write": 3, "of": 2, "checkpoint": None}


def test_same_writes_with_other_uids_agree() -> None:
    first = _writes_journal("startPod", [[_entry("a", "11111111-1111-1111-1111-111111111111")]])
    second = _writes_journal("startPod", [[_entry("a", "33333333-3333-3333-3333-333333333333")]])
    assert first_divergence(first, second) is None


def test_writes_of_a_parallel_step_compare_by_number_only() -> None:
    a = _entry("a", "11111111-1111-1111-1111-111111111111")
    b = _entry("b", "22222222-2222-2222-2222-222222222222")
    assert (
        first_divergence(
            _writes_journal("parallel", [[a], [a, b]]), _writes_journal("parallel", [[b], [a, b]])
        )
        is None
    )
    divergence = first_divergence(
        _writes_journal("parallel", [[a]]), _writes_journal("parallel", [[a], [a, b]])
    )
    assert divergence is not None
    assert divergence.aspect == "writes"
    assert divergence.emulated["writes"] == 1
    assert divergence.upstream["writes"] == 2


UPSTREAM_METRICS = """# HELP dra_operations_duration_seconds [ALPHA] Latency histogram
# TYPE dra_operations_duration_seconds histogram
dra_operations_duration_seconds_bucket{is_error="false",operation_name="PrepareResources",le="0.1"} 1
dra_operations_duration_seconds_bucket{is_error="false",operation_name="PrepareResources",le="+Inf"} 1
dra_operations_duration_seconds_sum{is_error="false",operation_name="PrepareResources"} 0.0123
dra_operations_duration_seconds_count{is_error="false",operation_name="PrepareResources"} 1
# TYPE dra_resource_claims_in_use gauge
dra_resource_claims_in_use{driver_name="<any>"} 1
dra_resource_claims_in_use{driver_name="gpu.example.com"} 1
# TYPE go_goroutines gauge
go_goroutines 42
"""


def test_canonical_metrics_keeps_dra_names_labels_values_and_counts_not_durations() -> None:
    metrics = canonical_metrics(UPSTREAM_METRICS)
    assert sorted(metrics) == ["dra_operations_duration_seconds", "dra_resource_claims_in_use"]
    assert metrics["dra_operations_duration_seconds"] == {
        "type": "histogram",
        "series": [([["is_error", "false"], ["operation_name", "PrepareResources"]], 1)],
    }
    assert metrics["dra_resource_claims_in_use"]["series"] == [
        ([["driver_name", "<any>"]], 1.0),
        ([["driver_name", "gpu.example.com"]], 1.0),
    ]
    slower = UPSTREAM_METRICS.replace("0.0123", "7.5").replace('le="0.1"} 1', 'le="0.1"} 0')
    assert canonical_metrics(slower) == metrics


def test_metrics_difference_is_reported_after_the_checkpoint() -> None:
    def run(text: str) -> list[dict[str, Any]]:
        return [
            {"kind": "step", "t": 1.0, "index": 1, "name": "startPod", "text": "startPod {}"},
            {"kind": "metrics-snapshot", "text": text},
            {"kind": "step-end", "index": 1, "name": "startPod", "outcome": "passed"},
        ]

    assert first_divergence(run(UPSTREAM_METRICS), run(UPSTREAM_METRICS)) is None
    fewer = UPSTREAM_METRICS.replace('dra_resource_claims_in_use{driver_name="gpu.example.com"} 1\n', "")
    divergence = first_divergence(run(UPSTREAM_METRICS), run(fewer))
    assert divergence is not None
    assert divergence.aspect == "metrics"


def test_a_containers_devices_compare_without_the_order_of_its_claims() -> None:
    def run(groups: list[list[str]]) -> list[dict[str, Any]]:
        return [
            {"kind": "step", "t": 1.0, "index": 1, "name": "startPod", "text": "startPod {}"},
            {
                "kind": "kubelet",
                "operation": "GetResources",
                "pod": "default/a",
                "container": "c",
                "cdi": groups,
            },
            {"kind": "step-end", "index": 1, "name": "startPod", "outcome": "passed"},
        ]

    gpu, nic = ["gpu.example.com/gpu=gpu-0"], ["nic.example.com/nic=nic-0"]
    assert first_divergence(run([gpu, nic]), run([nic, gpu])) is None
    divergence = first_divergence(run([gpu, nic]), run([gpu]))
    assert divergence is not None
    assert divergence.aspect == "cdi"


def test_errors_naming_each_runs_own_node_directory_agree() -> None:
    """Each run has its own node directory; a socket path in an error must not make a differ."""
    refused = (
        'connection error: desc = "transport: Error while dialing: dial unix {}/kubelet/plugins/gpu/dra.sock"'
    )
    a = _journal(rpc_claims=["gpu"], error=refused.format("/dev/shm/drasim-ab12"), entries=[])
    b = _journal(rpc_claims=["gpu"], error=refused.format("/tmp/drasim-zz9q"), entries=[])
    assert first_divergence(a, b) is None
    other = _journal(
        rpc_claims=["gpu"], error=refused.format("/dev/shm/drasim-ab12").replace("gpu/", "nic/"), entries=[]
    )
    assert first_divergence(a, other) is not None
