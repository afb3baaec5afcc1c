"""Backend choice, pins, skip reasons and the real-cluster name mapping (drasim.runner.backends)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.apiserver.http import HttpApiServer
from drasim.apiserver.kubeclient import KubeClientCluster
from drasim.errors import ApiError, ConfigError
from drasim.journal import Journal
from drasim.report.model import RESULTS
from drasim.runner.backends import (
    RUN_LABEL,
    HttpBackend,
    KubeconfigBackend,
    backend_skip_reason,
    chosen_backend,
    run_prefix,
)
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.runner.world import open_world
from drasim.scenario.loader import load_text
from drasim.scenario.schema import Scenario


def _scenario(body: str, name: str = "s") -> Scenario:
    text = f"""\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {{name: {name}, description: d}}
spec:
  driver: {{fake: {{name: gpu.example.com}}}}
  claims: [{{name: gpu}}]
{textwrap.indent(textwrap.dedent(body), "  ")}"""
    (scenario,) = load_text(text, "test.yaml")
    return scenario


PLAIN = _scenario(
    "steps:\n  - startPod: {name: a, claims: [gpu]}\n  - expectCalls: {NodePrepareResources: 1}\n"
)


def test_run_prefix_is_a_unique_dns_label() -> None:
    prefixes = {run_prefix("Kubelet.Restart_ME--" + "x" * 80) for _ in range(20)}
    assert len(prefixes) == 20
    for prefix in prefixes:
        assert re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", prefix), prefix
        assert len(prefix) <= 63 - len("-node-1") + 7


def test_the_run_choice_wins_over_no_pin_and_a_pin_applies_by_default() -> None:
    pinned = _scenario("backend: http\nsteps: [{startPod: {name: a, claims: [gpu]}}]\n")
    assert chosen_backend(PLAIN, None) == "memory"
    assert chosen_backend(PLAIN, "http") == "http"
    assert chosen_backend(pinned, None) == "http"
    assert backend_skip_reason(pinned, None) == ""
    assert backend_skip_reason(pinned, "http") == ""
    assert "pins backend 'http'" in backend_skip_reason(pinned, "memory")


def test_a_pinned_scenario_runs_on_its_backend() -> None:
    pinned = _scenario("backend: http\nsteps: [{startPod: {name: a, claims: [gpu]}}]\n")
    world = open_world(pinned, RunOptions())
    try:
        world.setup()
        assert isinstance(world.api.backend, HttpBackend)
        assert isinstance(world.api.kubelet_api, KubeClientCluster)
    finally:
        world.teardown()
    result = run_scenario(pinned, RunOptions(backend="memory"), results=RESULTS)
    assert result.status == "skipped"
    assert "this run uses --backend memory" in (result.skip_reason or "")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            "apiServer: {faults: [{verb: get, code: 500}]}\nsteps: [{startPod: {name: a, claims: [gpu]}}]\n",
            "API-server fault rules in spec.apiServer.faults",
        ),
        (
            "apiServer: {resourceApiVersions: [v1]}\nsteps: [{startPod: {name: a, claims: [gpu]}}]\n",
            "serves only resource.k8s.io v1",
        ),
        (
            "steps:\n  - parallel:\n      steps:\n        - fault: {apiServer: {verb: get, code: 500}}\n",
            "injects an API-server fault at test.yaml:",
        ),
        (
            "steps: [{startPod: {name: a, claims: [gpu], allocate: false}}]\n",
            "reserves a claim it leaves unallocated (startPod allocate: false at test.yaml:",
        ),
    ],
    ids=["spec-faults", "served-versions", "nested-fault-step", "reserved-unallocated"],
)
def test_a_real_cluster_skips_what_only_drasims_server_can_do(body: str, reason: str) -> None:
    scenario = _scenario(body)
    text = backend_skip_reason(scenario, "kubeconfig")
    assert reason in text
    assert "run it with --backend http or memory" in text
    assert backend_skip_reason(scenario, "http") == ""
    assert backend_skip_reason(scenario, None) == ""


def test_plugin_faults_are_not_a_reason_to_skip_a_real_cluster() -> None:
    scenario = _scenario("steps:\n  - fault: {plugin: {rpc: NodePrepareResources, code: UNAVAILABLE}}\n")
    assert backend_skip_reason(scenario, "kubeconfig") == ""
    # An unallocated claim that is not reserved either is a state a real server accepts.
    missing = _scenario("steps: [{startPod: {name: a, claims: [gpu], allocate: false, reserve: false}}]\n")
    assert backend_skip_reason(missing, "kubeconfig") == ""


def test_http_backend_sends_the_kubelet_through_the_kubernetes_client() -> None:
    world = open_world(PLAIN, RunOptions(backend="http"))
    try:
        world.setup()
        for api in (world.api.runner_api, world.api.kubelet_api, world.api.driver_api):
            assert isinstance(api, KubeClientCluster)
        assert world.api.backend.store is not None
        world.api.kubelet_api.get_resource_claim("default", "gpu")
        calls = world.journal.events("api", resource="resourceclaims", verb="get")
        # The HTTP server journals the request under the kubelet's user agent (faults match on it).
        assert calls[-1]["client"] == "kubelet"
    finally:
        world.teardown()


# ------------------------------------------------------------------- a real cluster's names
@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[Path, MemoryCluster]]:
    """A foreign API server: the backend gets only its kubeconfig; the test inspects its store."""
    store = ObjectStore()
    with HttpApiServer(store) as server:
        yield server.write_kubeconfig(tmp_path / "kc"), MemoryCluster(store)


def test_real_cluster_names_namespaces_nodes_and_classes(
    cluster: tuple[Path, MemoryCluster], tmp_path: Path
) -> None:
    kubeconfig, inspect = cluster
    scenario = _scenario("steps: [{startPod: {name: a, claims: [gpu, team-b/gpu]}}]\n", name="my.scenario")
    backend = KubeconfigBackend(
        scenario,
        Journal(),
        tmp_path,
        kubeconfig,
        expand=lambda v: str(v).replace("$(DRIVER)", "gpu.example.com"),
    )
    backend.setup()
    prefix = backend.prefix
    assert prefix.startswith("drasim-my-scenario-")
    assert backend.node == f"{prefix}-node-1"
    node = inspect.get("v1", "Node", backend.node)
    assert node["spec"]["unschedulable"] is True
    assert node["metadata"]["labels"][RUN_LABEL] == prefix
    assert backend.namespace("default") == prefix
    assert backend.namespace(prefix) == prefix  # already mapped: unchanged
    assert backend.namespace("team-b") == f"{prefix}-team-b"
    names = {n["metadata"]["name"] for n in inspect.list("v1", "Namespace", label_selector=RUN_LABEL)}
    assert names == {prefix, f"{prefix}-team-b"}
    klass = backend.relocate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"}}
    )
    assert klass["metadata"]["name"] == f"{prefix}-gpu.example.com"
    claim = backend.relocate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "gpu"},
            "spec": {
                "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.example.com"}}]}
            },
        }
    )
    assert claim["metadata"]["namespace"] == prefix
    assert (
        claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == f"{prefix}-gpu.example.com"
    )
    other = backend.relocate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "installed-by-driver"},
        }
    )
    assert other["metadata"]["name"] == f"{prefix}-installed-by-driver"
    unrelated = backend.relocate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "x", "namespace": "team-b"},
            "spec": {
                "devices": {
                    "requests": [{"name": "r", "exactly": {"deviceClassName": "installed-by-driver"}}]
                }
            },
        }
    )
    # A class the scenario does not define (say, the driver's own) keeps its name.
    assert unrelated["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "installed-by-driver"
    slice_ = backend.relocate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "stale"},
            "spec": {"nodeName": "node-2", "driver": "d", "pool": {"name": "p"}},
        }
    )
    assert slice_["spec"]["nodeName"] == f"{prefix}-node-2"  # never a real node's name
    inspect.create(slice_)
    inspect.create(klass)
    backend.close()
    assert inspect.list("v1", "Namespace", label_selector=RUN_LABEL) == []
    assert inspect.list("v1", "Node") == []
    assert inspect.list("resource.k8s.io/v1", "ResourceSlice") == []
    assert inspect.list("resource.k8s.io/v1", "DeviceClass") == []
    assert [e["action"] for e in backend.journal.events("backend")].count("created") == 2


def test_a_driver_gets_the_chosen_context_as_the_current_one(tmp_path: Path) -> None:
    import yaml

    source = tmp_path / "conf" / "kubeconfig"
    source.parent.mkdir()
    for name in ("ca.crt", "tok", "key"):
        (source.parent / name).write_text("x")
    key = str(source.parent / "key")
    source.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "kind", "cluster": {"server": "https://x", "certificate-authority": "ca.crt"}}
                ],
                "users": [{"name": "u", "user": {"client-key": key, "tokenFile": "tok"}}],
                "contexts": [
                    {"name": "a", "context": {"cluster": "kind", "user": "u"}},
                    {"name": "b", "context": {"cluster": "kind", "user": "u"}},
                ],
                "current-context": "b",
            }
        )
    )
    backend = KubeconfigBackend(PLAIN, Journal(), tmp_path, source, context="a")
    written = backend.kubeconfig()
    assert written == tmp_path / "kubeconfig"
    assert written.stat().st_mode & 0o077 == 0  # credentials: private
    data = yaml.safe_load(written.read_text())
    assert data["current-context"] == "a"
    assert data["clusters"][0]["cluster"]["certificate-authority"] == str(source.parent / "ca.crt")
    assert data["users"][0]["user"] == {"client-key": key, "tokenFile": str(source.parent / "tok")}
    assert KubeconfigBackend(PLAIN, Journal(), tmp_path, source).kubeconfig() == source
    with pytest.raises(ConfigError, match=r"cannot load kubeconfig .* name c"):
        KubeconfigBackend(PLAIN, Journal(), tmp_path / "x", source, context="c").kubeconfig()


def test_on_a_real_cluster_the_clients_journal_their_own_requests(
    cluster: tuple[Path, MemoryCluster], tmp_path: Path
) -> None:
    kubeconfig, _ = cluster
    journal = Journal()
    backend = KubeconfigBackend(PLAIN, journal, tmp_path, kubeconfig)
    backend.setup()
    try:
        with pytest.raises(ApiError):
            backend.kubelet_api.get_resource_claim(backend.namespace("default"), "missing")
    finally:
        backend.close()
    # drasim's server journals into its own store's recorder, not this journal: every event
    # here was recorded by a client.
    events = [(e["client"], e["verb"], e["resource"], e["code"]) for e in journal.events("api")]
    assert events[:2] == [("runner", "create", "namespaces", 201), ("runner", "create", "nodes", 201)]
    assert ("kubelet", "get", "resourceclaims", 404) in events
    assert ("runner", "delete", "namespaces", 200) in events
    assert ("runner", "deletecollection", "resourceslices", 200) in events


def test_a_real_cluster_skips_a_kubelet_that_reads_v1alpha3_claims() -> None:
    reason = backend_skip_reason(PLAIN, "kubeconfig", "1.31")
    assert "its kubelet 1.31 reads ResourceClaims through resource.k8s.io/v1alpha3" in reason
    assert backend_skip_reason(PLAIN, "kubeconfig", "1.34") == ""
    assert backend_skip_reason(PLAIN, "http", "1.31") == ""
