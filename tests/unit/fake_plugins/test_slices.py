"""The fake driver publishes its pool as ResourceSlices of at most 128 devices, as real drivers must."""

from __future__ import annotations

from typing import Any

import pytest

from drasim.allocator.inventory import gather_candidates
from drasim.apiserver import MemoryCluster, store
from drasim.errors import ApiError, ConfigError
from drasim.limits import MAX_NODE_DEVICES, RESOURCE_SLICE_MAX_DEVICES
from fake_plugins.config import FakeDriverConfig
from fake_plugins.slices import build_slices


@pytest.mark.parametrize(
    ("devices", "sizes"),
    [(0, [0]), (1, [1]), (128, [128]), (129, [128, 1]), (300, [128, 128, 44]), (4096, [128] * 32)],
)
def test_the_pool_is_split_into_slices_of_at_most_128_devices(devices: int, sizes: list[int]) -> None:
    slices = build_slices(FakeDriverConfig(node_name="n1", devices=devices), generation=3)
    assert [len(s["spec"]["devices"]) for s in slices] == sizes
    for item in slices:
        assert item["spec"]["pool"] == {"name": "n1", "generation": 3, "resourceSliceCount": len(sizes)}
        assert item["spec"]["nodeName"] == "n1"
    names = [d["name"] for s in slices for d in s["spec"]["devices"]]
    assert names == [f"gpu-{i}" for i in range(devices)]
    assert RESOURCE_SLICE_MAX_DEVICES == 128


def test_the_allocator_sees_every_device_of_a_split_pool() -> None:
    slices = build_slices(FakeDriverConfig(node_name="n1", devices=300))
    for n, item in enumerate(slices):
        item["metadata"] = {"name": f"slice-{n}"}
    candidates = gather_candidates(slices, "n1", {})
    assert len(candidates) == 300
    assert all(c.pool_complete for c in candidates)


def test_an_incomplete_split_pool_is_seen_as_incomplete() -> None:
    slices = build_slices(FakeDriverConfig(node_name="n1", devices=300))[:2]
    for n, item in enumerate(slices):
        item["metadata"] = {"name": f"slice-{n}"}
    candidates = gather_candidates(slices, "n1", {})
    assert len(candidates) == 256
    assert not any(c.pool_complete for c in candidates)


@pytest.mark.parametrize("devices", [-1, MAX_NODE_DEVICES + 1])
def test_the_device_count_is_bounded(devices: int) -> None:
    expected = rf"driver\.devices: must be 0 to {MAX_NODE_DEVICES}, got {devices}"
    with pytest.raises(ConfigError, match=expected):
        FakeDriverConfig.from_dict({"driverName": "gpu.example.com", "devices": devices})


def _slice(devices: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}"} for i in range(devices)],
        },
    }


def test_the_api_server_refuses_a_slice_of_more_than_128_devices_like_upstream() -> None:
    assert store.RESOURCE_SLICE_MAX_DEVICES == RESOURCE_SLICE_MAX_DEVICES
    api = MemoryCluster()
    created = api.create(_slice(128))
    with pytest.raises(ApiError) as info:
        api.create({**_slice(129), "metadata": {"name": "t"}})
    assert info.value.code == 422
    assert str(info.value) == (
        'ResourceSlice "t" is invalid: spec.devices: Too many: 129: must have at most 128 items'
    )
    created["spec"]["devices"].append({"name": "gpu-128"})
    with pytest.raises(ApiError, match=r"spec\.devices: Too many: 129"):
        api.update(created)
