"""allocate(): realistic slices and claims, shared devices, every error path."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from drasim.allocator import AllocationError, allocate

DRIVER = "gpu.example.com"
NIC = "nic.example.com"


def gpu_slice(node: str = "n1", count: int = 8, *, generation: int = 1, **spec: Any) -> dict[str, Any]:
    """The example driver's slice: gpu-0..gpu-N with attributes and 80Gi memory."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}-abcde"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "index": {"int": i},
                        "productName": {"string": "LATEST-GPU-MODEL"},
                        "driverVersion": {"version": "1.0.0"},
                        "uuid": {"string": f"gpu-uuid-{i}"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(count)
            ],
            **spec,
        },
    }


def device_class(name: str = DRIVER, expression: str | None = None, **spec: Any) -> dict[str, Any]:
    expr = expression if expression is not None else f'device.driver == "{name}"'
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expr}}], **spec},
    }


def claim(name: str = "gpu", *requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
    reqs = list(requests) or [exact("gpu")]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": reqs, **devices}},
    }


def exact(name: str, count: int | None = None, cls: str = DRIVER, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": cls, **extra}
    if count is not None:
        body["count"] = count
    return {"name": name, "exactly": body}


def pod(name: str = "pod-a", namespace: str = "default") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"}}


def run(c: dict[str, Any], *, slices: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "slices": [gpu_slice()] if slices is None else slices,
        "classes": [device_class()],
        "allocated_claims": [],
        "node_name": "n1",
        "pods": [],
    }
    args.update(kw)
    return allocate(c, **args)


def devices(result: dict[str, Any]) -> list[str]:
    return [r["device"] for r in result["status"]["allocation"]["devices"]["results"]]


BY_NAME_N1 = {
    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
}


def test_allocates_first_devices_like_the_scheduler() -> None:
    out = run(claim("gpu", exact("gpu", 2)), pods=[pod()])
    assert out["status"] == {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"},
                    {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-1"},
                ]
            },
            "nodeSelector": BY_NAME_N1,
        },
        "reservedFor": [{"resource": "pods", "name": "pod-a", "uid": "uid-pod-a"}],
    }


def test_is_pure() -> None:
    original = claim("gpu", exact("gpu", 2))
    frozen = copy.deepcopy(original)
    slices = [gpu_slice()]
    frozen_slices = copy.deepcopy(slices)
    run(original, slices=slices, pods=[pod()])
    assert original == frozen
    assert slices == frozen_slices


def test_shared_devices_are_not_double_allocated() -> None:
    first = run(claim("a", exact("gpu", 3)))
    second = run(claim("b", exact("gpu", 3)), allocated_claims=[first])
    assert devices(first) == ["gpu-0", "gpu-1", "gpu-2"]
    assert devices(second) == ["gpu-3", "gpu-4", "gpu-5"]
    with pytest.raises(AllocationError) as info:
        run(claim("c", exact("gpu", 3)), allocated_claims=[first, second])
    assert str(info.value) == (
        "cannot allocate claim default/c: request gpu needs 3 devices of class gpu.example.com, "
        "2 available on node n1 (gpu-0 used by default/a, gpu-1 used by default/a, gpu-2 used by default/a, "
        "gpu-3 used by default/b, gpu-4 used by default/b, gpu-5 used by default/b)"
    )


def test_the_claim_itself_in_the_store_does_not_block_it() -> None:
    allocated = run(claim("a", exact("gpu", 2)))
    again = copy.deepcopy(claim("a", exact("gpu", 2)))
    assert devices(run(again, allocated_claims=[allocated])) == ["gpu-0", "gpu-1"]


def test_already_allocated_claim_only_gains_reservations() -> None:
    allocated = run(claim("a", exact("gpu", 1)), pods=[pod("p1")])
    out = run(allocated, slices=[], pods=[pod("p1"), pod("p2")])
    assert out["status"]["allocation"] == allocated["status"]["allocation"]
    assert [r["name"] for r in out["status"]["reservedFor"]] == ["p1", "p2"]


def test_only_devices_on_the_node_count() -> None:
    with pytest.raises(AllocationError, match=r"1 device of class gpu.example.com, 0 available on node n1$"):
        run(claim(), slices=[gpu_slice("n2")])


def test_only_the_newest_pool_generation_counts() -> None:
    old = gpu_slice(count=8, generation=1)
    new = gpu_slice(count=1, generation=2)
    new["metadata"]["name"] = "newer"
    with pytest.raises(AllocationError, match=r"needs 2 devices .* 1 available"):
        run(claim("c", exact("gpu", 2)), slices=[old, new])


def test_class_selector_filters_other_drivers() -> None:
    nic_slice = gpu_slice()
    nic_slice["spec"]["driver"] = NIC
    nic_slice["metadata"]["name"] = "aaa-nic"
    out = run(claim("c", exact("gpu", 2)), slices=[nic_slice, gpu_slice()])
    assert {r["driver"] for r in out["status"]["allocation"]["devices"]["results"]} == {DRIVER}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.attributes["gpu.example.com"].index >= 6', ["gpu-6", "gpu-7"]),
        (
            "device.attributes['gpu.example.com']['index'] == 3 || "
            "device.attributes['gpu.example.com'].index == 5",
            ["gpu-3", "gpu-5"],
        ),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', ["gpu-0", "gpu-1"]),
        (
            'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("0.9.0"))',
            ["gpu-0", "gpu-1"],
        ),
        (
            '"uuid" in device.attributes["gpu.example.com"] && '
            '!(device.attributes["gpu.example.com"].index < 4)',
            ["gpu-4", "gpu-5"],
        ),
        (
            'device.attributes["gpu.example.com"].uuid.endsWith("-7") || '
            'device.attributes["gpu.example.com"].uuid.endsWith("-2")',
            ["gpu-2", "gpu-7"],
        ),
    ],
)
def test_request_selectors_subset(expression: str, expected: list[str]) -> None:
    req = exact("gpu", 2, selectors=[{"cel": {"expression": expression}}])
    assert devices(run(claim("c", req))) == expected


def test_unsupported_selector_is_reported() -> None:
    expr = 'cel.bind(dra, device.attributes["gpu.example.com"], dra.index > 1)'
    req = exact("gpu", 1, selectors=[{"cel": {"expression": expr}}])
    with pytest.raises(AllocationError, match=r"selector not supported: cel\.bind"):
        run(claim("c", req))


def test_missing_attribute_aborts_like_cel() -> None:
    req = exact(
        "gpu", 1, selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].numa == 1'}}]
    )
    with pytest.raises(AllocationError, match=r"no such key: gpu.example.com.numa"):
        run(claim("c", req))


def test_allocation_mode_all() -> None:
    out = run(claim("c", exact("gpu", allocationMode="All")))
    assert devices(out) == [f"gpu-{i}" for i in range(8)]
    holder = run(claim("h", exact("gpu", 1)))
    with pytest.raises(
        AllocationError,
        match=r"needs all devices .* 1 are unavailable \(gpu-0 used by default/h\)",
    ):
        run(claim("c", exact("gpu", allocationMode="All")), allocated_claims=[holder])


def test_allocation_mode_all_needs_complete_pool() -> None:
    partial = gpu_slice()
    partial["spec"]["pool"]["resourceSliceCount"] = 2
    with pytest.raises(AllocationError, match=r"pools gpu.example.com/n1 are incomplete"):
        run(claim("c", exact("gpu", allocationMode="All")), slices=[partial])


def test_first_available_falls_back_to_later_subrequest() -> None:
    req = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "big", "deviceClassName": DRIVER, "count": 10},
            {"name": "small", "deviceClassName": DRIVER, "count": 2},
        ],
    }
    out = run(claim("c", req))
    results = out["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [("gpu/small", "gpu-0"), ("gpu/small", "gpu-1")]


def test_first_available_error_lists_every_subrequest() -> None:
    req = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "big", "deviceClassName": DRIVER, "count": 10},
            {"name": "bigger", "deviceClassName": DRIVER, "count": 20},
        ],
    }
    with pytest.raises(AllocationError) as info:
        run(claim("c", req))
    assert "request gpu: no subrequest can be satisfied: request gpu/big needs 10 devices" in str(info.value)
    assert "request gpu/bigger needs 20 devices" in str(info.value)


def test_admin_access_ignores_and_does_not_block_other_claims() -> None:
    holder = run(claim("h", exact("gpu", 8)))
    admin = run(claim("admin", exact("gpu", 1, adminAccess=True)), allocated_claims=[holder])
    result = admin["status"]["allocation"]["devices"]["results"][0]
    assert result["device"] == "gpu-0"
    assert result["adminAccess"] is True
    other = run(claim("o", exact("gpu", 1)), allocated_claims=[admin])
    assert devices(other) == ["gpu-0"]


def test_tainted_devices_need_a_toleration() -> None:
    tainted = gpu_slice(count=2)
    tainted["spec"]["devices"][0]["taints"] = [
        {"key": "example.com/ecc", "value": "bad", "effect": "NoSchedule"}
    ]
    tainted["spec"]["devices"][1]["taints"] = [{"key": "example.com/info", "effect": "None"}]
    assert devices(run(claim("c", exact("gpu", 1)), slices=[tainted])) == ["gpu-1"]
    with pytest.raises(AllocationError, match=r"needs 2 devices .* 1 available"):
        run(claim("c", exact("gpu", 2)), slices=[tainted])
    toleration = {"key": "example.com/ecc", "operator": "Equal", "value": "bad", "effect": "NoSchedule"}
    out = run(claim("c", exact("gpu", 2, tolerations=[toleration])), slices=[tainted])
    assert devices(out) == ["gpu-0", "gpu-1"]
    assert out["status"]["allocation"]["devices"]["results"][0]["tolerations"] == [toleration]
    wrong_value = {**toleration, "value": "good"}
    with pytest.raises(AllocationError):
        run(claim("c", exact("gpu", 2, tolerations=[wrong_value])), slices=[tainted])


def test_match_attribute_backtracks() -> None:
    s = gpu_slice(count=3)
    for dev, numa in zip(s["spec"]["devices"], [0, 1, 1], strict=True):
        dev["attributes"]["numa"] = {"int": numa}
    c = claim("c", exact("a"), exact("b"), constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    out = run(c, slices=[s])
    assert [(r["request"], r["device"]) for r in out["status"]["allocation"]["devices"]["results"]] == [
        ("a", "gpu-1"),
        ("b", "gpu-2"),
    ]


def test_distinct_attribute() -> None:
    s = gpu_slice(count=3)
    for dev, numa in zip(s["spec"]["devices"], [0, 0, 1], strict=True):
        dev["attributes"]["numa"] = {"int": numa}
    c = claim(
        "c", exact("gpu", 2), constraints=[{"requests": ["gpu"], "distinctAttribute": "gpu.example.com/numa"}]
    )
    assert devices(run(c, slices=[s])) == ["gpu-0", "gpu-2"]


def test_unsatisfiable_constraint_message() -> None:
    c = claim("c", exact("gpu", 2), constraints=[{"matchAttribute": "gpu.example.com/uuid"}])
    with pytest.raises(AllocationError, match=r"constraints or the pools' shared counters cannot be met"):
        run(c)


def test_capacity_requirements() -> None:
    s = gpu_slice(count=2)
    s["spec"]["devices"][0]["capacity"]["memory"]["value"] = "40Gi"
    c = claim("c", exact("gpu", 1, capacity={"requests": {"gpu.example.com/memory": "64Gi"}}))
    assert devices(run(c, slices=[s])) == ["gpu-1"]


def test_class_and_claim_config_are_copied() -> None:
    cls = device_class(config=[{"opaque": {"driver": DRIVER, "parameters": {"from": "class"}}}])
    claim_config = {"requests": ["gpu"], "opaque": {"driver": DRIVER, "parameters": {"from": "claim"}}}
    out = run(claim("c", exact("gpu"), config=[claim_config]), classes=[cls])
    assert out["status"]["allocation"]["devices"]["config"] == [
        {
            "source": "FromClass",
            "requests": ["gpu"],
            "opaque": {"driver": DRIVER, "parameters": {"from": "class"}},
        },
        {
            "source": "FromClaim",
            "requests": ["gpu"],
            "opaque": {"driver": DRIVER, "parameters": {"from": "claim"}},
        },
    ]


def test_all_nodes_slice_has_no_node_selector() -> None:
    s = gpu_slice()
    del s["spec"]["nodeName"]
    s["spec"]["allNodes"] = True
    out = run(claim(), slices=[s])
    assert "nodeSelector" not in out["status"]["allocation"]
    assert devices(out) == ["gpu-0"]


def test_node_selector_slice_matches_labels_and_is_copied() -> None:
    selector = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]
    }
    s = gpu_slice()
    del s["spec"]["nodeName"]
    s["spec"]["nodeSelector"] = selector
    out = run(claim(), slices=[s], node_labels={"rack": "r1"})
    assert out["status"]["allocation"]["nodeSelector"] == selector
    with pytest.raises(AllocationError):
        run(claim(), slices=[s], node_labels={"rack": "r2"})


def test_per_device_node_selection() -> None:
    s = gpu_slice(count=3)
    del s["spec"]["nodeName"]
    s["spec"]["perDeviceNodeSelection"] = True
    s["spec"]["devices"][0]["nodeName"] = "n2"
    s["spec"]["devices"][1]["nodeName"] = "n1"
    s["spec"]["devices"][2]["allNodes"] = True
    out = run(claim("c", exact("gpu", 2)), slices=[s])
    assert devices(out) == ["gpu-1", "gpu-2"]
    assert out["status"]["allocation"]["nodeSelector"] == BY_NAME_N1


@pytest.mark.parametrize(
    ("request_", "needle"),
    [
        (
            exact("gpu", cls="missing.example.com"),
            "request gpu: device class 'missing.example.com' not found",
        ),
        (exact("gpu", allocationMode="Most"), "request gpu: unsupported allocationMode 'Most'"),
        ({"name": "gpu"}, "request gpu sets neither exactly nor firstAvailable"),
        (exact("gpu", 0), None),
    ],
)
def test_request_errors(request_: dict[str, Any], needle: str | None) -> None:
    if needle is None:  # count 0 means "unset" in JSON and defaults to 1
        assert devices(run(claim("c", request_))) == ["gpu-0"]
        return
    with pytest.raises(AllocationError, match=f"^cannot allocate claim default/c: {needle}"):
        run(claim("c", request_))


def test_pod_in_another_namespace_is_refused() -> None:
    with pytest.raises(AllocationError, match=r"only be used by pods in its own namespace"):
        run(claim(), pods=[pod("p", namespace="other")])


def test_pod_without_uid_is_refused() -> None:
    with pytest.raises(AllocationError, match=r"has no metadata.uid"):
        run(claim(), pods=[{"metadata": {"name": "p"}}])


def test_claim_without_requests_gets_an_empty_allocation() -> None:
    c = claim()
    c["spec"]["devices"]["requests"] = []
    assert run(c)["status"]["allocation"] == {"devices": {}}


def partitioned_slices() -> list[dict[str, Any]]:
    """One GPU's 80Gi as a shared counter, published as the whole GPU and two 40Gi halves."""
    pool = {"name": "n1", "generation": 1, "resourceSliceCount": 2}
    counters = {
        "metadata": {"name": "n1-counters"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "n1",
            "pool": pool,
            "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
        },
    }

    def part(name: str, memory: str) -> dict[str, Any]:
        return {
            "name": name,
            "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}],
        }

    devices_slice = {
        "metadata": {"name": "n1-devices"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "n1",
            "pool": pool,
            "devices": [part("whole", "80Gi"), part("half-0", "40Gi"), part("half-1", "40Gi")],
        },
    }
    return [counters, devices_slice]


def held(name: str, *device_names: str) -> dict[str, Any]:
    results = [{"request": "gpu", "driver": DRIVER, "pool": "n1", "device": d} for d in device_names]
    c = claim(name)
    c["status"] = {"allocation": {"devices": {"results": results}}}
    return c


def test_shared_counters_choose_partitions_that_fit_together() -> None:
    out = run(claim("c", exact("gpu", 2)), slices=partitioned_slices())
    assert devices(out) == ["half-0", "half-1"]


def test_shared_counters_held_by_other_claims_block_devices() -> None:
    out = run(
        claim("c", exact("gpu", 1)), slices=partitioned_slices(), allocated_claims=[held("h", "half-0")]
    )
    assert devices(out) == ["half-1"]
    with pytest.raises(AllocationError) as info:
        run(claim("c", exact("gpu", 1)), slices=partitioned_slices(), allocated_claims=[held("h", "whole")])
    assert str(info.value) == (
        "cannot allocate claim default/c: request gpu needs 1 device of class gpu.example.com, 0 available "
        "on node n1 (whole used by default/h, half-0 blocked by exhausted shared counters, "
        "half-1 blocked by exhausted shared counters)"
    )


def test_v1beta1_slices_with_basic_devices() -> None:
    s = gpu_slice(count=3)
    s["apiVersion"] = "resource.k8s.io/v1beta1"
    s["spec"]["devices"] = [
        {"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
        for d in s["spec"]["devices"]
    ]
    req = exact(
        "gpu", 1, selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].index == 2'}}]
    )
    assert devices(run(claim("c", req), slices=[s])) == ["gpu-2"]


def test_a_request_that_cannot_be_met_alone_fails_without_searching_the_others() -> None:
    """Thirty requests of 32 devices each could be met alone on a 32-device node, and trying their
    combinations would never end; the last request wants 33 devices, which no device set can
    give even alone, so the claim is refused before any combination is tried."""
    c = claim("c", *[exact(f"r{i}", 32) for i in range(30)], exact("big", 33))
    calls: list[int] = []

    def cancelled() -> bool:
        calls.append(1)
        return False

    with pytest.raises(AllocationError, match="cannot allocate claim default/c"):
        run(c, slices=[gpu_slice(count=32)], cancelled=cancelled)
    assert calls == []  # refused before the search tried a single combination


def test_a_hopeless_search_is_bounded_by_the_devices_it_places() -> None:
    """Every request can be met alone, no combination meets the constraint: the search stops
    after MAX_WORK devices placed, with an error that says so, whatever the claim's size."""
    from drasim.allocator import search as search_module

    s = gpu_slice(count=40)
    for i, dev in enumerate(s["spec"]["devices"]):
        dev["attributes"]["numa"] = {"int": i}  # all different: matchAttribute over 2+ never holds
    c = claim(
        "c",
        *[exact(f"r{i}", 8) for i in range(4)],
        constraints=[{"matchAttribute": "gpu.example.com/numa"}],
    )
    with pytest.raises(AllocationError, match=r"gave up after trying \d+ device combinations") as info:
        run(c, slices=[s])
    tries = int(str(info.value).split("trying ")[1].split()[0])
    # 8 devices per combination: the bound is on devices placed, so far fewer than MAX_WORK tries.
    assert tries <= search_module.MAX_WORK // 8 + 1


def test_a_cancelled_search_stops() -> None:
    s = gpu_slice(count=40)
    for i, dev in enumerate(s["spec"]["devices"]):
        dev["attributes"]["numa"] = {"int": i}
    c = claim(
        "c", *[exact(f"r{i}", 2) for i in range(6)], constraints=[{"matchAttribute": "gpu.example.com/numa"}]
    )
    looks: list[int] = []

    def cancelled() -> bool:
        looks.append(1)
        return len(looks) >= 3

    with pytest.raises(AllocationError, match="cancelled"):
        run(c, slices=[s], cancelled=cancelled)
    assert len(looks) == 3
