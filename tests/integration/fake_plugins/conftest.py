"""Fixtures for talking to fake drivers over real unix sockets with raw gRPC stubs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from drasim._proto.dra.v1 import api_pb2 as dra_v1
from drasim._proto.dra.v1 import api_pb2_grpc as dra_v1_grpc
from drasim._proto.dra.v1beta1 import api_pb2 as dra_v1beta1
from drasim._proto.dra.v1beta1 import api_pb2_grpc as dra_v1beta1_grpc
from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.errors import ApiError
from fake_plugins import FakeDriver, FakeDriverConfig

DRIVER = "gpu.example.com"


def make_claim(
    name: str,
    uid: str,
    devices: tuple[tuple[str, str], ...] = (("gpu", "gpu-0"),),
    *,
    namespace: str = "default",
    driver: str = DRIVER,
    allocated: bool = True,
    share_id: str | None = None,
) -> dict[str, Any]:
    """An allocated ResourceClaim; ``devices`` holds (request, device) pairs in pool node-1."""
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": uid},
        "spec": {"devices": {"requests": [{"name": r.split("/")[0]} for r, _ in devices]}},
        "status": {},
    }
    if allocated:
        results = []
        for request, device in devices:
            result = {"request": request, "driver": driver, "pool": "node-1", "device": device}
            if share_id is not None:
                result["shareID"] = share_id
            results.append(result)
        claim["status"]["allocation"] = {"devices": {"results": results}}
    return claim


class Claims(dict[tuple[str, str], dict[str, Any]]):
    """An in-memory claim source: ``claims.add(obj)``; a missing claim raises ApiError NotFound."""

    def add(self, claim: dict[str, Any]) -> dict[str, Any]:
        meta = claim["metadata"]
        self[(meta["namespace"], meta["name"])] = claim
        return claim

    def __call__(self, namespace: str, name: str) -> dict[str, Any]:
        try:
            return self[(namespace, name)]
        except KeyError:
            raise ApiError.not_found("resourceclaims.resource.k8s.io", name) from None


class Wire:
    """Raw gRPC stubs for one driver's sockets."""

    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver
        # A private subchannel pool: a channel to a socket that was refused moments ago
        # would otherwise share the global subchannel and its reconnect backoff.
        options = [("grpc.use_local_subchannel_pool", 1)]
        self.reg_channel = grpc.insecure_channel(f"unix:{driver.registration_socket}", options=options)
        self.dra_channel = grpc.insecure_channel(f"unix:{driver.endpoint}", options=options)
        self.registration = reg_grpc.RegistrationStub(self.reg_channel)
        self.v1 = dra_v1_grpc.DRAPluginStub(self.dra_channel)
        self.v1beta1 = dra_v1beta1_grpc.DRAPluginStub(self.dra_channel)

    def get_info(self, timeout: float = 5) -> reg_pb.PluginInfo:
        return self.registration.GetInfo(reg_pb.InfoRequest(), timeout=timeout)

    def notify(self, registered: bool, error: str = "", timeout: float = 5) -> Any:
        return self.registration.NotifyRegistrationStatus(
            reg_pb.RegistrationStatus(plugin_registered=registered, error=error), timeout=timeout
        )

    def prepare(self, *claims: dict[str, Any], version: str = "v1", timeout: float = 5) -> Any:
        pb, stub = (dra_v1, self.v1) if version == "v1" else (dra_v1beta1, self.v1beta1)
        request = pb.NodePrepareResourcesRequest(claims=[_claim_pb(pb, c) for c in claims])
        return stub.NodePrepareResources(request, timeout=timeout)

    def unprepare(self, *claims: dict[str, Any], version: str = "v1", timeout: float = 5) -> Any:
        pb, stub = (dra_v1, self.v1) if version == "v1" else (dra_v1beta1, self.v1beta1)
        request = pb.NodeUnprepareResourcesRequest(claims=[_claim_pb(pb, c) for c in claims])
        return stub.NodeUnprepareResources(request, timeout=timeout)

    @staticmethod
    def devices(response: Any, uid: str) -> list[tuple[tuple[str, ...], str, str, tuple[str, ...]]]:
        """(request_names, pool, device, cdi_ids) of one claim in a prepare reply."""
        return [
            (tuple(d.request_names), d.pool_name, d.device_name, tuple(d.cdi_device_ids))
            for d in response.claims[uid].devices
        ]

    def close(self) -> None:
        self.reg_channel.close()
        self.dra_channel.close()


def _claim_pb(pb: Any, claim: dict[str, Any]) -> Any:
    meta = claim["metadata"]
    return pb.Claim(namespace=meta["namespace"], uid=meta["uid"], name=meta["name"])


class Env:
    """Directories of one test's driver(s)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.registry = root / "reg"
        self.plugin = root / "plug"
        self.cdi = root / "cdi"

    def config(self, **overrides: Any) -> FakeDriverConfig:
        fields: dict[str, Any] = {
            "registry_dir": str(self.registry),
            "plugin_dir": str(self.plugin),
            "cdi_dir": str(self.cdi),
        }
        fields.update(overrides)
        return FakeDriverConfig(**fields)

    def read_json(self, path: Path) -> Any:
        return json.loads(path.read_text())

    def cdi_files(self) -> list[str]:
        return sorted(p.name for p in self.cdi.glob("*.json")) if self.cdi.exists() else []


@pytest.fixture
def env(short_socket_dir: Path) -> Env:
    return Env(short_socket_dir)


@pytest.fixture
def claims() -> Claims:
    return Claims()


@pytest.fixture
def claim(claims: Claims) -> Any:
    """``claim(name, uid, devices=..., ...)``: build an allocated claim and add it to ``claims``."""

    def make(name: str, uid: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return claims.add(make_claim(name, uid, *args, **kwargs))

    return make


@pytest.fixture
def make_driver(env: Env, claims: Claims) -> Iterator[Any]:
    """``make_driver(**config_overrides, recorder=..., publisher=...)`` → a started FakeDriver."""
    drivers: list[FakeDriver] = []

    def make(
        *, recorder: Any = None, publisher: Any = None, start: bool = True, **overrides: Any
    ) -> FakeDriver:
        config = env.config(**overrides)
        driver = FakeDriver(config, claim_source=claims, recorder=recorder, publisher=publisher)
        drivers.append(driver)
        if start:
            driver.start()
        return driver

    yield make
    for driver in drivers:
        driver.stop()
        driver.journal.close()


@pytest.fixture
def wire() -> Iterator[Any]:
    """``wire(driver)`` → a :class:`Wire`; channels are closed after the test."""
    wires: list[Wire] = []

    def make(driver: FakeDriver) -> Wire:
        w = Wire(driver)
        wires.append(w)
        return w

    yield make
    for w in wires:
        w.close()
