"""Fixtures: one HTTP API server per module, reset before every test (cheap per test)."""

from __future__ import annotations

import pytest

from drasim.apiserver.http import HttpApiServer
from drasim.apiserver.kinds import RESOURCE_GROUP
from drasim.apiserver.store import ObjectStore


class ListRecorder:
    """A Recorder that keeps events in a list."""

    def __init__(self):
        self.events = []

    def record(self, kind, **fields):
        self.events.append((kind, fields))

    def api(self):
        return [fields for kind, fields in self.events if kind == "api"]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    store = ObjectStore(recorder=ListRecorder(), served={RESOURCE_GROUP: ["v1", "v1beta2"]})
    with HttpApiServer(store) as server:
        server.kubeconfig_path = server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig")
        yield server


@pytest.fixture
def server(http_server):
    http_server.store.reset()
    http_server.store.recorder.events.clear()
    return http_server


@pytest.fixture
def kube_api(server):
    kubernetes = pytest.importorskip("kubernetes")
    api = kubernetes.config.new_client_from_config(config_file=str(server.kubeconfig_path))
    yield api
    api.close()
