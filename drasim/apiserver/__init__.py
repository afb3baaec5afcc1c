"""The fake API server: one object store, three faces.

- :class:`ObjectStore`: the thread-safe store (resourceVersions, selectors, watches, faults).
- :class:`MemoryCluster`: in-process access (the kubelet's ClaimReader port and the runner's
  :class:`Cluster` operations).
- :class:`HttpApiServer`: the Kubernetes REST API over HTTP on loopback, for client-go drivers
  and the kubernetes Python client (imported from :mod:`drasim.apiserver.http`).
- :class:`KubeClientCluster`: the same operations through the kubernetes Python client, against
  :class:`HttpApiServer` or a real cluster (imported from :mod:`drasim.apiserver.kubeclient`).

``http`` and ``kubeclient`` are not imported here, so importing the store stays cheap.
"""

from __future__ import annotations

from drasim.apiserver.faults import ApiFault, FaultInjector, decode_fault
from drasim.apiserver.memory import MemoryCluster
from drasim.apiserver.port import Cluster, WatchStream
from drasim.apiserver.store import ObjectStore
from drasim.apiserver.watch import Watch, WatchEvent

__all__ = [
    "ApiFault",
    "Cluster",
    "FaultInjector",
    "MemoryCluster",
    "ObjectStore",
    "Watch",
    "WatchEvent",
    "WatchStream",
    "decode_fault",
]
