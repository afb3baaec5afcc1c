"""The ports: the only contracts between the emulated kubelet and the world.

The kubelet core (:mod:`drasim.kubelet`) depends on nothing but these Protocols,
so the same manager code runs against an in-memory or HTTP API server, against
fake or real plugins, and against a real or a virtual clock.

Kubernetes objects cross these ports as JSON-shaped dicts (``metadata``,
``spec``, ``status`` with camelCase keys), exactly as the REST API serves them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from drasim.state import ClaimInfoState
from drasim.values import ClaimRef, PrepareResult, UnprepareResult

KubeObject = dict[str, Any]


@runtime_checkable
class ClaimReader(Protocol):
    """What the kubelet manager needs from the API server."""

    def get_resource_claim(self, namespace: str, name: str) -> KubeObject:
        """GET resource.k8s.io/v1 ResourceClaim; raises :class:`drasim.errors.ApiError`.

        The caller only reads the result: an implementation may hand the same object to
        several calls (:class:`drasim.apiserver.MemoryCluster` with ``shared_reads``).
        """
        ...


@runtime_checkable
class DriverClient(Protocol):
    """One registered plugin instance, whichever service version was negotiated.

    Both calls apply the instance's own call timeout (45 s upstream, scaled by the
    clock) and raise :class:`drasim.errors.RpcError` on a gRPC-level failure. A
    ``None`` value in the returned mapping is a nil entry on the wire (success).
    """

    @property
    def driver_name(self) -> str:
        """The DRA driver name the instance registered under."""
        ...

    @property
    def endpoint(self) -> str:
        """The DRA service socket path of this instance."""
        ...

    def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult | None]:
        """NodePrepareResources; the reply is keyed by claim UID."""
        ...

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> Mapping[str, UnprepareResult | None]:
        """NodeUnprepareResources; the reply is keyed by claim UID."""
        ...


@runtime_checkable
class DriverDirectory(Protocol):
    """The registered plugins (upstream ``DRAPluginManager.GetPlugin``)."""

    def get_plugin(self, driver_name: str) -> DriverClient:
        """The instance to call; raises :class:`drasim.errors.DriverNotRegisteredError`."""
        ...


@runtime_checkable
class CheckpointStore(Protocol):
    """Reads and writes the ``dra_manager_state`` checkpoint."""

    def get_or_create(self) -> list[ClaimInfoState]:
        """Load the checkpoint; when it is missing, write an empty one and return ``[]``.

        Raises :class:`drasim.errors.CorruptCheckpointError` on a bad file.
        """
        ...

    def store(self, entries: Sequence[ClaimInfoState]) -> None:
        """Atomically replace the checkpoint with ``entries``."""
        ...


@runtime_checkable
class Clock(Protocol):
    """Time as the harness sees it. Kubelet timers are nominal seconds; ``scaled`` maps them to waits."""

    def now(self) -> float:
        """Seconds on a monotonic scale (real or virtual)."""
        ...

    def scaled(self, nominal_seconds: float) -> float:
        """How long to really wait for a kubelet timer of ``nominal_seconds``."""
        ...


class ReadyList(list[Any]):
    """A list field of a journal event whose producer vouches it is already JSON-ready.

    Its items are plain JSON values (``str``, ``int``, ``float``, ``bool``, ``None`` and
    plain ``dict``/``list`` of them) that nobody changes afterwards, so a :class:`Recorder`
    may keep them without a deep copy (:class:`drasim.journal.Journal` keeps a plain shallow
    copy). Everywhere else it is an ordinary list.
    """

    __slots__ = ()


class ReadyDict(dict[str, Any]):
    """A dict field of a journal event that is already JSON-ready, as :class:`ReadyList` says."""

    __slots__ = ()


@runtime_checkable
class Recorder(Protocol):
    """Receives journal events. ``kind`` is one of rpc, api, checkpoint, registration, kubelet, step.

    A field may be a :class:`ReadyList` or :class:`ReadyDict`: JSON-ready already, never
    changed afterwards, to be kept as the equal plain ``list``/``dict``.
    """

    def record(self, kind: str, **fields: Any) -> None:
        """Append one event; must be safe to call from any thread."""
        ...


class NullRecorder:
    """A :class:`Recorder` that drops everything."""

    def record(self, kind: str, **fields: Any) -> None:
        """Ignore the event."""
