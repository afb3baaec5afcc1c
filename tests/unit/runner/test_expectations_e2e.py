"""Expectations against a real simulated node (fake plugin, emulated kubelet, real files)."""

from __future__ import annotations

from drasim.report.model import RESULTS
from drasim.runner.run import run_scenario
from drasim.scenario.loader import load_text

SCENARIO = """
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: checks-e2e
  description: Every kind of expectation against a real run.
spec:
  driver:
    fake: {name: gpu.example.com, health: true, devices: 2}
  claims:
    - {name: gpu}
  steps:
    - expectRegistered: {registered: true, connected: true, instances: 1}
    - expectCalls: {GetInfo: 1, NotifyRegistrationStatus: 1, NodeWatchResources: 1}
    - allocate: {claim: gpu, devices: [{device: gpu-0}]}
    - startPod: {name: a, claims: [gpu]}
    - expectPod: {pod: a, phase: Running}
    - expectCalls:
        calls: [{method: NodePrepareResources, claims: [gpu], code: OK}]
    - expectCheckpoint: {entries: 1, claims: {gpu: {pods: [a], deviceCount: 1}}}
    - expectCdiDevices: {pod: a, count: 1, unique: true, wellFormed: true}
    - expectCdiSpecs: {count: 1, valid: true, resolvable: true}
    - expectMightNeedUnprepare: {a: true}
    - expectMetric: {name: dra_resource_claims_in_use, labels: {driver_name: gpu.example.com}, value: 1}
    - expectResourceSlices: {count: 1, devices: 2}
    - setDeviceHealth: {device: gpu-0, health: Unhealthy}
    - expectHealth: {pod: a, claim: gpu, health: Unhealthy}
    - mark: deleted
    - deletePod: a
    - expectCalls: {since: deleted, NodeUnprepareResources: 1, claim: gpu}
    - expectNoError: {}
    - expectCheckpoint: {entries: 0}
    - expectPod: {pod: a, phase: Gone}
    - expectCalls: {NodePrepareResources: 2}
"""


def test_expectations_against_a_real_run() -> None:
    (scenario,) = load_text(SCENARIO)
    result = run_scenario(scenario, results=RESULTS)
    assert result.failure is not None, "the last expectation must fail"
    assert result.failure.message == "expected 2 NodePrepareResources calls since the start; found 1"
    assert result.failure.step_index == 21  # numbered from 1, as in the journal
    assert result.failure.expected == {"NodePrepareResources": 2}
    assert result.failure.actual == {"NodePrepareResources": 1}
    assert [e["method"].rsplit("/", 1)[-1] for e in result.failure.similar_events] == ["NodePrepareResources"]
