"""The fake plugin's own journal (in-process forwarding and its JSON-lines file) folds into ours."""

from __future__ import annotations

import time

from drasim.journal import Journal
from fake_plugins.journal import Journal as FakePluginJournal

PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
REQUEST = {"claims": [{"namespace": "default", "uid": "uid-1", "name": "gpu"}]}


def test_fake_plugin_journal_file_and_forwarding(tmp_path):
    ours = Journal()
    path = tmp_path / "plugin.jsonl"
    theirs = FakePluginJournal("gpu.example.com", recorder=ours, path=path)
    theirs.record(
        PREPARE, REQUEST, None, code="UNAVAILABLE", details="injected", start=time.time(), duration=0.01
    )
    theirs.close()
    (forwarded,) = ours.rpc_calls("NodePrepareResources", side="plugin")
    assert forwarded.error == "injected"
    assert forwarded.claim_keys == ["default/gpu"]
    assert forwarded.event["source_seq"] == 1

    merged_into = Journal()
    assert merged_into.merge_jsonl(path, source="gpu-plugin") == 1
    (call,) = merged_into.rpc_calls("NodePrepareResources", side="plugin")
    assert call.code == "UNAVAILABLE"
    assert call.claim_keys == ["default/gpu"]
    assert call.event["source"] == "gpu-plugin"
    assert 0.0 <= call.t < 60.0  # placed on our timeline from its wall-clock start
