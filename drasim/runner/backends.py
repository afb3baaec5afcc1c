"""API-server backends of a scenario run: where objects live and how each client reaches them.

========== ============================== =============================================
backend    objects live in                the runner, the kubelet and fake drivers use
========== ============================== =============================================
memory     an in-process ObjectStore      MemoryCluster (direct calls)
http       the same store behind          KubeClientCluster (the kubernetes client)
           HttpApiServer on 127.0.0.1     over HTTP, exactly as a driver does
kubeconfig a real cluster's API server    KubeClientCluster built from the kubeconfig
========== ============================== =============================================

A driver process always gets a kubeconfig: the HTTP server's (started on demand for
``memory``) or the user's. On a real cluster (``kubeconfig``) each scenario gets fresh
namespaces (``default`` becomes ``drasim-<scenario>-<random>``, any other namespace
``<that>-<name>``), a fake Node named ``<that>-<node>``, and the cluster-scoped objects
the scenario defines (DeviceClasses, ResourceSlices) get the same prefix; everything is
labelled ``drasim.dev/run=<prefix>`` and deleted in :meth:`Backend.close`. Nothing else
in the cluster is written. The kubelet core never learns which backend it runs on: it
is handed a ClaimReader like any other.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drasim.apiserver import MemoryCluster, ObjectStore
from drasim.apiserver.port import Cluster
from drasim.errors import ApiError, ConfigError, DrasimError
from drasim.runner.backend_choice import BACKENDS, backend_skip_reason, chosen_backend, default_kubeconfig
from drasim.runner.cluster_names import (
    CLUSTER_SCOPED,
    MANAGED_BY,
    RUN_LABEL,
    defined_names,
    rename_classes,
    run_prefix,
    with_current_context,
)

if TYPE_CHECKING:
    from drasim.journal import Journal
    from drasim.scenario.schema import Scenario

__all__ = [
    "BACKENDS",
    "CLUSTER_SCOPED",
    "RUN_LABEL",
    "Backend",
    "HttpBackend",
    "KubeconfigBackend",
    "backend_skip_reason",
    "chosen_backend",
    "default_kubeconfig",
    "open_backend",
    "run_prefix",
]

# Who is who in the API server's journal and fault rules (drasim.faults.CLIENT_KINDS).
RUNNER, KUBELET, DRIVER = "runner", "kubelet", "driver"


class Backend:
    """The memory backend, and the interface of every backend.

    ``runner_api``, ``kubelet_api`` and ``driver_api`` are the three clients (the journal
    and fault rules tell them apart); ``store`` is ``None`` when drasim does not own the
    server (no fault injection). The ``*name``/``namespace``/``relocate`` mappings are the
    identity except on a real cluster.
    """

    name = "memory"
    real_cluster = False
    """The server assigns UIDs and runs controllers: pods are created before their claims are reserved."""

    def __init__(
        self,
        scenario: Scenario,
        journal: Journal,
        root: Path,
        *,
        served: list[str] | None = None,
        claim_version: str = "v1",
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.scenario = scenario
        self.journal = journal
        self.root = root
        self.claim_version = claim_version
        versions = served if served is not None else list(scenario.spec.api_server.resource_api_versions)
        self.store: ObjectStore | None = ObjectStore(
            served={"resource.k8s.io": versions}, recorder=journal, sleep=sleep or time.sleep
        )
        self._http: Any = None
        self._driver_clients: dict[str, Cluster] = {}
        self._kubeconfig: Path | None = None
        self.runner_api: Cluster = MemoryCluster(self.store, client=RUNNER)
        # The kubelet only reads the claims it gets, so it is served shared copies.
        self.kubelet_api: Cluster = MemoryCluster(
            self.store, client=KUBELET, claim_version=claim_version, shared_reads=True
        )
        self.driver_api: Cluster = MemoryCluster(self.store, client=DRIVER)

    def driver_client(self, driver: str) -> Cluster:
        """A client for one in-process fake driver, journaled under the driver's name (cached)."""
        client = self._driver_clients.get(driver)
        if client is None:
            client = self._driver_clients[driver] = self._new_driver_client(driver)
        return client

    def _new_driver_client(self, driver: str) -> Cluster:
        return MemoryCluster(self.store, client=driver)

    @property
    def node(self) -> str:
        """The node the emulated kubelet runs as."""
        return self.node_name(str(self.scenario.spec.kubelet.node))

    def node_name(self, name: str) -> str:
        """The API-server name of a node the scenario names."""
        return name

    def namespace(self, namespace: str) -> str:
        """The API-server namespace of a scenario namespace."""
        return namespace

    def object_name(self, kind: str, name: str) -> str:  # noqa: ARG002 - renamed on a real cluster
        """The API-server name of an object the scenario names (cluster-scoped kinds may be renamed)."""
        return name

    def relocate(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """A scenario manifest as this backend creates it."""
        return dict(manifest)

    def kubeconfig(self) -> Path:
        """A kubeconfig for driver processes (memory: starts the HTTP face of the store on first use)."""
        if self._kubeconfig is None:
            self._kubeconfig = self._start_http()
        return self._kubeconfig

    def _start_http(self) -> Path:
        from drasim.apiserver.http import HttpApiServer

        self._http = HttpApiServer(self.store).start()
        path: Path = self._http.write_kubeconfig(self.root / "kubeconfig")
        return path

    def setup(self) -> None:
        """Create what the run needs before the scenario's objects (namespaces, on a real cluster)."""

    def close(self) -> None:
        """:meth:`stop`, then delete what the run created on a real cluster; never raises."""
        self.stop()

    def stop(self) -> None:
        """Stop drasim's HTTP API server, if one runs; never raises."""
        if self._http is not None:
            with contextlib.suppress(Exception):
                self._http.stop()
            self._http = None


class HttpBackend(Backend):
    """The store behind drasim's HTTP API server; every client talks to it with the kubernetes client."""

    name = "http"

    def __init__(self, scenario: Scenario, journal: Journal, root: Path, **options: Any) -> None:
        super().__init__(scenario, journal, root, **options)
        from drasim.apiserver.kubeclient import KubeClientCluster

        runner = KubeClientCluster(self.kubeconfig(), user_agent=RUNNER)
        self._clients = runner
        self.runner_api, self.kubelet_api, self.driver_api = (
            runner,
            runner.sibling(KUBELET, claim_version=self.claim_version),
            runner.sibling(DRIVER),
        )

    def _new_driver_client(self, driver: str) -> Cluster:
        """Over HTTP the driver's name is its user agent (the server journals it and matches faults)."""
        return self._clients.sibling(driver)


class KubeconfigBackend(Backend):
    """A real cluster (or any API server) reached only through a kubeconfig file."""

    name = "kubeconfig"
    real_cluster = True

    def __init__(
        self,
        scenario: Scenario,
        journal: Journal,
        root: Path,
        path: Path,
        *,
        context: str | None = None,
        expand: Callable[[Any], Any] = lambda value: value,
        claim_version: str = "v1",
    ) -> None:
        from drasim.apiserver.kubeclient import KubeClientCluster

        super().__init__(scenario, journal, root, claim_version=claim_version)
        self.store = None
        self.path = path
        self.context = context
        # A real cluster journals nothing for drasim: the clients record their own requests.
        runner = KubeClientCluster(
            path, context=context, user_agent=f"drasim-{RUNNER}", recorder=journal, client=RUNNER
        )
        self._clients = runner
        self.runner_api = runner
        self.kubelet_api = runner.sibling(
            f"drasim-{KUBELET}", client=KUBELET, claim_version=self.claim_version
        )
        self.driver_api = runner.sibling(f"drasim-{DRIVER}", client=DRIVER)
        self.prefix = run_prefix(scenario.name)
        self._lock = threading.Lock()
        self._namespaces: dict[str, str] = {}
        self._created: dict[tuple[str, str, str], None] = {}
        self._expand = expand
        self._classes: set[str] | None = None
        self._node_created = False
        self._nodes: set[str] = set()
        self._closed = False

    def _new_driver_client(self, driver: str) -> Cluster:
        return self._clients.sibling(f"drasim-{driver}", client=driver)

    # ------------------------------------------------------------- name mapping
    def node_name(self, name: str) -> str:
        """``<prefix>-<name>``: the run's fake node, and fake other nodes the scenario mentions."""
        if name.startswith(f"{self.prefix}-"):
            return name
        real = f"{self.prefix}-{name}"
        self._nodes.add(real)
        return real

    def namespace(self, namespace: str) -> str:
        """``default`` → ``<prefix>``, ``x`` → ``<prefix>-x``; created on first use."""
        namespace = namespace or "default"
        if namespace in self._namespaces.values():
            return namespace  # already an API-server namespace
        with self._lock:
            real = self._namespaces.get(namespace)
            if real is None:
                if self._closed:
                    raise DrasimError("the run's namespaces were already deleted; nothing more is created")
                real = (
                    self.prefix if namespace == "default" else f"{self.prefix}-{namespace}"[:63].rstrip("-")
                )
                self._create_namespace(real)
                self._namespaces[namespace] = real
        return real

    def object_name(self, kind: str, name: str) -> str:
        """Cluster-scoped objects the scenario defines are prefixed (names are unique cluster-wide)."""
        if kind == "Node":
            return self.node_name(name)
        if kind == "Namespace":
            return self.namespace(name)
        if kind in CLUSTER_SCOPED and not name.startswith(f"{self.prefix}-"):
            return f"{self.prefix}-{name}"
        return name

    def relocate(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """Namespaces mapped, cluster-scoped names prefixed, references to them rewritten, labelled."""
        obj: dict[str, Any] = copy.deepcopy(dict(manifest))
        kind = str(obj.get("kind") or "")
        md = obj.setdefault("metadata", {})
        if kind in CLUSTER_SCOPED:
            if md.get("name"):
                md["name"] = self.object_name(kind, str(md["name"]))
            if md.get("generateName"):
                md["generateName"] = f"{self.prefix}-{md['generateName']}"
            if kind not in ("Node", "Namespace"):
                self._track(str(obj.get("apiVersion") or ""), kind, str(md.get("name") or ""))
        else:
            md["namespace"] = self.namespace(str(md.get("namespace") or "default"))
        md.setdefault("labels", {})[RUN_LABEL] = self.prefix
        spec = obj.get("spec")
        if kind == "ResourceSlice" and isinstance(spec, dict) and spec.get("nodeName"):
            spec["nodeName"] = self.node_name(str(spec["nodeName"]))
        if self._classes is None:  # names as the manifests read once $(DRIVER) is expanded
            self._classes = {str(self._expand(name)) for name in defined_names(self.scenario, "DeviceClass")}
        rename_classes(obj, {name: self.object_name("DeviceClass", name) for name in self._classes})
        return obj

    def _track(self, api_version: str, kind: str, name: str) -> None:
        if name:
            with self._lock:
                self._created[(api_version, kind, name)] = None

    # ------------------------------------------------------------- lifetime
    def kubeconfig(self) -> Path:
        """The user's kubeconfig: a driver under test reaches the same cluster.

        With a ``context``, a copy in the workspace whose current context is that one (relative
        file paths made absolute), since a driver has no flag for a context.
        """
        if self.context is None:
            return self.path
        if self._kubeconfig is None:
            self._kubeconfig = with_current_context(self.path, self.context, self.root / "kubeconfig")
        return self._kubeconfig

    def setup(self) -> None:
        """The scenario's default namespace, then the fake Node."""
        self.namespace("default")
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.node,
                "labels": {
                    "kubernetes.io/hostname": self.node[:63].rstrip("-"),
                    RUN_LABEL: self.prefix,
                    **MANAGED_BY,
                },
            },
            # Nothing real is ever scheduled onto the fake node.
            "spec": {
                "unschedulable": True,
                "taints": [{"key": "drasim.dev/fake-node", "effect": "NoSchedule"}],
            },
        }
        self.runner_api.create(node)
        self._node_created = True

    def _create_namespace(self, name: str) -> None:
        manifest = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {RUN_LABEL: self.prefix, **MANAGED_BY}},
        }
        self.runner_api.create(manifest)
        self.journal.record("backend", action="created", object=f"Namespace/{name}")

    def close(self) -> None:
        """Delete the namespaces, the node's slices, the scenario's cluster-scoped objects, the Node."""
        with self._lock:
            self._closed = True
        for namespace in self._namespaces.values():
            self._release_pods(namespace)
        deletions: list[tuple[str, str, str, str]] = [
            ("v1", "Namespace", name, "") for name in self._namespaces.values()
        ]
        deletions += [(api, kind, name, "") for api, kind, name in reversed(list(self._created))]
        for api_version, kind, name, namespace in deletions:
            self._delete(api_version, kind, name, namespace)
        for node in sorted(self._nodes):
            with contextlib.suppress(ApiError):
                self.runner_api.delete_collection(
                    "resource.k8s.io/v1", "ResourceSlice", field_selector=f"spec.nodeName={node}"
                )
        if self._node_created:
            self._delete("v1", "Node", self.node, "")
        super().close()

    def _release_pods(self, namespace: str) -> None:
        """Drop drasim's own finalizers from the run's pods and delete them with grace period 0.

        Nothing else would: a pod bound to a node is deleted gracefully (deletionTimestamp
        set, the object kept) until that node's kubelet confirms it is gone, and the fake node
        has only drasim's emulated kubelet. A namespace with such pods never finishes
        terminating (the namespace controller waits for them)."""
        try:
            pods = self.runner_api.list("v1", "Pod", namespace)
        except ApiError:
            return
        for pod in pods:
            name = str(pod["metadata"]["name"])
            finalizers = (pod.get("metadata") or {}).get("finalizers") or []
            kept = [f for f in finalizers if not str(f).startswith("drasim.dev/")]
            if len(kept) != len(finalizers):
                with contextlib.suppress(ApiError):
                    self.runner_api.patch(
                        "v1", "Pod", name, {"metadata": {"finalizers": kept or None}}, namespace
                    )
            with contextlib.suppress(ApiError):
                self.runner_api.delete("v1", "Pod", name, namespace, grace_period_seconds=0)

    def _delete(self, api_version: str, kind: str, name: str, namespace: str) -> None:
        try:
            self.runner_api.delete(api_version, kind, name, namespace)
            self.journal.record("backend", action="deleted", object=f"{kind}/{name}")
        except ApiError as err:
            if err.code != 404:
                self.journal.record(
                    "backend", action="delete-failed", object=f"{kind}/{name}", error=str(err)
                )


def open_backend(
    name: str,
    scenario: Scenario,
    journal: Journal,
    root: Path,
    *,
    served: list[str] | None = None,
    claim_version: str = "v1",
    kubeconfig: Path | None = None,
    context: str | None = None,
    expand: Callable[[Any], Any] = lambda value: value,
    sleep: Callable[[float], None] | None = None,
) -> Backend:
    """The backend ``name`` for one scenario run (not yet set up).

    ``served``: resource.k8s.io versions drasim's server serves; ``claim_version``: the one
    the kubelet reads claims through; ``expand`` fills in ``$(DRIVER)``; ``sleep`` waits out
    API-server fault latencies (drasim's own server only).
    """
    options: dict[str, Any] = {"served": served, "claim_version": claim_version, "sleep": sleep}
    if name == "memory":
        return Backend(scenario, journal, root, **options)
    if name == "http":
        return HttpBackend(scenario, journal, root, **options)
    if name == "kubeconfig":
        path = kubeconfig or default_kubeconfig()
        if path is None:
            raise ConfigError("--backend kubeconfig needs --kubeconfig FILE (or $KUBECONFIG, ~/.kube/config)")
        return KubeconfigBackend(
            scenario, journal, root, path, context=context, expand=expand, claim_version=claim_version
        )
    raise ConfigError(f"unknown backend {name!r}; valid backends: {', '.join(BACKENDS)}")
