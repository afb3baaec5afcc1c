"""The manager over a claim reader that hands out shared objects (MemoryCluster shared_reads)."""

from __future__ import annotations

import pytest

from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.errors import KubeletError


@pytest.fixture
def shared_harness(kit):
    harness = kit.Harness()
    store = ObjectStore()
    harness.writer = MemoryCluster(store)
    harness.claims = MemoryCluster(store, client="kubelet", shared_reads=True)
    harness.manager = harness.new_manager()
    return harness


def test_a_changed_claim_is_read_again(shared_harness, kit) -> None:
    harness = shared_harness
    harness.writer.create(kit.claim(reserved_for=(kit.POD_UID, "uid-2")))
    harness.manager.prepare_resources(kit.pod())
    harness.manager.unprepare_resources(kit.pod())
    assert harness.prepare_count() == 1
    # the pod loses its reservation: the next prepare must see the new object, not the kept view
    stored = harness.writer.get("resource.k8s.io/v1", "ResourceClaim", kit.CLAIM, kit.NAMESPACE)
    stored["status"]["reservedFor"] = [{"resource": "pods", "uid": "uid-2", "name": ""}]
    harness.writer.update_status(stored)
    with pytest.raises(KubeletError, match="is not allowed to use ResourceClaim"):
        harness.manager.prepare_resources(kit.pod())
    harness.manager.prepare_resources(kit.pod("p2", "uid-2"))
    assert harness.prepare_count() == 2


def test_a_recreated_claim_with_a_new_uid_is_read_again(shared_harness, kit) -> None:
    harness = shared_harness
    old_uid = harness.writer.create(kit.claim())["metadata"]["uid"]
    harness.manager.prepare_resources(kit.pod())
    harness.manager.unprepare_resources(kit.pod())
    harness.writer.delete("resource.k8s.io/v1", "ResourceClaim", kit.CLAIM, kit.NAMESPACE)
    new_uid = harness.writer.create(kit.claim())["metadata"]["uid"]
    assert new_uid != old_uid
    harness.manager.prepare_resources(kit.pod())
    [state] = harness.manager.claim_infos()
    assert state.claim_uid == new_uid
    assert harness.prepare_count() == 2
