"""The generated modules in drasim/_proto are current, and the wire names match upstream."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_generated_modules_are_current(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("gen_protos", ROOT / "tools" / "gen_protos.py")
    assert spec is not None
    assert spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen_protos"] = gen
    spec.loader.exec_module(gen)
    gen.generate(tmp_path)
    generated = (tmp_path / "drasim" / "_proto").rglob("*")
    fresh = sorted(p.relative_to(tmp_path) for p in generated if p.is_file())
    committed = sorted(
        p.relative_to(ROOT)
        for p in (ROOT / "drasim" / "_proto").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    assert fresh == committed, "run `tox -e protos` (python tools/gen_protos.py) and commit the result"
    stale = [str(p) for p in fresh if not filecmp.cmp(tmp_path / p, ROOT / p, shallow=False)]
    assert not stale, f"stale generated modules (run `tox -e protos`): {stale}"


@pytest.mark.parametrize(
    ("module", "service", "methods"),
    [
        (
            "drasim._proto.dra.v1.api_pb2",
            "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin",
            {"NodePrepareResources", "NodeUnprepareResources"},
        ),
        (
            "drasim._proto.dra.v1beta1.api_pb2",
            "k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin",
            {"NodePrepareResources", "NodeUnprepareResources"},
        ),
        (
            # v1alpha4 (kubelets 1.31-1.33) kept the v1alpha3 proto package and the Node service.
            "drasim._proto.dra.v1alpha4.api_pb2",
            "v1alpha3.Node",
            {"NodePrepareResources", "NodeUnprepareResources"},
        ),
        (
            "drasim._proto.pluginregistration.v1.api_pb2",
            "pluginregistration.Registration",
            {"GetInfo", "NotifyRegistrationStatus"},
        ),
        ("drasim._proto.drahealth.v1alpha1.api_pb2", "v1alpha1.DRAResourceHealth", {"NodeWatchResources"}),
        ("drasim._proto.drahealth.v1.api_pb2", "v1.DRAResourceHealth", {"NodeWatchResources"}),
    ],
)
def test_service_names(module: str, service: str, methods: set[str]) -> None:
    import importlib

    mod = importlib.import_module(module)
    short = service.rsplit(".", 1)[1]
    desc = mod.DESCRIPTOR.services_by_name[short]
    assert desc.full_name == service
    assert {m.name for m in desc.methods} == methods


def _fields(module: str, message: str) -> dict[str, int]:
    import importlib

    desc = importlib.import_module(module).DESCRIPTOR.message_types_by_name[message]
    return {f.name: f.number for f in desc.fields}


def test_field_numbers_match_upstream() -> None:
    v1 = "drasim._proto.dra.v1.api_pb2"
    assert _fields(v1, "Device") == {
        "request_names": 1,
        "pool_name": 2,
        "device_name": 3,
        "cdi_device_ids": 4,
        "share_id": 5,
    }
    assert _fields(v1, "Claim") == {"namespace": 1, "uid": 2, "name": 3}
    assert _fields(v1, "NodePrepareResourceResponse") == {"devices": 1, "error": 2}
    assert _fields(v1, "NodeUnprepareResourceResponse") == {"error": 1}
    beta = "drasim._proto.dra.v1beta1.api_pb2"
    assert "share_id" not in _fields(beta, "Device")
    alpha4 = "drasim._proto.dra.v1alpha4.api_pb2"
    assert _fields(alpha4, "Device") == {
        "request_names": 1,
        "pool_name": 2,
        "device_name": 3,
        "cdi_device_ids": 4,
    }
    assert _fields(alpha4, "Claim") == {"namespace": 1, "uid": 2, "name": 3}
    reg = "drasim._proto.pluginregistration.v1.api_pb2"
    assert _fields(reg, "PluginInfo") == {"type": 1, "name": 2, "endpoint": 3, "supported_versions": 4}
    assert _fields(reg, "RegistrationStatus") == {"plugin_registered": 1, "error": 2}
    health = "drasim._proto.drahealth.v1alpha1.api_pb2"
    assert _fields(health, "DeviceHealth") == {
        "device": 1,
        "health": 2,
        "last_updated_time": 3,
        "health_check_timeout_seconds": 4,
        "message": 5,
    }
