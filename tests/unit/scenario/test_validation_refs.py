"""A fault's ``claim:`` must name a claim of the scenario; a pod name is not started twice while alive."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def test_fault_naming_an_unknown_claim(steps_problems: Callable[[str], list[str]]) -> None:
    (problem,) = steps_problems("- fault: {plugin: {rpc: NodePrepareResources, claim: gpu2, error: boom}}\n")
    assert problem == (
        "s.yaml:12:58: spec.steps[0].fault.plugin.claim: unknown claim 'gpu2': the fault would never "
        "fire. Claims in this scenario: default/gpu"
    )


def test_fault_in_the_driver_spec_naming_an_unknown_claim(
    problems: Callable[[str], list[str]],
) -> None:
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: t, description: d}
        spec:
          driver:
            fake:
              name: gpu.example.com
              faults: [{rpc: NodeUnprepareResources, claim: other/gpu, code: UNAVAILABLE}]
          claims: [{name: gpu}]
          steps: [{reconcile: {}}]
        """
    (problem,) = problems(text)
    assert "spec.driver.fake.faults[0].claim: unknown claim 'other/gpu'" in problem


@pytest.mark.parametrize(
    "claim",
    ["gpu", "default/gpu", "team/made-by-create", "default/a-from-template"],
)
def test_fault_claims_that_exist(load_ok: Callable[[str], object], claim: str) -> None:
    load_ok(
        f"""\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {{name: t, description: d}}
        spec:
          driver: {{fake: {{name: gpu.example.com}}}}
          claims: [{{name: gpu}}]
          steps:
            - fault: {{plugin: {{rpc: NodePrepareResources, claim: {claim}, error: boom}}}}
            - create:
                - apiVersion: resource.k8s.io/v1
                  kind: ResourceClaim
                  metadata: {{name: made-by-create, namespace: team}}
                  spec: {{}}
            - startPod: {{name: a, claims: [{{name: from-template, template: tpl}}]}}
        """
    )


def test_a_pod_started_twice(steps_problems: Callable[[str], list[str]]) -> None:
    (problem,) = steps_problems(
        "- startPod: {name: a, claims: [gpu]}\n- startPod: {name: a, claims: [gpu]}\n"
    )
    assert problem == (
        "s.yaml:13:24: spec.steps[1].startPod.name: pod 'a' is already started; delete it first "
        "(deletePod, forceDeletePod) or give this pod another name"
    )


@pytest.mark.parametrize("delete", ["deletePod", "forceDeletePod"])
def test_a_pod_name_reused_after_deletion(load_ok: Callable[[str], object], delete: str) -> None:
    load_ok(
        f"""\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {{name: t, description: d}}
        spec:
          driver: {{fake: {{name: gpu.example.com}}}}
          claims: [{{name: gpu}}]
          steps:
            - startPod: {{name: a, claims: [gpu]}}
            - {delete}: a
            - startPod: {{name: a, claims: [gpu]}}
        """
    )


def test_a_scenario_command_takes_every_driver_cmd_placeholder(load_ok: Callable[[str], object]) -> None:
    from drasim.runner.process import PLACEHOLDERS

    args = " ".join(f"--{name}={{{name}}}" for name in PLACEHOLDERS)
    assert {"plugin_dir", "state_dir"} <= set(PLACEHOLDERS)
    load_ok(
        f"""\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {{name: t, description: d}}
        spec:
          driver: {{command: {{name: gpu.example.com, args: "drv {args}"}}}}
          steps: [{{reconcile: {{}}}}]
        """
    )
