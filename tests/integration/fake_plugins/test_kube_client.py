"""Claim source and slice publisher through the real kubernetes client against a tiny HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from drasim.errors import ApiError
from fake_plugins import FakeDriverConfig
from fake_plugins.claims import KubeClaimSource
from fake_plugins.slices import KubeSlicePublisher, build_slices

CLAIM = {
    "apiVersion": "resource.k8s.io/v1beta2",
    "kind": "ResourceClaim",
    "metadata": {"name": "gpu", "namespace": "default", "uid": "uid-1"},
    "status": {"allocation": {"devices": {"results": []}}},
}


class Api:
    """Serves one claim under v1beta2 only; records requests; keeps created slices."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.slices: list[dict[str, Any]] = []


def _handler(api: Api) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            api.requests.append(("GET", self.path))
            if self.path == "/apis/resource.k8s.io/v1beta2/namespaces/default/resourceclaims/gpu":
                self._send(200, CLAIM)
            elif self.path.startswith("/apis/resource.k8s.io/v1/resourceslices"):
                self._send(
                    200, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList", "items": []}
                )
            else:
                status = {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}
                self._send(404, {**status, "message": "the server could not find the requested resource"})

        def do_POST(self) -> None:
            api.requests.append(("POST", self.path))
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            api.slices.append(body)
            self._send(201, body)

    return Handler


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[tuple[Path, Api]]:
    api = Api()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    path = tmp_path / "kubeconfig"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
                "users": [{"name": "u", "user": {}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    try:
        yield path, api
    finally:
        server.shutdown()
        server.server_close()


def test_claim_source_falls_back_from_v1_and_remembers(kubeconfig):
    path, api = kubeconfig
    source = KubeClaimSource(path)
    assert source("default", "gpu")["metadata"]["uid"] == "uid-1"
    assert source("default", "gpu")["metadata"]["uid"] == "uid-1"
    claim_paths = [p for _, p in api.requests if "resourceclaims" in p]
    assert claim_paths == [
        "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/gpu",
        "/apis/resource.k8s.io/v1beta2/namespaces/default/resourceclaims/gpu",
        "/apis/resource.k8s.io/v1beta2/namespaces/default/resourceclaims/gpu",
    ]
    with pytest.raises(ApiError) as err:
        source("default", "missing")
    assert err.value.code == 404


def test_slice_publisher_creates_the_node_slice(kubeconfig):
    path, api = kubeconfig
    config = FakeDriverConfig(node_name="n1", devices=3)
    KubeSlicePublisher(path, driver=config.driver_name, node="n1")(build_slices(config))
    (created,) = api.slices
    assert created["spec"]["nodeName"] == "n1"
    assert [d["name"] for d in created["spec"]["devices"]] == ["gpu-0", "gpu-1", "gpu-2"]
    list_path = next(p for m, p in api.requests if m == "GET")
    assert "fieldSelector=spec.driver%3Dgpu.example.com%2Cspec.nodeName%3Dn1" in list_path
