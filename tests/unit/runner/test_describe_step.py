"""Step texts in reports and the journal read like the YAML that was written."""

from __future__ import annotations

from pathlib import Path

from drasim.runner.session import describe_step
from drasim.scenario.loader import load_text

SCENARIO = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: texts, description: step texts}
spec:
  driver: {fake: {name: gpu.example.com, health: true}}
  claims: [{name: gpu}]
  steps:
    - startPod: {name: a, claims: [gpu]}
    - setDeviceHealth: {device: gpu-0, health: Unhealthy, timeoutSeconds: 10}
    - restartKubelet: {crashAt: "prepare:after-rpc", during: {startPod: {name: b, claims: [gpu]}}}
    - expectCalls: {NodePrepareResources: 1}
    - reconcile: {}
"""


def test_step_texts_use_yaml_keys_and_flow_style() -> None:
    (scenario,) = load_text(SCENARIO, "texts.yaml", base_dir=Path())
    assert [describe_step(s) for s in scenario.spec.steps] == [
        "startPod {name: a, claims: [gpu]}",
        "setDeviceHealth {device: gpu-0, health: Unhealthy, timeoutSeconds: 10}",
        "restartKubelet {crashAt: prepare:after-rpc, during: {startPod: {name: b, claims: [gpu]}}}",
        "expectCalls {NodePrepareResources: 1}",
        "reconcile",
    ]
