"""kubectl (a client-go program) against HttpApiServer; skipped when kubectl is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: default, labels: {team: a}}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
"""


@pytest.fixture
def kubectl(server, tmp_path):
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(CLAIM)

    def run(*args: str, stdin: str | None = None) -> str:
        result = subprocess.run(
            [
                KUBECTL,
                "--kubeconfig",
                str(server.kubeconfig_path),
                "--cache-dir",
                str(tmp_path / "cache"),
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    run.manifest = str(manifest)
    return run


def test_kubectl_create_get_label_patch_apply_delete(kubectl, server):
    assert "created" in kubectl("create", "--validate=false", "-f", kubectl.manifest)
    got = json.loads(kubectl("get", "resourceclaim", "gpu", "-o", "json"))
    assert got["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"
    kubectl("label", "resourceclaim", "gpu", "tier=x")
    kubectl(
        "patch",
        "resourceclaim",
        "gpu",
        "--type=json",
        "-p",
        '[{"op":"add","path":"/metadata/annotations","value":{"n":"1"}}]',
    )
    kubectl("apply", "--validate=false", "-f", kubectl.manifest)
    listed = json.loads(kubectl("get", "resourceclaims", "-l", "tier=x,team in (a)", "-o", "json"))
    (item,) = listed["items"]
    assert item["metadata"]["annotations"]["n"] == "1"
    assert "kubectl.kubernetes.io/last-applied-configuration" in item["metadata"]["annotations"]
    kubectl("delete", "resourceclaim", "gpu")
    assert json.loads(kubectl("get", "resourceclaims", "-o", "json"))["items"] == []


def test_kubectl_discovery_and_field_selectors(kubectl):
    resources = kubectl("api-resources", "--api-group=resource.k8s.io", "-o", "name")
    assert set(resources.split()) == {
        "deviceclasses.resource.k8s.io",
        "resourceclaims.resource.k8s.io",
        "resourceclaimtemplates.resource.k8s.io",
        "resourceslices.resource.k8s.io",
    }
    for node in ("node-1", "node-2"):
        kubectl(
            "create",
            "--validate=false",
            "-f",
            "-",
            stdin=json.dumps(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"{node}-slice"},
                    "spec": {
                        "driver": "gpu.example.com",
                        "nodeName": node,
                        "pool": {"name": node, "resourceSliceCount": 1},
                    },
                }
            ),
        )
    out = kubectl("get", "resourceslices", "--field-selector", "spec.nodeName=node-2", "-o", "name")
    assert out.split() == ["resourceslice.resource.k8s.io/node-2-slice"]
    kubectl("delete", "resourceslices", "--all")
    assert kubectl("get", "resourceslices", "-o", "name").strip() == ""
