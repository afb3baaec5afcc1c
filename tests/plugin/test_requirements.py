"""What scenarios need from the driver under test (drasim.conformance)."""

from __future__ import annotations

from drasim.conformance import (
    FAKE_PLUGIN,
    HEALTH,
    PROXY,
    load_suite,
    missing_requirements,
    real_driver_skip_reason,
    scenario_requirements,
)
from drasim.pytest_plugin.harness import build_scenario


def test_conformance_scenarios_a_real_driver_cannot_run() -> None:
    skipped = {s.name for s in load_suite("conformance") if real_driver_skip_reason(s)}
    assert skipped == {
        "conformance-health-stream",
        "conformance-unprepare-unknown-claim",
    }


def test_with_the_proxy_only_the_health_stream_stays_out_of_reach() -> None:
    skipped = {s.name for s in load_suite("conformance") if real_driver_skip_reason(s, [PROXY])}
    assert skipped == {"conformance-health-stream"}
    reasons = {s.name: real_driver_skip_reason(s, [PROXY, HEALTH]) for s in load_suite("conformance")}
    assert "allocates the fake plugin's devices by name" in reasons["conformance-health-stream"]


def test_requirements_name_the_step_and_its_location() -> None:
    scenario = build_scenario(
        claims=["gpu"],
        steps=[
            {"fault": {"plugin": {"rpc": "NodePrepareResources", "code": "UNAVAILABLE"}}},
            {"startPod": {"name": "a", "claims": ["gpu"]}},
            {"expectHealth": {"pod": "a", "claim": "gpu", "health": "Healthy"}},
            {"parallel": [{"setDeviceHealth": {"device": "gpu-0", "health": "Unhealthy"}}]},
        ],
        tags=["requires:sharing"],
    )
    reqs = {r.capability: r.reason for r in scenario_requirements(scenario)}
    assert set(reqs) == {"sharing", PROXY, FAKE_PLUGIN, HEALTH}
    assert reqs["sharing"] == "tagged 'requires:sharing'"
    assert reqs[PROXY].startswith("injects a plugin fault (fault at <python-test>:")
    assert reqs[FAKE_PLUGIN].startswith("tells the driver a device's health, which a real driver decides")
    assert reqs[HEALTH].startswith("uses expectHealth at")


def test_api_faults_and_lifecycle_steps_need_nothing() -> None:
    scenario = build_scenario(
        claims=["gpu"],
        steps=[
            {"fault": {"apiServer": {"client": "driver", "verb": "get", "code": 500}}},
            {"killPlugin": {}},
            {"restartPlugin": {}},
            {"expectCalls": {"NodePrepareResources": 0}},
        ],
    )
    assert scenario_requirements(scenario) == []


def test_a_granted_capability_is_not_missing_but_fake_plugin_never_is_for_real_drivers() -> None:
    scenario = build_scenario(driver={"fake": {"name": "gpu.example.com", "health": True}})
    assert [r.capability for r in missing_requirements(scenario, [])] == [HEALTH]
    assert missing_requirements(scenario, [HEALTH]) == []
    faulty = build_scenario(driver={"fake": {"name": "gpu.example.com", "bugs": ["forgets-state"]}})
    assert "configures the fake plugin's bugs" in real_driver_skip_reason(faulty, [FAKE_PLUGIN])
