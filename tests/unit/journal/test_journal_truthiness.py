"""An empty journal is falsy (it has a length): components must test ``is None``, not truthiness."""

from __future__ import annotations

from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.journal import Journal


def test_empty_journal_still_receives_api_events() -> None:
    journal = Journal()
    assert len(journal) == 0
    cluster = MemoryCluster(ObjectStore(recorder=journal), client="runner")
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    [event] = journal.events("api")
    assert event["verb"] == "create"
    assert event["client"] == "runner"
