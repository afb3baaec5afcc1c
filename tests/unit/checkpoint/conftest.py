"""Fixtures for the checkpoint tests: the upstream test vectors and the states they hold.

The files in ``golden/`` are the literal checkpoint contents of the upstream tests
quoted in /work/shared/reference/kubelet-dra.md §4.3 and §4.5 (byte for byte, no
trailing newline).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from drasim.state import ClaimInfoState, DriverState
from drasim.values import Device

GOLDEN = Path(__file__).parent / "golden"

CLAIM_UID_1 = "067798be-454e-4be4-9047-1aa06aea63f7"
CLAIM_UID_2 = "4cf8db2d-06c0-7d70-1a51-e59b25b2c16c"
POD_UID = "139cdb46-f989-4f17-9561-ca10cfb509a6"
DRIVER = "test-driver.cdi.k8s.io"
CDI_ID = "example.com/example=cdi-example"


def _device(name: str, *, full: bool = True) -> Device:
    if not full:
        return Device(pool_name="worker-1", device_name=name)
    return Device(
        pool_name="worker-1",
        device_name=name,
        request_names=("test request",),
        cdi_device_ids=(CDI_ID,),
    )


def _claim(uid: str, name: str, devices: list[Device]) -> ClaimInfoState:
    return ClaimInfoState(
        claim_uid=uid,
        claim_name=name,
        namespace="default",
        pod_uids={POD_UID},
        driver_state={DRIVER: DriverState(devices=devices)},
    )


def upstream_states() -> dict[str, list[ClaimInfoState]]:
    """The states of upstream checkpointer_test.go, by test case name."""
    return {
        "single": [_claim(CLAIM_UID_1, "example", [_device("dev-1")])],
        "multiple-devices": [_claim(CLAIM_UID_1, "example", [_device("dev-1"), _device("dev-2")])],
        "two-claims": [
            _claim(CLAIM_UID_1, "example-1", [_device("dev-1")]),
            _claim(CLAIM_UID_2, "example-2", [_device("dev-2", full=False)]),
        ],
    }


@pytest.fixture
def states() -> dict[str, list[ClaimInfoState]]:
    """Fresh copies of the upstream states (tests may mutate them)."""
    return upstream_states()


@pytest.fixture
def golden() -> Callable[[str], bytes]:
    """Read one golden file by name (without extension for .json)."""

    def read(name: str) -> bytes:
        path = GOLDEN / (name if name.endswith(".txt") else f"{name}.json")
        return path.read_bytes()

    return read
