"""Expectation steps: checks that only read the world (journal, checkpoint, CDI dir, API server).

An expectation never changes anything. ``since`` (where present) limits it to what was
journaled after a point: ``start`` (the whole run), ``previous`` (since the previous step
of the same name, or the start) or the name of an earlier ``mark`` step. Pods are named
by pod name; the runner maps names to the UIDs it gave them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drasim.limits import MAX_COUNT
from drasim.scenario.common import ErrorMatch, GrpcCode, Health, KubeletOperation, PodPhase, Rpc, doc
from drasim.scenario.registry import step

_SINCE = "Window: 'start', 'previous' (the previous step of this name) or an earlier mark's name."
_DRIVER_ANY = "Driver name; empty means every driver."


@dataclass(frozen=True, kw_only=True)
class CallMatch:
    """One expected gRPC call, as the kubelet saw it."""

    method: Rpc = field(metadata=doc("The gRPC method."))
    driver: str = field(default="", metadata=doc(_DRIVER_ANY))
    claims: list[str] | None = field(
        default=None, metadata=doc("The exact set of claims in the request (namespace/name or name).")
    )
    code: GrpcCode | None = field(
        default=None,
        metadata=doc("The status the call ended with as the kubelet saw it (a per-claim error is still OK)."),
    )


@dataclass(frozen=True, kw_only=True)
class CallCount:
    """A range of call counts; in YAML a plain number means exactly that many."""

    at_least: int | None = field(
        default=None, metadata=doc("At least this many calls.", minimum=0, maximum=MAX_COUNT)
    )
    at_most: int | None = field(
        default=None, metadata=doc("At most this many calls.", minimum=0, maximum=MAX_COUNT)
    )

    def describe(self) -> str:
        """``at least 2``, ``at most 3`` or ``2 to 3``."""
        if self.at_least is not None and self.at_most is not None:
            return f"{self.at_least} to {self.at_most}"
        return f"at least {self.at_least}" if self.at_least is not None else f"at most {self.at_most}"

    def holds(self, count: int) -> bool:
        """Whether ``count`` is in the range."""
        low = self.at_least if self.at_least is not None else 0
        return count >= low and (self.at_most is None or count <= self.at_most)


_COUNT = "Number of {} (exact), or {{atLeast: N, atMost: M}}."


@step("expectCalls")
@dataclass(frozen=True, kw_only=True)
class ExpectCalls:
    """Check the gRPC calls the kubelet made to plugins within the window.

    A number is an exact count; ``{atLeast: N}`` / ``{atMost: M}`` give a range (for
    calls whose number depends on timing, such as retries). ``calls`` must equal the
    window's calls exactly — restricted to the driver, to ``claim`` and to the methods
    that appear in ``calls`` — in order unless ``ordered: false``.
    """

    driver: str = field(default="", metadata=doc(_DRIVER_ANY))
    since: str = field(default="start", metadata=doc(_SINCE))
    claim: str = field(default="", metadata=doc("Only count calls whose request carries this claim."))
    node_prepare_resources: int | CallCount | None = field(
        default=None,
        metadata=doc(
            _COUNT.format("NodePrepareResources calls"),
            yaml="NodePrepareResources",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    node_unprepare_resources: int | CallCount | None = field(
        default=None,
        metadata=doc(
            _COUNT.format("NodeUnprepareResources calls"),
            yaml="NodeUnprepareResources",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    get_info: int | CallCount | None = field(
        default=None,
        metadata=doc(_COUNT.format("GetInfo calls"), yaml="GetInfo", minimum=0, maximum=MAX_COUNT),
    )
    notify_registration_status: int | CallCount | None = field(
        default=None,
        metadata=doc(
            _COUNT.format("NotifyRegistrationStatus calls"),
            yaml="NotifyRegistrationStatus",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    node_watch_resources: int | CallCount | None = field(
        default=None,
        metadata=doc(
            _COUNT.format("NodeWatchResources streams opened"),
            yaml="NodeWatchResources",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    calls: list[CallMatch] | None = field(default=None, metadata=doc("The exact sequence of calls."))
    ordered: bool = field(default=True, metadata=doc("Whether ``calls`` must come in the given order."))

    def counts(self) -> dict[str, int | CallCount]:
        """The per-method counts that were given, keyed by gRPC method name."""
        given = {
            "NodePrepareResources": self.node_prepare_resources,
            "NodeUnprepareResources": self.node_unprepare_resources,
            "GetInfo": self.get_info,
            "NotifyRegistrationStatus": self.notify_registration_status,
            "NodeWatchResources": self.node_watch_resources,
        }
        return {method: count for method, count in given.items() if count is not None}


@step("expectError", shorthand="contains")
@dataclass(frozen=True, kw_only=True)
class ExpectError:
    """At least one kubelet error in the window matches.

    Errors of automatic retries and of reconcile passes count too.
    """

    contains: str = field(default="", metadata=doc("The message must contain this text."))
    matches: str = field(default="", metadata=doc("A regular expression found in the message (re.search)."))
    operation: KubeletOperation = field(default="any", metadata=doc("Only errors of this kubelet operation."))
    pod: str = field(default="", metadata=doc("Only errors for this pod."))
    since: str = field(default="previous", metadata=doc(_SINCE))

    def matcher(self) -> ErrorMatch:
        """The message matcher."""
        return ErrorMatch(contains=self.contains, matches=self.matches)


@step("expectNoError")
@dataclass(frozen=True, kw_only=True)
class ExpectNoError:
    """No kubelet error at all was journaled in the window (for the operation, if given)."""

    operation: KubeletOperation = field(default="any", metadata=doc("Only errors of this kubelet operation."))
    since: str = field(default="start", metadata=doc(_SINCE))


@dataclass(frozen=True, kw_only=True)
class DeviceMatch:
    """One device of a checkpoint entry; unset fields are not compared."""

    device: str = field(metadata=doc("Device name."))
    pool: str = field(default="", metadata=doc("Pool name; empty matches any."))
    requests: list[str] | None = field(default=None, metadata=doc("Exact RequestNames."))
    cdi_ids: list[str] | None = field(default=None, metadata=doc("Exact CDIDeviceIDs.", yaml="cdiIDs"))
    share_id: str | None = field(default=None, metadata=doc("Exact ShareID.", yaml="shareID"))


@dataclass(frozen=True, kw_only=True)
class DriverCheckpoint:
    """What a checkpoint entry holds for one driver."""

    devices: list[DeviceMatch] | None = field(
        default=None, metadata=doc("The exact device list, in stored order.")
    )
    device_count: int | None = field(
        default=None,
        metadata=doc("Exact number of devices (catches duplicated devices).", minimum=0, maximum=MAX_COUNT),
    )


@dataclass(frozen=True, kw_only=True)
class ClaimCheckpoint:
    """What the checkpoint holds for one claim; unset fields are not compared."""

    uid: str | None = field(default=None, metadata=doc("Exact ClaimUID."))
    pods: list[str] | None = field(default=None, metadata=doc("The exact set of pods (by name) in PodUIDs."))
    device_count: int | None = field(
        default=None,
        metadata=doc(
            "Exact number of devices over all drivers (catches duplicates).", minimum=0, maximum=MAX_COUNT
        ),
    )
    drivers: dict[str, DriverCheckpoint] | None = field(
        default=None, metadata=doc("Per driver; the key set must match exactly.")
    )


@step("expectCheckpoint")
@dataclass(frozen=True, kw_only=True)
class ExpectCheckpoint:
    """Read the kubelet's dra_manager_state file from disk and check it."""

    valid: bool = field(
        default=True,
        metadata=doc(
            "The file exists and decodes (envelope, CRC-32, kind, apiVersion); "
            "false: it is missing or does not decode."
        ),
    )
    entries: int | None = field(
        default=None, metadata=doc("Exact number of claim entries.", minimum=0, maximum=MAX_COUNT)
    )
    claims: dict[str, ClaimCheckpoint] = field(
        default_factory=dict,
        metadata=doc("Entries that must be present, keyed by claim (namespace/name or name)."),
    )
    absent: list[str] = field(default_factory=list, metadata=doc("Claims that must not have an entry."))
    share_id_key: bool | None = field(
        default=None,
        metadata=doc(
            "true: devices are written with the ShareID key (kubelet 1.35+); false: without it "
            "(1.31-1.34). The file must hold at least one device.",
            yaml="shareIDKey",
        ),
    )


@step("expectCdiDevices", pod_field=True)
@dataclass(frozen=True, kw_only=True)
class ExpectCdiDevices:
    """Check the CDI device IDs the kubelet hands a container (GetResources), computed now."""

    pod: str = field(metadata=doc("Pod name."))
    container: str = field(
        default="", metadata=doc("Container name; empty means the pod's only (first) container.")
    )
    ids: list[str] | None = field(
        default=None, metadata=doc("The exact list, in order, duplicates included.")
    )
    count: int | None = field(
        default=None, metadata=doc("Exact number of IDs.", minimum=0, maximum=MAX_COUNT)
    )
    devices: int | None = field(
        default=None,
        metadata=doc(
            "Exact number of prepared devices handed to the container, each with at least one CDI ID "
            "(however many IDs the driver gives a device).",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    unique: bool | None = field(
        default=None,
        metadata=doc(
            "true: no device lists an ID twice and every device has an ID of its own (an ID common to "
            "all devices is allowed); false: some device does not."
        ),
    )
    well_formed: bool | None = field(
        default=None, metadata=doc("true: every ID is a valid qualified CDI name 'vendor/class=name'.")
    )
    expect_error: ErrorMatch | str | None = field(
        default=None, metadata=doc("GetResources must fail with a matching error.")
    )


@step("expectCdiSpecs")
@dataclass(frozen=True, kw_only=True)
class ExpectCdiSpecs:
    """Check the CDI spec files in the node's CDI directory."""

    present: list[str] = field(
        default_factory=list,
        metadata=doc("Glob patterns (relative to the CDI dir) that must each match a file."),
    )
    absent: list[str] = field(default_factory=list, metadata=doc("Glob patterns that must match no file."))
    count: int | None = field(
        default=None,
        metadata=doc("Exact number of spec files (*.json, *.yaml).", minimum=0, maximum=MAX_COUNT),
    )
    claim_specs: int | None = field(
        default=None,
        metadata=doc(
            "Exact number of spec files written for claims: those whose name or content holds the UID "
            "of a ResourceClaim in the API server (a driver's static specs are not counted).",
            minimum=0,
            maximum=MAX_COUNT,
            yaml="claimSpecs",
        ),
    )
    valid: bool = field(
        default=True,
        metadata=doc(
            "Every spec parses: cdiVersion, kind 'vendor/class', "
            "devices with names and non-empty containerEdits."
        ),
    )
    resolvable: bool = field(
        default=False,
        metadata=doc("Every CDI ID handed to a container of a Running pod names a device in some spec file."),
    )


@step("expectMightNeedUnprepare", mapping_field="pods")
@dataclass(frozen=True, kw_only=True)
class ExpectMightNeedUnprepare:
    """PodMightNeedToUnprepareResources for each pod, e.g. ``{a: true, b: false}``."""

    pods: dict[str, bool] = field(default_factory=dict, metadata=doc("Pod name -> expected answer."))


@step("expectMetric")
@dataclass(frozen=True, kw_only=True)
class ExpectMetric:
    """Check one series of the emulated kubelet's metrics (exact label set)."""

    name: str = field(metadata=doc("Metric family, e.g. dra_resource_claims_in_use."))
    labels: dict[str, str] = field(default_factory=dict, metadata=doc("The series' exact labels."))
    value: float | None = field(default=None, metadata=doc("Gauge value."))
    count: int | None = field(
        default=None, metadata=doc("Histogram: number of observations.", minimum=0, maximum=MAX_COUNT)
    )
    present: bool | None = field(default=None, metadata=doc("Whether the series exists at all."))


@step("expectResourceSlices")
@dataclass(frozen=True, kw_only=True)
class ExpectResourceSlices:
    """Count the ResourceSlices in the API server for a driver and node."""

    driver: str = field(
        default="", metadata=doc("Driver name (any, not only the scenario's); empty means every driver.")
    )
    node: str = field(default="", metadata=doc("Node name; empty means the kubelet's node."))
    count: int | None = field(
        default=None, metadata=doc("Exact number of slices.", minimum=0, maximum=MAX_COUNT)
    )
    devices: int | None = field(
        default=None,
        metadata=doc("Exact number of devices across those slices.", minimum=0, maximum=MAX_COUNT),
    )
    unchanged_since: str = field(
        default="",
        metadata=doc(
            "The name of an earlier ``mark``: the slices must be the very objects that existed then "
            "(same UIDs and resourceVersions; none deleted, re-created, added or updated)."
        ),
    )


@step("expectRegistered", shorthand="driver")
@dataclass(frozen=True, kw_only=True)
class ExpectRegistered:
    """Check the kubelet's plugin registrations for a driver."""

    driver: str = field(
        default="", metadata=doc("Driver name; may be omitted when the scenario has one driver.")
    )
    registered: bool = field(default=True, metadata=doc("Whether at least one instance is registered."))
    service: str | None = field(
        default=None, metadata=doc("The DRA service chosen for the newest instance, e.g. v1.DRAPlugin.")
    )
    instances: int | None = field(
        default=None, metadata=doc("Exact number of registered instances.", minimum=0, maximum=MAX_COUNT)
    )
    connected: bool | None = field(default=None, metadata=doc("Whether some instance is connected."))
    health_service: str | None = field(
        default=None,
        metadata=doc(
            "The health service the kubelet streams from for the newest instance "
            "(v1.DRAResourceHealth, v1alpha1.DRAResourceHealth), or empty for none; depends on the "
            "kubelet version (docs/kubelet-versions.md)."
        ),
    )


@step("expectConnections")
@dataclass(frozen=True, kw_only=True)
class ExpectConnections:
    """Count the kubelet's gRPC connections to a driver's DRA service within the window.

    ``channels`` counts the client channels the kubelet created (upstream one
    ``grpc.ClientConn`` per plugin registration, reused for every call); ``connects``
    counts the times a channel became ready (the first connection and every reconnect, e.g.
    after a plugin restart); ``disconnects`` the times a ready connection ended. A number is
    exact; ``{atLeast: N}`` / ``{atMost: M}`` give a range. Connection changes arrive from
    gRPC's threads: lower bounds are waited for briefly.
    """

    driver: str = field(default="", metadata=doc(_DRIVER_ANY))
    since: str = field(default="start", metadata=doc(_SINCE))
    channels: int | CallCount | None = field(
        default=None, metadata=doc("Client channels created.", minimum=0, maximum=MAX_COUNT)
    )
    connects: int | CallCount | None = field(
        default=None, metadata=doc("Times a channel became connected (READY).", minimum=0, maximum=MAX_COUNT)
    )
    disconnects: int | CallCount | None = field(
        default=None,
        metadata=doc("Times a connected channel lost its connection.", minimum=0, maximum=MAX_COUNT),
    )

    def counts(self) -> dict[str, int | CallCount]:
        """The counts that were given, keyed by journal operation."""
        given = {
            "grpc-channel": self.channels,
            "grpc-connected": self.connects,
            "grpc-disconnected": self.disconnects,
        }
        return {op: n for op, n in given.items() if n is not None}


@step("expectPod", pod_field=True)
@dataclass(frozen=True, kw_only=True)
class ExpectPod:
    """Check a pod's phase as the runner tracks it, and whether its deletion is pending in the API server."""

    pod: str = field(metadata=doc("Pod name."))
    phase: PodPhase | None = field(default=None, metadata=doc("Expected phase."))
    deleting: bool | None = field(
        default=None,
        metadata=doc(
            "Whether the Pod object waits in the API server with a deletionTimestamp "
            "(a graceful delete the kubelet has not finished); false when it is gone or not deleted."
        ),
    )


@step("expectHealth", pod_field=True, needs={"health": "uses {where}"})
@dataclass(frozen=True, kw_only=True)
class ExpectHealth:
    """Check a container's ``allocatedResourcesStatus`` entry ``claim:<claim>[/<request>]``.

    Every resource listed in that entry (or the one named by ``resourceID``) must have the
    given health and, when ``message`` or ``messageContains`` is given, a matching message.
    The message is the one the kubelet shows: cut to 1024 bytes, and empty when the device
    reads Unknown because its report went stale or never came.
    """

    pod: str = field(metadata=doc("Pod name."))
    container: str = field(default="", metadata=doc("Container name; empty means the first."))
    claim: str = field(metadata=doc("Pod claim name."))
    request: str = field(default="", metadata=doc("Request name, when the container names one."))
    health: Health = field(metadata=doc("Expected health."))
    resource_id: str = field(
        default="",
        metadata=doc("Only this resource ID (first CDI ID, else driver/pool/device).", yaml="resourceID"),
    )
    message: str | None = field(
        default=None,
        metadata=doc("The exact health message; an empty string expects no message."),
    )
    message_contains: str = field(default="", metadata=doc("The health message must contain this text."))


@step("expectConsistentReplies", shorthand="claim")
@dataclass(frozen=True, kw_only=True)
class ExpectConsistentReplies:
    """Every successful NodePrepareResources reply for the claim in the window carried the same devices.

    Compares pool, device, request names, CDI IDs and share ID of the claim's entry across
    replies (at least ``atLeast`` of them): the driver's prepare must be idempotent.
    """

    claim: str = field(metadata=doc("The claim (namespace/name or name)."))
    driver: str = field(default="", metadata=doc(_DRIVER_ANY))
    since: str = field(default="start", metadata=doc(_SINCE))
    at_least: int = field(
        default=2,
        metadata=doc("Minimum number of successful replies to compare.", minimum=1, maximum=MAX_COUNT),
    )
