"""The manager against the real checkpoint file store: restart and corruption end to end."""

from __future__ import annotations

import pytest

from drasim.errors import KubeletError

store_module = pytest.importorskip("drasim.checkpoint.store")


@pytest.fixture
def file_harness(kit, tmp_path):
    harness = kit.Harness()
    harness.checkpoint = store_module.FileCheckpointStore(tmp_path / "dra_manager_state")
    harness.manager = harness.new_manager()
    return harness


def test_restart_from_file_keeps_state_without_duplicates(file_harness, kit) -> None:
    harness = file_harness
    assert harness.checkpoint.path.exists()
    harness.claims.add(kit.claim(reserved_for=(kit.POD_UID, "uid-2")))
    harness.manager.prepare_resources(kit.pod())
    before = harness.manager.claim_infos()
    manager = harness.restart()
    assert manager.claim_infos() == before
    manager.prepare_resources(kit.pod("p2", "uid-2"))
    cdi = "test-driver/test=claim-test-claim-uid"
    assert manager.get_resources(kit.pod(), kit.CONTAINER) == [cdi]
    manager = harness.restart()
    [state] = manager.claim_infos()
    assert state.pod_uids == {kit.POD_UID, "uid-2"}
    assert len(state.driver_state[kit.DRIVER].devices) == 1


def test_corrupt_file_stops_the_kubelet(file_harness, kit) -> None:
    path = file_harness.checkpoint.path
    path.write_text(path.read_text().replace('"Checksum":', '"Checksum":1'))
    with pytest.raises(KubeletError, match="please drain node and remove DRA state file"):
        file_harness.new_manager()
