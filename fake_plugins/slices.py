"""The ResourceSlices a fake driver publishes for its node, and a publisher that uses kubernetes.

One pool named after the node with devices ``<prefix>-0`` .. ``<prefix>-(N-1)``,
so an allocator can allocate from it. Like a real driver, the pool is split into
slices of at most 128 devices (upstream's ``ResourceSliceMaxDevices``), each slice
saying how many slices the pool has (``resourceSliceCount``). A publisher is any
callable that takes the desired slices for (driver, node) and makes the API server
match them.
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drasim.errors import ConfigError
from drasim.limits import RESOURCE_SLICE_MAX_DEVICES
from fake_plugins.config import FakeDriverConfig

KubeObject = dict[str, Any]
SlicePublisher = Callable[[list[KubeObject]], None]


def build_slices(config: FakeDriverConfig, *, generation: int = 1) -> list[KubeObject]:
    """The desired ResourceSlices (resource.k8s.io/v1) of the node's pool, 128 devices per slice at most."""
    devices = [
        {
            "name": name,
            "attributes": {"index": {"int": index}, "driverVersion": {"version": "1.0.0"}},
        }
        for index, name in enumerate(config.device_names())
    ]
    step = RESOURCE_SLICE_MAX_DEVICES
    chunks = [devices[start : start + step] for start in range(0, len(devices), step)] or [[]]
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"generateName": f"{config.node_name}-{config.driver_name}-"},
            "spec": {
                "driver": config.driver_name,
                "nodeName": config.node_name,
                "pool": {
                    "name": config.node_name,
                    "generation": generation,
                    "resourceSliceCount": len(chunks),
                },
                "devices": chunk,
            },
        }
        for chunk in chunks
    ]


class KubeSlicePublisher:
    """Creates, updates and deletes this driver's slices for one node through the kubernetes client."""

    def __init__(self, kubeconfig: str | Path, *, driver: str, node: str) -> None:
        from kubernetes import client, config

        try:
            api_client = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
        except Exception as err:
            raise ConfigError(f"{kubeconfig}: cannot load kubeconfig: {err}") from err
        self._api = client.CustomObjectsApi(api_client)
        self.driver = driver
        self.node = node

    def count(self) -> int:
        """How many slices of (driver, node) the API server holds now."""
        selector = f"spec.driver={self.driver},spec.nodeName={self.node}"
        listed = typing.cast(
            dict[str, Any],
            self._api.list_cluster_custom_object(
                "resource.k8s.io", "v1", "resourceslices", field_selector=selector
            ),
        )
        return len(listed.get("items", []))

    def __call__(self, desired: list[KubeObject]) -> None:
        """Make the slices of (driver, node) equal ``desired`` (matched by position)."""
        selector = f"spec.driver={self.driver},spec.nodeName={self.node}"
        listed = typing.cast(
            dict[str, Any],
            self._api.list_cluster_custom_object(
                "resource.k8s.io", "v1", "resourceslices", field_selector=selector
            ),
        )
        existing: list[KubeObject] = listed.get("items", [])
        for index, slice_ in enumerate(desired):
            if index < len(existing):
                current = existing[index]
                current["spec"] = slice_["spec"]
                self._api.replace_cluster_custom_object(
                    "resource.k8s.io", "v1", "resourceslices", current["metadata"]["name"], current
                )
            else:
                self._api.create_cluster_custom_object("resource.k8s.io", "v1", "resourceslices", slice_)
        for extra in existing[len(desired) :]:
            self._api.delete_cluster_custom_object(
                "resource.k8s.io", "v1", "resourceslices", extra["metadata"]["name"]
            )


def keep_published(
    publisher: KubeSlicePublisher,
    desired: Callable[[], list[KubeObject]],
    stop: threading.Event,
    interval: float,
) -> threading.Thread:
    """Re-publish the driver's slices whenever they are gone (the kubelet wipes them at its start).

    A stand-in for the stock helper's ResourceSlice controller, which watches its slices and
    re-creates deleted ones. Checks every ``interval`` seconds until ``stop`` is set; API errors
    are retried at the next check.
    """

    def loop() -> None:
        while not stop.wait(interval):
            try:
                if publisher.count() != len(desired()):
                    publisher(desired())
            except Exception:  # the API server may be down; try again at the next check
                continue

    thread = threading.Thread(target=loop, name="fake-slice-keeper", daemon=True)
    thread.start()
    return thread
