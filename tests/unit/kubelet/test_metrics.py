"""The DRA metrics the manager keeps: claims in use (gauge) and operation durations (histogram)."""

from __future__ import annotations

import pytest

from drasim.errors import KubeletError, RpcError


def in_use(harness):
    series = harness.metrics.series("dra_resource_claims_in_use")
    return {dict(labels)["driver_name"]: value for labels, value in series.items()}


def test_claims_in_use_follows_prepare_and_unprepare(harness, kit) -> None:
    assert in_use(harness) == {"<any>": 0}
    harness.drivers.register(kit.FakeDriverClient("other.example.com"))
    harness.claims.add(kit.claim("a"))
    harness.claims.add(kit.claim("both", driver=[kit.DRIVER, "other.example.com"]))
    pod = kit.pod(claims=["a", "both"])
    harness.manager.prepare_resources(pod)
    assert in_use(harness) == {"<any>": 2, kit.DRIVER: 2, "other.example.com": 1}
    harness.manager.unprepare_resources(pod)
    assert in_use(harness) == {"<any>": 0}


def test_unprepared_claims_are_not_in_use(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.driver.prepare_script = RpcError("Unavailable", "down")
    with pytest.raises(KubeletError):
        harness.manager.prepare_resources(kit.pod())
    assert harness.manager.claim_infos() != []
    assert in_use(harness) == {"<any>": 0}


def test_exposition_text(harness, kit) -> None:
    harness.claims.add(kit.claim())
    harness.manager.prepare_resources(kit.pod())
    with pytest.raises(KubeletError):
        harness.manager.unprepare_resources(kit.pod("other", "other-uid", claims=["x"], template=True))
    text = harness.metrics.to_text()
    assert "# HELP dra_operations_duration_seconds [ALPHA] Latency histogram in seconds" in text
    assert "# TYPE dra_operations_duration_seconds histogram" in text
    assert (
        'dra_operations_duration_seconds_count{is_error="false",operation_name="PrepareResources"} 1' in text
    )
    assert (
        'dra_operations_duration_seconds_count{is_error="true",operation_name="UnprepareResources"} 1' in text
    )
    assert "# TYPE dra_resource_claims_in_use gauge" in text
    assert 'dra_resource_claims_in_use{driver_name="<any>"} 1' in text
    assert 'dra_resource_claims_in_use{driver_name="test-driver"} 1' in text
