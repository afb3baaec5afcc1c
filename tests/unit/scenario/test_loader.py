"""Valid scenarios decode into the schema dataclasses with their positions and shorthands."""

from __future__ import annotations

from drasim.scenario import expand_variables, load_text, scenario_variables
from drasim.scenario import expectations as ex
from drasim.scenario import steps as st
from drasim.scenario.common import ErrorMatch, PluginFault
from drasim.scenario.schema import FakeDriverSpec, Scenario

from .conftest import HEADER


def _steps(text: str) -> Scenario:
    (scenario,) = load_text(HEADER + "  steps:\n" + text, "s.yaml")
    return scenario


def test_defaults_follow_upstream_kubelet_values():
    scenario = _steps("    - reconcile:\n")
    kubelet = scenario.spec.kubelet
    assert kubelet.node == "node-1"
    assert kubelet.services == ["v1.DRAPlugin", "v1beta1.DRAPlugin"]
    assert (kubelet.timers.call_timeout, kubelet.timers.reconcile_period) == (45.0, 60.0)
    assert kubelet.timers.wiping_delay == 30.0
    assert (kubelet.timers.backoff_period, kubelet.timers.resync_interval) == (10.0, 60.0)
    assert kubelet.timers.retry_jitter == 1.0
    assert kubelet.re_prepare_after_restart == "newSandboxOnly"
    assert scenario.spec.api_server.mode == "auto"
    fake = scenario.spec.driver.fake if scenario.spec.driver else None
    assert isinstance(fake, FakeDriverSpec)
    assert (fake.name, fake.devices, fake.services) == (
        "gpu.example.com",
        4,
        ["v1.DRAPlugin", "v1beta1.DRAPlugin"],
    )


def test_steps_keep_name_and_position():
    scenario = _steps("    - reconcile: {}\n    - stopKubelet:\n")
    first, second = scenario.spec.steps
    assert (first.name, first.kind, first.location) == ("reconcile", "action", "s.yaml:12:7")
    assert isinstance(first.args, st.Reconcile)
    assert (second.name, second.line) == ("stopKubelet", 13)
    assert scenario.file == "s.yaml"


def test_shorthands():
    scenario = _steps(
        "    - startPod: {name: a, claims: [gpu]}\n"
        "    - stopPod: a\n"
        "    - advanceClock: 90\n"
        "    - expectMightNeedUnprepare: {a: false}\n"
        "    - expectError: boom\n"
        "    - parallel: [{syncPod: a}]\n"
    )
    start, stop, clock, might, error, parallel = (s.args for s in scenario.spec.steps)
    assert start == st.StartPod(name="a", claims=["gpu"])
    assert stop == st.StopPod(pod="a")
    assert clock == st.AdvanceClock(seconds=90.0)
    assert might == ex.ExpectMightNeedUnprepare(pods={"a": False})
    assert error == ex.ExpectError(contains="boom")
    assert isinstance(parallel, st.Parallel)
    assert parallel.steps[0].args == st.SyncPod(pod="a")


def test_unions_pick_by_shape():
    scenario = _steps(
        "    - startPod:\n"
        "        name: a\n"
        "        claims: [gpu, {name: other, claim: gpu}]\n"
        "        containers: [{name: c, claims: [gpu, {name: other, request: req-0}]}]\n"
        "        expectError: {matches: 'not (allowed|registered)'}\n"
    )
    pod = scenario.spec.steps[0].args
    assert isinstance(pod, st.StartPod)
    assert pod.claims == ["gpu", st.PodClaim(name="other", claim="gpu")]
    assert pod.containers[0].claims == ["gpu", st.ContainerClaim(name="other", request="req-0")]
    assert pod.expect_error == ErrorMatch(matches="not (allowed|registered)")


def test_expect_calls_method_counts_use_grpc_names():
    scenario = _steps("    - expectCalls: {NodePrepareResources: 1, NodeUnprepareResources: 0, claim: gpu}\n")
    calls = scenario.spec.steps[0].args
    assert isinstance(calls, ex.ExpectCalls)
    assert calls.counts() == {"NodePrepareResources": 1, "NodeUnprepareResources": 0}


def test_crash_restart_holds_its_during_step():
    scenario = _steps(
        "    - restartKubelet:\n"
        "        crashAt: prepare:after-rpc\n"
        "        during: {startPod: {name: a, claims: [gpu]}}\n"
    )
    restart = scenario.spec.steps[0].args
    assert isinstance(restart, st.RestartKubelet)
    assert restart.crash_at == "prepare:after-rpc"
    assert restart.during is not None
    assert (restart.during.name, restart.during.line) == ("startPod", 14)


def test_fault_rule_fields():
    scenario = _steps(
        "    - fault:\n"
        "        plugin: {rpc: NodePrepareResources, claim: default/gpu,\n"
        "                 missingClaim: true, times: 2, after: 1}\n"
    )
    fault = scenario.spec.steps[0].args
    assert isinstance(fault, st.Fault)
    assert fault.plugin == PluginFault(
        rpc="NodePrepareResources", claim="default/gpu", missing_claim=True, times=2, after=1
    )


def test_claims_shorthand_expands_into_manifests():
    scenario = _steps("    - reconcile: {}\n")
    device_class, claim = scenario.spec.objects
    assert device_class == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "$(DRIVER)"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "$(DRIVER)"'}}]},
    }
    assert claim["metadata"] == {"name": "gpu", "namespace": "default"}
    assert claim["spec"]["devices"]["requests"] == [
        {
            "name": "req-0",
            "exactly": {"deviceClassName": "$(DRIVER)", "allocationMode": "ExactCount", "count": 1},
        }
    ]
    expanded = expand_variables(claim, scenario_variables(driver="gpu.example.com", node="node-1"))
    assert expanded["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"


def test_manifest_files_are_inlined(write):
    write(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two, created: 2024-01-02}\n",
        "objects/cm.yaml",
    )
    path = write(
        "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t, description: d}\n"
        "spec:\n  objects: [{file: objects/cm.yaml}]\n  steps: [{reconcile: {}}]\n"
    )
    from drasim.scenario import load_file

    (scenario,) = load_file(path)
    assert [o["metadata"]["name"] for o in scenario.spec.objects] == ["one", "two"]
    assert scenario.spec.objects[1]["metadata"]["created"] == "2024-01-02"  # dates stay JSON-friendly


def test_multi_document_file_and_two_drivers():
    text = (
        HEADER
        + "  steps: [{reconcile: {}}]\n---\n"
        + (
            "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: two, description: d}\n"
            "spec:\n  drivers:\n    - fake: {name: a.example.com}\n"
            "    - command: {name: b.example.com, args: ./b}\n"
            "  steps: [{killPlugin: a.example.com}]\n"
        )
    )
    first, second = load_text(text, "m.yaml")
    assert (first.name, second.name, second.line) == ("t", "two", 13)
    assert [d.name for d in second.spec.all_drivers()] == ["a.example.com", "b.example.com"]


def test_expand_variables_leaves_unknown_names():
    assert expand_variables({"$(NODE)": ["$(DRIVER)", "$(OTHER)", 3]}, {"NODE": "n", "DRIVER": "d"}) == {
        "n": ["d", "$(OTHER)", 3]
    }


def test_health_timeout_and_message_fields():
    scenario = _steps(
        "    - setDeviceHealth: {device: gpu-0, health: Unhealthy}\n"
        "    - setDeviceHealth: {device: gpu-0, health: Unhealthy, message: ECC, timeoutSeconds: 10}\n"
        "    - setDeviceHealth: {device: gpu-0, health: Unhealthy, timeoutSeconds: 9223372036}\n"
        "    - startPod: {name: a, claims: [gpu]}\n"
        "    - expectHealth: {pod: a, claim: gpu, health: Unhealthy}\n"
        "    - expectHealth: {pod: a, claim: gpu, health: Unknown, message: ''}\n"
        "    - expectHealth: {pod: a, claim: gpu, health: Unhealthy, messageContains: ECC}\n"
    )
    sets = [s.args for s in scenario.spec.steps[:3]]
    assert [(a.message, a.timeout_seconds) for a in sets] == [("", 0), ("ECC", 10), ("", 9223372036)]
    expects = [s.args for s in scenario.spec.steps[4:]]
    assert all(isinstance(a, ex.ExpectHealth) for a in expects)
    assert [(a.message, a.message_contains) for a in expects] == [(None, ""), ("", ""), (None, "ECC")]
