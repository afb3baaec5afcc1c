"""The fake driver's DRAPlugin servicer through grpcio-testing (no socket): the status each
hostile or failing request gets, and what the journal records."""

from __future__ import annotations

from types import SimpleNamespace

import grpc
import grpc_testing
import pytest

from drasim._proto.dra.v1 import api_pb2
from fake_plugins import Behaviour, FakeDriverConfig
from fake_plugins.core import DriverCore
from fake_plugins.journal import Journal
from fake_plugins.servicers import DRAPluginServicer

DESCRIPTOR = api_pb2.DESCRIPTOR.services_by_name["DRAPlugin"]
PREPARE = DESCRIPTOR.methods_by_name["NodePrepareResources"]
UNPREPARE = DESCRIPTOR.methods_by_name["NodeUnprepareResources"]


class NoEffects:
    def before(self, faults, context=None) -> None:
        pass

    def after(self, faults) -> None:
        pass


def allocated(ns: str, name: str) -> dict:
    results = [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]
    return {
        "kind": "ResourceClaim",
        "metadata": {"namespace": ns, "name": name, "uid": f"uid-{name}"},
        "status": {"allocation": {"devices": {"results": results}}},
    }


@pytest.fixture
def server(tmp_path):
    config = FakeDriverConfig(plugin_dir=str(tmp_path / "plug"), cdi_dir=str(tmp_path / "cdi"))
    core = DriverCore(config, claim_source=allocated, effects=NoEffects(), behaviour=Behaviour())
    runtime = SimpleNamespace(
        config=config,
        core=core,
        journal=Journal(config.driver_name),
        effects=core.effects,
        stopping=False,
        select_faults=lambda rpc, claims=(): [],
        crash=lambda: None,
    )
    servicer = DRAPluginServicer(runtime, api_pb2)
    testing = grpc_testing.server_from_dictionary({DESCRIPTOR: servicer}, grpc_testing.strict_real_time())
    return testing, runtime, tmp_path


def invoke(testing, method, request):
    rpc = testing.invoke_unary_unary(method, (), request, None)
    return rpc.termination()


def test_a_traversing_uid_is_invalid_argument_and_journaled(server):
    testing, runtime, tmp_path = server
    request = api_pb2.NodeUnprepareResourcesRequest(
        claims=[api_pb2.Claim(namespace="default", uid="../../../victimdir/victim", name="gpu")]
    )
    _response, _metadata, code, details = invoke(testing, UNPREPARE, request)
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert "claim UID" in details
    assert runtime.journal.calls[-1].code == "INVALID_ARGUMENT"
    assert not (tmp_path / "victimdir").exists()


def test_a_good_prepare_is_ok_with_the_device(server):
    testing, _, _ = server
    request = api_pb2.NodePrepareResourcesRequest(
        claims=[api_pb2.Claim(namespace="default", uid="uid-gpu", name="gpu")]
    )
    response, _metadata, code, _details = invoke(testing, PREPARE, request)
    assert code is grpc.StatusCode.OK
    assert [d.device_name for d in response.claims["uid-gpu"].devices] == ["gpu-0"]


def test_a_cdi_write_failure_is_internal_with_the_path(server):
    testing, _, tmp_path = server
    (tmp_path / "cdi").write_text("a file where the CDI folder should be")
    request = api_pb2.NodePrepareResourcesRequest(
        claims=[api_pb2.Claim(namespace="default", uid="uid-gpu", name="gpu")]
    )
    _response, _metadata, code, details = invoke(testing, PREPARE, request)
    assert code is grpc.StatusCode.INTERNAL
    assert details.startswith(str(tmp_path / "cdi"))
    assert "cannot write CDI spec" in details
