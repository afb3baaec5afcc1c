"""A claim reference from a request never reaches the file system outside the driver's folders."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from drasim.values import ClaimRef
from fake_plugins import Behaviour, FakeDriverConfig
from fake_plugins.core import CallError, DriverCore
from fake_plugins.names import ref_problem

TRAVERSAL = "/../../victimdir/victim"


class NoEffects:
    def before(self, faults, context=None) -> None:
        pass

    def after(self, faults) -> None:
        pass


def allocated(uid: str) -> dict:
    results = [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]
    return {
        "kind": "ResourceClaim",
        "metadata": {"namespace": "default", "name": "gpu", "uid": uid},
        "status": {"allocation": {"devices": {"results": results}}},
    }


def make_core(tmp_path: Path, uid: str) -> DriverCore:
    config = FakeDriverConfig(plugin_dir=str(tmp_path / "plug"), cdi_dir=str(tmp_path / "cdi"))
    # A folder named like a spec file's prefix makes ``..`` in a UID walk out of the CDI folder.
    (tmp_path / "cdi" / f"{config.driver_name}-claim_").mkdir(parents=True)
    return DriverCore(
        config, claim_source=lambda ns, name: allocated(uid), effects=NoEffects(), behaviour=Behaviour()
    )


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victimdir" / "victim.json"
    path.parent.mkdir()
    path.write_text("precious")
    return path


def test_unprepare_with_a_traversing_uid_deletes_nothing_outside(tmp_path, victim):
    core = make_core(tmp_path, TRAVERSAL)
    with pytest.raises(CallError) as err:
        core.unprepare([ClaimRef("default", TRAVERSAL, "gpu")], [])
    assert err.value.code == "INVALID_ARGUMENT"
    assert "claim UID" in err.value.details
    assert victim.read_text() == "precious"


def test_prepare_with_a_traversing_uid_writes_nothing_outside(tmp_path, victim):
    victim.unlink()
    core = make_core(tmp_path, TRAVERSAL)
    with pytest.raises(CallError) as err:
        core.prepare([ClaimRef("default", TRAVERSAL, "gpu")], [])
    assert err.value.code == "INVALID_ARGUMENT"
    assert not victim.exists()
    assert not list((tmp_path / "victimdir").iterdir())


@pytest.mark.parametrize(
    ("namespace", "uid", "name"),
    [
        ("default", "", "gpu"),
        ("default", "..", "gpu"),
        ("default", ".hidden", "gpu"),
        ("default", "a/b", "gpu"),
        ("default", "a\x00b", "gpu"),
        ("default", "x" * 129, "gpu"),
        ("default", "uid-1", "GPU"),
        ("default", "uid-1", "a/b"),
        ("kube.system", "uid-1", "gpu"),
        ("", "uid-1", "gpu"),
    ],
)
def test_references_kubernetes_would_not_hand_out_are_refused(namespace, uid, name):
    assert ref_problem(ClaimRef(namespace, uid, name)) is not None


@pytest.mark.parametrize("uid", [str(uuid.UUID(int=7)), "uid-1", "claim_a.1"])
def test_uuids_and_simple_test_uids_are_accepted(uid):
    assert ref_problem(ClaimRef("default", uid, "gpu-claim.example")) is None
