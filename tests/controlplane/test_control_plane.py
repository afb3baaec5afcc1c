"""drasim against a real kube-apiserver (``drasim control-plane``, one per test run, shared).

The scenario runs reach the server only through a kubeconfig, as on any cluster; the tests then
list the server to prove what the runs left behind. Skipped, with the reason, without Go.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from drasim import controlplane, gobuild
from drasim.apiserver.kubeclient import ApiError, KubeClientCluster
from drasim.controlplane import ControlPlane
from drasim.runner.backends import RUN_LABEL
from drasim.scenario import builtin_scenario_dir

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = builtin_scenario_dir() / "conformance"
FAKE_DRIVER: Any = sys.modules["drasim_test_fake_driver"]  # loaded by tests/conftest.py
DRIVER_CMD: str = FAKE_DRIVER.DRIVER_CMD
HANGING: str = FAKE_DRIVER.HANGING

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # the first use may build the binary


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _drasim(*args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drasim", *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
        check=False,
    )


def _run_args(kubeconfig: Path, *more: str) -> list[str]:
    # The fake driver reads each claim from the server inside NodePrepareResources; at 1/10 the
    # kubelet's 45 s call timeout is 4.5 s, enough for a busy machine (docs/backends.md).
    return ["--backend", "kubeconfig", "--kubeconfig", str(kubeconfig), "--time-scale", "0.1", *more]


def _failures(run: subprocess.CompletedProcess[str]) -> str:
    out = run.stdout
    start = max(out.find("___ FAIL"), out.find("___ ERROR"))
    return f"exit {run.returncode}\n{out[start:] if start >= 0 else out}\n--- stderr ---\n{run.stderr}"


def _leftovers(cluster: KubeClientCluster, prefixes: list[str]) -> dict[str, list[str]]:
    """Objects of these runs (by run prefix) still on the server, by kind."""
    found: dict[str, list[str]] = {}

    def ours(name: str) -> bool:
        return any(name.startswith(p) for p in prefixes)

    for api_version, kind in (
        ("v1", "Namespace"),
        ("v1", "Node"),
        ("resource.k8s.io/v1", "DeviceClass"),
        ("resource.k8s.io/v1", "ResourceSlice"),
    ):
        names = [str(i["metadata"]["name"]) for i in cluster.list(api_version, kind)]
        found[kind] = [n for n in names if ours(n)]
    slices = cluster.list("resource.k8s.io/v1", "ResourceSlice")
    found["slices of the runs' nodes"] = [
        str(s["metadata"]["name"]) for s in slices if ours(str(s["spec"].get("nodeName", "")))
    ]
    return {kind: names for kind, names in found.items() if names}


def _wait_until_clean(
    cluster: KubeClientCluster, prefixes: list[str], timeout: float = 120
) -> dict[str, Any]:
    """Leftovers once the namespace controller has finished (it takes a few seconds per
    namespace); waits on namespace watch events, bounded."""
    deadline = time.monotonic() + timeout
    while True:
        rv = cluster.request_json("GET", "/api/v1/namespaces?limit=1")["metadata"]["resourceVersion"]
        left = _leftovers(cluster, prefixes)
        remaining = deadline - time.monotonic()
        if not left.get("Namespace") or remaining <= 0:
            return left
        # Any namespace event after that list (a DELETED one, typically) is the cue to look again.
        with cluster.watch("v1", "Namespace", resource_version=rv, timeout_seconds=30) as events:
            events.next(timeout=min(remaining, 30))


def _prefixes(report: Path) -> list[str]:
    data = json.loads(report.read_text())
    return sorted(
        {
            e["object"].split("/", 1)[1]
            for r in data["results"]
            for e in r["journal"]
            if e["kind"] == "backend" and e["action"] == "created" and e["object"].startswith("Namespace/")
        }
    )


# ------------------------------------------------------------------------ the program itself
def test_the_control_plane_serves_dra_with_rbac_and_the_node_authorizer(
    drasim_control_plane: ControlPlane,
) -> None:
    plane = drasim_control_plane
    assert plane.server.startswith("https://127.0.0.1:")
    assert plane.version == f"v{gobuild.default_release().version}"
    admin = KubeClientCluster(plane.admin_kubeconfig)
    group = admin.request_json("GET", "/apis/resource.k8s.io")
    assert {v["version"] for v in group["versions"]} >= {"v1", "v1beta2", "v1beta1"}
    assert group["preferredVersion"]["version"] == "v1"
    # The driver's ServiceAccount: what docs/backends.md lists, nothing more.
    driver = KubeClientCluster(plane.driver_kubeconfig)
    assert driver.list("resource.k8s.io/v1", "ResourceSlice") is not None
    with pytest.raises(ApiError) as denied:
        driver.request_json("GET", "/api/v1/namespaces/kube-system/secrets")
    assert denied.value.code == 403
    assert "system:serviceaccount:drasim-system:drasim-runner" in str(denied.value)
    # The node identity: the Node authorizer lets it read its own Node, not another's claims.
    node = KubeClientCluster(plane.node_kubeconfig)
    with pytest.raises(ApiError) as other:
        node.list("resource.k8s.io/v1", "ResourceClaim")
    assert other.value.code == 403
    assert "system:node:node-1" in str(other.value)


def test_start_status_stop_leave_no_process_and_no_data(tmp_path: Path) -> None:
    if gobuild.go_problem():
        pytest.skip(gobuild.go_problem() or "")
    data = tmp_path / "cp"
    started = _drasim("control-plane", "start", "--dir", str(data), "--json")
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout.strip().splitlines()[-1])
    pid = int(info["pid"])
    try:
        assert Path(info["kubeconfigs"]["admin"]).is_file()
        status = _drasim("control-plane", "status", "--dir", str(data))
        assert status.returncode == 0, status.stdout + status.stderr
        assert info["server"] in status.stdout
        again = _drasim("control-plane", "start", "--dir", str(data))
        assert again.returncode == 2
        assert "already runs" in again.stderr
        assert "Traceback" not in again.stderr
    finally:
        stopped = _drasim("control-plane", "stop", "--dir", str(data))
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped" in stopped.stdout
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    assert not data.exists()
    status = _drasim("control-plane", "status", "--dir", str(data))
    assert status.returncode == 1
    assert "no control plane runs" in status.stdout


def test_start_refuses_a_directory_that_is_not_its_own(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    run = _drasim("control-plane", "start", "--dir", str(tmp_path))
    assert run.returncode == 2
    assert "is not a control plane's data directory" in run.stderr
    assert (tmp_path / "precious.txt").read_text() == "keep me"


# ------------------------------------------------------------------------ the library on it
def test_conformance_suite_passes_with_the_documented_rbac_and_leaves_nothing(
    drasim_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """Runner, emulated kubelet and the (in-process) fake driver all use the driver's
    ServiceAccount kubeconfig: the ClusterRole docs/backends.md lists, nothing more."""
    report = tmp_path / "report.json"
    run = _drasim(
        "run", str(CONFORMANCE), *_run_args(drasim_control_plane.driver_kubeconfig, "--json", str(report))
    )
    assert run.returncode == 0, _failures(run)
    data = json.loads(report.read_text())
    skipped = {r["name"]: r["skipReason"] for r in data["results"] if r["status"] == "skipped"}
    faulted = ["conformance-driver-reports-claim-errors", "conformance-unprepare-after-failed-prepare"]
    assert sorted(skipped) == faulted, skipped
    assert all("needs drasim's own API server" in reason for reason in skipped.values())
    assert all(r["status"] in ("passed", "skipped") for r in data["results"])
    prefixes = _prefixes(report)
    assert len(prefixes) == len(data["results"]) - len(faulted)
    cluster = KubeClientCluster(drasim_control_plane.admin_kubeconfig)
    assert _wait_until_clean(cluster, prefixes) == {}


@pytest.mark.skipif(
    not os.environ.get("DRASIM_TEST_WHOLE_LIBRARY"),
    reason="the whole library on a real control plane takes over a minute; DRASIM_TEST_WHOLE_LIBRARY=1",
)
def test_the_whole_library_passes_and_leaves_nothing(
    drasim_control_plane: ControlPlane, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    run = _drasim(
        "run",
        *_run_args(drasim_control_plane.admin_kubeconfig, "-j", "2", "--json", str(report)),
        timeout=500,
    )
    assert run.returncode == 0, _failures(run)
    data = json.loads(report.read_text())
    skipped = {r["name"]: r["skipReason"] for r in data["results"] if r["status"] == "skipped"}
    assert all("needs drasim's own API server" in reason for reason in skipped.values()), skipped
    assert len(skipped) == 9, skipped  # docs/backends.md lists them
    cluster = KubeClientCluster(drasim_control_plane.admin_kubeconfig)
    assert _wait_until_clean(cluster, _prefixes(report), timeout=300) == {}


def test_ctrl_c_leaves_nothing_on_the_server(drasim_control_plane: ControlPlane, tmp_path: Path) -> None:
    scenario = tmp_path / "hang.yaml"
    scenario.write_text(HANGING)
    cluster = KubeClientCluster(drasim_control_plane.admin_kubeconfig)
    run = subprocess.Popen(
        [
            *(sys.executable, "-m", "drasim", "run", str(scenario), "--backend", "kubeconfig"),
            *("--kubeconfig", str(drasim_control_plane.admin_kubeconfig), "--time-scale", "1"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    namespace = ""
    try:
        # The run is inside startPod (NodePrepareResources hangs for 45 s) once its pod exists;
        # a pod ADDED event in a namespace of this scenario says so.
        deadline = time.monotonic() + 90
        with cluster.watch("v1", "Pod", timeout_seconds=90) as events:
            while not namespace and time.monotonic() < deadline and run.poll() is None:
                event = events.next(timeout=max(0.1, deadline - time.monotonic()))
                if event is None:
                    break
                ns = str(event.object.get("metadata", {}).get("namespace", ""))
                if ns.startswith("drasim-hangs-in-prepare-"):
                    namespace = ns
        assert namespace, "the run never created its pod"
        node = f"{namespace}-node-1"
        assert cluster.get("v1", "Node", node)["metadata"]["labels"][RUN_LABEL] == namespace
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 130, out + err
    assert "Traceback" not in out + err
    assert _wait_until_clean(cluster, [namespace]) == {}


# ------------------------------------------------------------------------ RBAC
def test_the_documented_rbac_is_enough_for_a_driver_process(
    drasim_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The fake driver as its own process (as a real driver runs) with the driver's
    ServiceAccount kubeconfig: publishing slices, reading claims."""
    report = tmp_path / "report.json"
    scenarios = [str(CONFORMANCE / "shared-claim.yaml")]
    run = _drasim(
        "run",
        *scenarios,
        *_run_args(drasim_control_plane.driver_kubeconfig, "--driver-cmd", DRIVER_CMD, "--json", str(report)),
    )
    assert run.returncode == 0, _failures(run)
    results = json.loads(report.read_text())["results"]
    assert [r["status"] for r in results] == ["passed"] * len(scenarios)
    cluster = KubeClientCluster(drasim_control_plane.admin_kubeconfig)
    assert _wait_until_clean(cluster, _prefixes(report)) == {}


def test_one_permission_less_is_the_documented_preflight_error(
    drasim_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """A ServiceAccount with the documented role minus `delete nodes` is refused before any
    scenario runs, with the one line docs/backends.md shows."""
    admin = KubeClientCluster(drasim_control_plane.admin_kubeconfig)
    name = f"drasim-less-{os.getpid()}"
    config = yaml.safe_load(
        (drasim_control_plane.dir / "driver.kubeconfig").read_text()
    )  # for the server and CA
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    rules = admin.request_json("GET", f"{rbac}/clusterroles/drasim-runner")["rules"]
    for rule in [r for r in rules if "nodes" in r["resources"]]:
        rule["resources"] = [r for r in rule["resources"] if r != "nodes"]
        rules.append({**rule, "resources": ["nodes"], "verbs": [v for v in rule["verbs"] if v != "delete"]})
    accounts = "/api/v1/namespaces/drasim-system/serviceaccounts"
    created: list[str] = []
    try:
        for collection, manifest in (
            (accounts, {"metadata": {"name": name}}),
            (f"{rbac}/clusterroles", {"metadata": {"name": name}, "rules": rules}),
            (
                f"{rbac}/clusterrolebindings",
                {
                    "metadata": {"name": name},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                    "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "drasim-system"}],
                },
            ),
        ):
            admin.request_json("POST", collection, manifest)
            created.append(f"{collection}/{name}")
        review = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        }
        token = admin.request_json("POST", f"{accounts}/{name}/token", review)["status"]["token"]
        config["users"][0]["user"] = {"token": token}
        kubeconfig = tmp_path / "less.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(config))
        run = _drasim("run", str(CONFORMANCE), *_run_args(kubeconfig))
    finally:
        for path in reversed(created):
            admin.request_json("DELETE", path)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(
        f"drasim run: error: the API server {drasim_control_plane.server} (kubeconfig {kubeconfig})"
    )
    assert lines[0].endswith("the user may not delete nodes (the RBAC a run needs: docs/backends.md)")


def test_controlplane_stop_of_nothing_is_quiet(tmp_path: Path) -> None:
    assert controlplane.stop(tmp_path / "none") is False
    assert controlplane.find(tmp_path / "none") is None


def test_the_node_identity_is_enough_for_the_emulated_kubelets_calls(
    drasim_control_plane: ControlPlane,
) -> None:
    """The kubelet's two API calls with ``system:node:node-1`` under the Node authorizer: GET a
    claim of a pod bound to the node (and no other claim), delete the node's slices."""
    admin = KubeClientCluster(drasim_control_plane.admin_kubeconfig)
    kubelet = KubeClientCluster(drasim_control_plane.node_kubeconfig, user_agent="drasim-kubelet")
    namespace = f"drasim-node-{os.getpid()}"
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"namespace": namespace},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
    }
    admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        for name in ("used", "other"):
            admin.create({**claim, "metadata": {"name": name, "namespace": namespace}})
        _wait_for_default_service_account(admin, namespace)
        admin.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": namespace},
                "spec": {
                    "nodeName": "node-1",
                    "containers": [{"name": "ctr", "image": "registry.k8s.io/pause:3.10"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "used"}],
                },
            }
        )
        assert kubelet.get_resource_claim(namespace, "used")["metadata"]["name"] == "used"
        with pytest.raises(ApiError) as denied:
            kubelet.get_resource_claim(namespace, "other")
        assert denied.value.code == 403
        kubelet.delete_collection(
            "resource.k8s.io/v1",
            "ResourceSlice",
            field_selector="spec.nodeName=node-1,spec.driver=gpu.example.com",
        )
        with pytest.raises(ApiError) as other_node:
            kubelet.delete_collection(
                "resource.k8s.io/v1", "ResourceSlice", field_selector="spec.nodeName=node-2"
            )
        assert other_node.value.code == 403
    finally:
        with contextlib.suppress(ApiError):
            admin.delete("v1", "Pod", "p", namespace, grace_period_seconds=0)
        admin.delete("v1", "Namespace", namespace)


def _wait_for_default_service_account(admin: KubeClientCluster, namespace: str) -> None:
    """Pod admission looks up the namespace's ``default`` ServiceAccount, which the service
    account controller creates: wait for its ADDED event (bounded)."""
    from kubernetes import client, watch

    core = client.CoreV1Api(admin.api_client)
    stream = watch.Watch().stream(
        core.list_namespaced_service_account,
        namespace,
        field_selector="metadata.name=default",
        timeout_seconds=60,
    )
    for _event in stream:
        return
    raise AssertionError(f"no default ServiceAccount in {namespace} within 60 s")
