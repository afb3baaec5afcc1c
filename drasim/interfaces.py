"""The ports: the only contracts between the emulated kubelet and the world.

The kubelet core (:mod:`drasim.kubelet`) depends on nothing but these Protocols,
so the same manager code runs against an in-memory or HTTP API server, against
fake or real plugins, and against a real or a virtual clock.

Kubernetes objects cross these ports as JSON-shaped dicts (``metadata``,
``spec``, ``status`` with camelCase keys), exactly as the REST API serves them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, cast, runtime_checkable

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


@runtime_checkable
class Recorder(Protocol):
    """Receives journal events. ``kind`` is one of rpc, api, checkpoint, registration, kubelet, step.

    Hot producers reach a recorder through :func:`ready_recording`.
    """

    def record(self, kind: str, **fields: Any) -> None:
        """Append one event; must be safe to call from any thread."""
        ...


class NullRecorder:
    """A :class:`Recorder` that drops everything."""

    def record(self, kind: str, **fields: Any) -> None:
        """Ignore the event."""


ReadyRecord = Callable[[str, dict[str, Any]], None]
"""Records one event whose fields the producer vouches for (see :func:`ready_recording`)."""


def _drop(kind: str, fields: dict[str, Any]) -> None:  # noqa: ARG001 - a ReadyRecord
    return None


def ready_recording(recorder: Recorder) -> ReadyRecord:
    """How a producer hands ``recorder`` events it builds itself, on a hot path.

    The producer vouches for the ``fields`` dict it passes: it hands the dict over (keeps
    no reference to change it), its keys are not ``seq``, ``t`` or ``kind``, and its
    values are JSON values (``str``, ``int``, finite ``float``, ``bool``, ``None``, plain
    ``dict``/``list`` of them) that nobody changes afterwards. A
    :class:`drasim.journal.Journal` then takes the dict as the event's body without
    checking or copying it (``Journal.record_ready``); a :class:`NullRecorder` is not
    called at all; any other recorder gets ``record(kind, **fields)``.
    """
    if type(recorder) is NullRecorder:
        return _drop
    # Looked up on the class: a stand-in that makes up attributes (a mock, a proxy with
    # __getattr__) keeps getting record() calls.
    if callable(getattr(type(recorder), "record_ready", None)):
        return cast(ReadyRecord, recorder.record_ready)  # type: ignore[attr-defined]

    def record(kind: str, fields: dict[str, Any]) -> None:
        recorder.record(kind, **fields)

    return record


Hold = tuple[Callable[[], int], Callable[[int], None]]
"""A recorder's ``hold`` (returns a ticket) and ``release`` (takes it); see :func:`holding`."""


def holding(recorder: Recorder) -> Hold | None:
    """``recorder``'s ``hold`` and ``release`` when it has them (a
    :class:`drasim.journal.Journal` does: readers and other writers wait while events are on
    their way); ``None`` otherwise, and then a producer must record before it lets anything
    be seen."""
    kind = type(recorder)
    hold, release = getattr(kind, "hold", None), getattr(kind, "release", None)
    if callable(hold) and callable(release):
        return recorder.hold, recorder.release  # type: ignore[attr-defined]
    return None
