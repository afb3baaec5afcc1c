"""``--backend kubeconfig`` against a foreign cluster: drasim's HTTP API server in its own process.

The run only gets a kubeconfig file path (``drasim serve-apiserver`` writes it); these tests
then query that server to prove what the run created and what it left behind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from drasim.apiserver.kubeclient import KubeClientCluster
from drasim.runner.backends import RUN_LABEL
from drasim.scenario import builtin_scenario_dir

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = builtin_scenario_dir() / "conformance"
HANGING: str = sys.modules["drasim_test_fake_driver"].HANGING  # loaded by tests/conftest.py


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _default_sigint() -> None:
    """A child started from a shell's background job would inherit SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def foreign_cluster(tmp_path: Path) -> Iterator[Path]:
    """``drasim serve-apiserver`` as its own process; yields the kubeconfig it wrote."""
    kubeconfig = tmp_path / "cluster.kubeconfig"
    server = subprocess.Popen(
        [sys.executable, "-m", "drasim", "serve-apiserver", "--kubeconfig-out", str(kubeconfig)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        line = _readline(server, timeout=30)
        assert "serving http://127.0.0.1:" in line, line
        yield kubeconfig
    finally:
        server.terminate()
        server.wait(timeout=10)


def _readline(process: subprocess.Popen[str], timeout: float) -> str:
    """The process's first stdout line, waited for on a thread (bounded)."""
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.append(process.stdout.readline() if process.stdout else "")
    )
    reader.start()
    reader.join(timeout)
    return lines[0] if lines else ""


def _drasim(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drasim", *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
        check=False,
    )


def _failures(run: subprocess.CompletedProcess[str]) -> str:
    """What a failed ``drasim run`` says about its failing scenarios first, then all it printed."""
    out = run.stdout
    start = out.find("___ FAIL")
    if start < 0:
        start = out.find("___ ERROR")
    details = out[start:] if start >= 0 else ""
    return f"exit {run.returncode}\n{details}\n--- full stdout ---\n{out}\n--- stderr ---\n{run.stderr}"


def _leftovers(kubeconfig: Path) -> dict[str, list[str]]:
    """Everything a run could have left on the cluster: labelled objects, fake nodes' slices."""
    cluster = KubeClientCluster(kubeconfig)
    found: dict[str, list[str]] = {}
    for api_version, kind in (
        ("v1", "Namespace"),
        ("v1", "Node"),
        ("resource.k8s.io/v1", "DeviceClass"),
        ("resource.k8s.io/v1", "ResourceSlice"),
    ):
        items = cluster.list(api_version, kind, label_selector=RUN_LABEL)
        found[kind] = [str(item["metadata"]["name"]) for item in items]
    for api_version, kind in (("v1", "Pod"), ("resource.k8s.io/v1", "ResourceClaim")):
        found[kind] = [
            f"{item['metadata']['namespace']}/{item['metadata']['name']}"
            for item in cluster.list(api_version, kind)
            if str(item["metadata"]["namespace"]).startswith("drasim-")
        ]
    slices = cluster.list("resource.k8s.io/v1", "ResourceSlice")
    found["drasim node slices"] = [
        str(s["metadata"]["name"]) for s in slices if str(s["spec"].get("nodeName", "")).startswith("drasim-")
    ]
    return {kind: names for kind, names in found.items() if names}


def test_conformance_suite_runs_on_a_cluster_reached_only_through_a_kubeconfig(
    foreign_cluster: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    # The fake driver reads each claim from the API server inside NodePrepareResources, as
    # real drivers do; here that is an HTTP round trip to another process. At the default
    # time scale the kubelet's 45 s call timeout is 0.45 real seconds, which a loaded CI
    # machine exceeds when that process waits for a CPU (reproduced with the server at
    # nice 19 beside CPU burners: DeadlineExceeded in batched-claims and parallel-pods).
    # The conformance suite has no injected delays or hangs, so 1/10 costs no time.
    run = _drasim(
        "run",
        str(CONFORMANCE),
        "--backend",
        "kubeconfig",
        "--kubeconfig",
        str(foreign_cluster),
        "--time-scale",
        "0.1",
        "--json",
        str(report),
    )
    assert run.returncode == 0, _failures(run)
    data = json.loads(report.read_text())
    statuses = {r["name"]: r["status"] for r in data["results"]}
    assert data["environment"]["backend"] == "kubeconfig"
    skipped = {r["name"]: r["skipReason"] for r in data["results"] if r["status"] == "skipped"}
    # Both inject API-server faults aimed at the driver.
    faulted = ["conformance-driver-reports-claim-errors", "conformance-unprepare-after-failed-prepare"]
    assert list(skipped) == faulted, skipped
    assert all("needs drasim's own API server" in skipped[name] for name in faulted)
    assert sum(s == "passed" for s in statuses.values()) == len(statuses) - len(faulted)
    # Every scenario ran in its own namespace on its own fake node, and both are gone.
    created = [
        e["object"]
        for r in data["results"]
        for e in r["journal"]
        if e["kind"] == "backend" and e["action"] == "created"
    ]
    assert len(created) == len(statuses) - len(faulted)
    assert len(set(created)) == len(created)
    assert _leftovers(foreign_cluster) == {}


def test_scenario_objects_land_in_the_run_namespace_and_nothing_else_is_touched(
    foreign_cluster: Path, tmp_path: Path
) -> None:
    cluster = KubeClientCluster(foreign_cluster)
    bystander = cluster.create(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default"}, "spec": {}}
    )
    run = _drasim(
        "run",
        str(builtin_scenario_dir() / "kubelet" / "pods" / "template-claim.yaml"),
        "--backend",
        "kubeconfig",
        "--kubeconfig",
        str(foreign_cluster),
        "--time-scale",
        "0.1",  # NodePrepareResources reads the claim over HTTP: see the conformance test above
        "--keep-workspace",
        "--json",
        str(tmp_path / "r.json"),
    )
    assert run.returncode == 0, _failures(run)
    result = json.loads((tmp_path / "r.json").read_text())["results"][0]
    creates = [
        e
        for e in result["journal"]
        if e["kind"] == "rpc" and e.get("method", "").endswith("NodePrepareResources")
    ]
    namespaces = {c["namespace"] for e in creates for c in e["request"]["claims"]}
    assert len(namespaces) == 1
    (namespace,) = namespaces
    assert namespace.startswith("drasim-pods-template-claim-")  # "default" became the run namespace
    pod = cluster.get("v1", "Pod", "a", "default")
    assert pod["metadata"]["uid"] == bystander["metadata"]["uid"]  # same name, other namespace: untouched
    assert _leftovers(foreign_cluster) == {}


def test_ctrl_c_deletes_the_run_namespace(foreign_cluster: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "hang.yaml"
    scenario.write_text(HANGING)
    cluster = KubeClientCluster(foreign_cluster)
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "drasim",
            "run",
            str(scenario),
            "--backend",
            "kubeconfig",
            "--kubeconfig",
            str(foreign_cluster),
            "--time-scale",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        preexec_fn=_default_sigint,  # noqa: PLW1509 - only resets a signal disposition
    )
    try:
        # Wait (bounded) until the scenario's pod exists: the run is inside startPod, whose
        # NodePrepareResources hangs for the kubelet's 45 s call timeout.
        deadline = time.monotonic() + 60
        pods: list[dict[str, Any]] = []
        while time.monotonic() < deadline and not pods and run.poll() is None:
            pods = [p for p in cluster.list("v1", "Pod") if p["metadata"]["namespace"].startswith("drasim-")]
        assert pods, "the run never created its pod"
        namespace = pods[0]["metadata"]["namespace"]
        assert cluster.get("v1", "Namespace", namespace)["metadata"]["labels"][RUN_LABEL] == namespace
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, out + err
    assert "interrupted" in err
    assert "Traceback" not in out + err
    names = [n["metadata"]["name"] for n in cluster.list("v1", "Namespace")]
    assert namespace not in names
    assert _leftovers(foreign_cluster) == {}


# ------------------------------------------------------------------------------- bad input
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _kubeconfig(path: Path, server: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "wrong"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return path


def _one_clear_line(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    return lines[0]


def test_unreachable_cluster_is_one_error_line(tmp_path: Path) -> None:
    port = _free_port()
    kubeconfig = _kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    line = _one_clear_line(
        _drasim("run", str(CONFORMANCE), "--backend", "kubeconfig", "--kubeconfig", str(kubeconfig))
    )
    assert line.startswith("drasim run: error: cannot reach the API server http://127.0.0.1:")
    assert str(kubeconfig) in line


class _Unauthorized(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "message": "Unauthorized",
                "reason": "Unauthorized",
                "code": 401,
            }
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _NoNodes(_Unauthorized):
    """A cluster whose user may do everything but create and delete nodes."""

    def do_GET(self) -> None:
        self._answer(200, {"kind": "APIResourceList", "groupVersion": "resource.k8s.io/v1", "resources": []})

    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        attributes = review["spec"]["resourceAttributes"]
        review["status"] = {"allowed": attributes["resource"] != "nodes"}
        self._answer(201, review)

    def _answer(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _serve(handler: type[BaseHTTPRequestHandler], tmp_path: Path, *args: str) -> str:
    """Run ``drasim run --backend kubeconfig`` against ``handler``; the one error line."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        kubeconfig = _kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{server.server_address[1]}")
        return _one_clear_line(
            _drasim("run", *args, "--backend", "kubeconfig", "--kubeconfig", str(kubeconfig))
        )
    finally:
        server.shutdown()
        server.server_close()


def test_missing_permissions_are_listed_in_one_error_line(tmp_path: Path) -> None:
    line = _serve(_NoNodes, tmp_path, str(CONFORMANCE))
    assert "the user may not create nodes, delete nodes (the RBAC a run needs: docs/backends.md)" in line


def test_a_cluster_without_resource_v1_is_one_error_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "old.kubeconfig"
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "drasim", "serve-apiserver"),
            *("--kubeconfig-out", str(kubeconfig), "--resource-api-versions", "v1beta1"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert "serving" in _readline(server, timeout=30)
        line = _one_clear_line(
            _drasim("run", str(CONFORMANCE), "--backend", "kubeconfig", "--kubeconfig", str(kubeconfig))
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert "does not serve resource.k8s.io/v1 (DRA needs Kubernetes 1.34 or newer)" in line


def test_unauthorised_kubeconfig_is_one_error_line(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        kubeconfig = _kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{server.server_address[1]}")
        line = _one_clear_line(
            _drasim("run", str(CONFORMANCE), "--backend", "kubeconfig", "--kubeconfig", str(kubeconfig))
        )
    finally:
        server.shutdown()
        server.server_close()
    assert "rejected the credentials: 401 Unauthorized" in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("clusters: [", "cannot load kubeconfig"),
        ("kind: Config\n", "cannot load kubeconfig"),
    ],
    ids=["missing", "not-yaml", "no-cluster"],
)
def test_bad_kubeconfig_file_is_one_error_line(tmp_path: Path, content: str | None, expected: str) -> None:
    kubeconfig = tmp_path / "kc"
    if content is not None:
        kubeconfig.write_text(content)
    line = _one_clear_line(_drasim("run", "--backend", "kubeconfig", "--kubeconfig", str(kubeconfig)))
    assert expected in line


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--port", "70000"], "--port must be between 0 and 65535"),
        (
            ["--resource-api-versions", "v2"],
            "--resource-api-versions: API group 'resource.k8s.io' cannot serve",
        ),
    ],
)
def test_serve_apiserver_bad_input_is_one_error_line(tmp_path: Path, args: list[str], expected: str) -> None:
    line = _one_clear_line(_drasim("serve-apiserver", "--kubeconfig-out", str(tmp_path / "kc"), *args))
    assert expected in line
    assert not (tmp_path / "kc").exists()
