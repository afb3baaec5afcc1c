"""Fault injection: scenario dicts, matching, once/times/always, and its effect through MemoryCluster."""

from __future__ import annotations

import pytest

from drasim.apiserver import FaultInjector, MemoryCluster, ObjectStore, decode_fault
from drasim.errors import ApiError, ConfigError

CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "gpu", "namespace": "default"},
    "spec": {},
}


class ListRecorder:
    def __init__(self):
        self.events = []

    def record(self, kind, **fields):
        self.events.append((kind, fields))


@pytest.fixture
def cluster():
    slept = []
    store = ObjectStore(recorder=ListRecorder(), sleep=slept.append)
    store.slept = slept
    cluster = MemoryCluster(store)
    cluster.create(CLAIM)
    return cluster


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"verb": "fetch", "code": 500}, "fault verb: 'fetch' is not a verb"),
        ({"resource": "widgets", "code": 500}, "fault resource: 'widgets' is not served"),
        ({"code": 418}, "fault code: 418 is not supported"),
        ({"verb": "get"}, "needs at least one of code, latency or dropWatch"),
        ({"code": 500, "tiems": 2}, "unknown field(s) ['tiems']"),
        ({"code": "500"}, "fault code: expected an integer"),
        ({"latency": -1}, "fault latency: must be >= 0"),
        ({"code": 500, "times": 0}, "fault times: must be >= 1"),
        ({"verb": "get", "dropWatch": True}, "dropWatch: only applies to verb 'watch'"),
    ],
)
def test_bad_fault_specs_are_config_errors(spec, message):
    with pytest.raises(ConfigError) as err:
        decode_fault(spec)
    assert message in str(err.value)


def test_resource_may_be_named_by_kind_or_plural():
    injector = FaultInjector()
    assert injector.add(decode_fault({"resource": "ResourceClaim", "code": 500})).resource == "resourceclaims"
    assert injector.add(decode_fault({"resource": "resourceclaim", "code": 500})).resource == "resourceclaims"


def test_error_fires_times_then_retires(cluster):
    cluster.store.faults.add(
        decode_fault({"resource": "resourceclaims", "verb": "get", "name": "gpu", "code": 503, "times": 2})
    )
    for _ in range(2):
        with pytest.raises(ApiError) as err:
            cluster.get_resource_claim("default", "gpu")
        assert (err.value.code, err.value.reason) == (503, "ServiceUnavailable")
    assert cluster.get_resource_claim("default", "gpu")["metadata"]["name"] == "gpu"
    assert cluster.store.faults.faults == []


def test_fault_matching_respects_name_namespace_and_verb(cluster):
    cluster.store.faults.add(decode_fault({"name": "other", "code": 500, "always": True}))
    cluster.store.faults.add(decode_fault({"namespace": "kube-system", "code": 500, "always": True}))
    cluster.store.faults.add(decode_fault({"verb": "delete", "code": 409, "always": True}))
    assert cluster.get_resource_claim("default", "gpu")
    with pytest.raises(ApiError) as err:
        cluster.delete("resource.k8s.io/v1", "ResourceClaim", "gpu", "default")
    assert err.value.code == 409


def test_always_fault_keeps_firing_and_once_fires_once(cluster):
    cluster.store.faults.add(decode_fault({"verb": "list", "code": 429, "always": True}))
    cluster.store.faults.add(decode_fault({"verb": "get", "code": 404, "once": True}))
    for _ in range(3):
        with pytest.raises(ApiError) as err:
            cluster.list("resource.k8s.io/v1", "ResourceClaim")
        assert err.value.code == 429
    with pytest.raises(ApiError):
        cluster.get_resource_claim("default", "gpu")
    assert cluster.get_resource_claim("default", "gpu")


def test_latency_sleeps_before_answering(cluster):
    cluster.store.faults.add(decode_fault({"verb": "get", "latency": 0.25}))
    cluster.get_resource_claim("default", "gpu")
    assert cluster.store.slept == [0.25]


def test_dropped_watch_ends_after_events(cluster):
    cluster.store.faults.add(
        decode_fault({"resource": "resourceclaims", "verb": "watch", "dropWatch": True, "afterEvents": 1})
    )
    watch = cluster.watch("resource.k8s.io/v1", "ResourceClaim", "default")
    events = list(watch)
    assert [e.type for e in events] == ["ADDED"]
    assert watch.dropped


def test_journal_records_every_call_with_code_and_client(cluster):
    cluster.store.faults.add(decode_fault({"verb": "get", "code": 500}))
    with pytest.raises(ApiError):
        cluster.get_resource_claim("default", "gpu")
    cluster.get_resource_claim("default", "gpu")
    api = [fields for kind, fields in cluster.store.recorder.events if kind == "api"]
    assert [(f["verb"], f["resource"], f["code"]) for f in api] == [
        ("create", "resourceclaims", 201),
        ("get", "resourceclaims", 500),
        ("get", "resourceclaims", 200),
    ]
    assert {f["client"] for f in api} == {"in-process"}
    assert api[1]["namespace"] == "default"
    assert api[1]["name"] == "gpu"
    assert all(f["duration"] >= 0 for f in api)
