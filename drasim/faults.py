"""The one fault vocabulary: rules for a DRA plugin's gRPC methods and for the API server.

A scenario writes them (``fault`` steps, ``faults`` of a fake driver or of the API server),
scenario validation checks them, the runner hands them on, and the fake plugin
(:mod:`fake_plugins`) and the fake API server (:mod:`drasim.apiserver`) apply them: always as
these typed values, checked by the functions here, so that validation and the injectors can
never disagree. The fake plugin's behaviour files and the API server's admin endpoint keep
their own JSON keys (``omit``, ``skip``, ``latency``, ...); their decoders build these values
directly.

A rule's ``delay`` is in nominal kubelet seconds while a scenario holds it; the runner scales
it (:func:`scaled`) before the fake plugin or the API server gets it, and they wait that long.

PURE: no I/O.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from drasim.limits import MAX_COUNT, MAX_DURATION, MAX_HTTP_STATUS, doc

# ----------------------------------------------------------------------------- plugin faults
Rpc = Literal[
    "GetInfo",
    "NotifyRegistrationStatus",
    "NodePrepareResources",
    "NodeUnprepareResources",
    "NodeWatchResources",
]
"""The plugin-side gRPC methods the kubelet calls (registration, DRA and health services)."""

ANY_RPC = "*"
"""A plugin fault's ``rpc`` that matches every method."""

RpcSelector = Literal[Rpc, "*"]
"""What a plugin fault's ``rpc`` may name: one method, or ``*`` for every method."""

RPC_NAMES: tuple[str, ...] = typing.get_args(RpcSelector)
"""Every value a plugin fault's ``rpc`` may take."""

CLAIM_RPCS: tuple[str, ...] = ("NodePrepareResources", "NodeUnprepareResources")
"""The methods whose replies carry one entry per claim (per-claim faults shape those entries)."""

GrpcCode = Literal[
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
]
"""gRPC status code names as in grpc.StatusCode (the Go names are their CamelCase forms)."""

GRPC_CODES: tuple[str, ...] = typing.get_args(GrpcCode)

PluginCrash = Literal["before", "after"]
"""When a ``crash`` fault makes the plugin die: before doing anything, or after writing its state."""

PLUGIN_CRASHES: tuple[str, ...] = typing.get_args(PluginCrash)

PROXY_CAPABILITY = "proxy"
"""The capability (``drasim.conformance``) of a driver whose plugin faults something applies for
it: the fake plugin itself, or drasim's proxy on a real driver's sockets (:mod:`drasim.proxy`)."""

UNKNOWN_UID = "00000000-0000-0000-0000-00000000dead"
"""The claim UID an ``unknownUID`` fault adds to a reply, unless the rule names its own."""


@dataclass(frozen=True, kw_only=True)
class PluginFault:
    """One fault rule for a DRA plugin's gRPC methods.

    Rules are checked in the order they were added; the first rule that matches a call
    and still has uses left applies. The fake plugin applies the rules, and for a real driver
    process drasim's proxy applies them on the wire (:mod:`drasim.proxy`); with neither, a
    scenario with plugin faults is skipped.
    """

    driver: str = field(
        default="",
        metadata=doc("Driver whose calls are affected; may be omitted when the scenario has one driver."),
    )
    rpc: RpcSelector = field(metadata=doc("The gRPC method this rule applies to ('*': every method)."))
    claim: str = field(
        default="",
        metadata=doc(
            "Only calls whose request carries this claim (``namespace/name``, or ``name`` in namespace "
            "default); empty matches every call."
        ),
    )
    code: GrpcCode | None = field(
        default=None, metadata=doc("Fail the whole call with this gRPC status code.")
    )
    message: str = field(default="", metadata=doc("Status message sent with ``code``."))
    error: str = field(
        default="",
        metadata=doc(
            "Answer, but set this per-claim error string for ``claim`` (or for every claim in the request)."
        ),
    )
    missing_claim: bool = field(
        default=False,
        metadata=doc(
            "Answer, but leave ``claim`` (or every claim) out of the reply, "
            "so the kubelet reports 'skipped N ResourceClaims'."
        ),
    )
    unknown_uid: bool = field(
        default=False,
        metadata=doc("Answer, and add an entry for a claim UID that was not requested.", yaml="unknownUID"),
    )
    extra_uid: str = field(
        default="",
        metadata=doc(f"The UID ``unknownUID`` adds; empty: {UNKNOWN_UID}.", internal=True),
    )
    nil_entry: bool = field(
        default=False,
        metadata=doc(
            "Answer, but with an empty entry for ``claim`` (or every claim): what a Go driver's nil "
            "value in the reply map looks like on the wire. The kubelet takes it as success without "
            "devices, so containers get no CDI devices from it."
        ),
    )
    delay: float = field(
        default=0.0,
        metadata=doc(
            "Nominal seconds to wait before answering "
            "(longer than callTimeout means the kubelet sees DEADLINE_EXCEEDED).",
            minimum=0,
            maximum=MAX_DURATION,
        ),
    )
    hang: bool = field(
        default=False,
        metadata=doc(
            "Never answer: the kubelet sees DEADLINE_EXCEEDED after callTimeout; the plugin's handler "
            "is released then (the call is cancelled) or when the plugin stops, without side effects."
        ),
    )
    block: bool = field(
        default=False,
        metadata=doc(
            "Hold the call in the plugin until an ``unblock`` step (or ``clearFaults``, or the plugin "
            "stops), even after the kubelet gave up on it (deadline, restart); once released the plugin "
            "does the work (state, CDI spec) and replies to whoever still listens."
        ),
    )
    crash: PluginCrash | None = field(
        default=None,
        metadata=doc(
            "The plugin process dies mid-call: 'before' doing anything, or 'after' writing its own "
            "state but before replying."
        ),
    )
    times: int = field(
        default=0,
        metadata=doc(
            "How many matching calls the rule affects; 0 means every matching call from now on.",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    after: int = field(
        default=0,
        metadata=doc(
            "Let this many matching calls through unharmed before the rule starts to apply.",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )

    @property
    def added_uid(self) -> str:
        """The UID an ``unknownUID`` rule adds to the reply ("" when it adds none)."""
        return (self.extra_uid or UNKNOWN_UID) if self.unknown_uid else ""


def plugin_fault_problem(fault: PluginFault) -> tuple[str, str] | None:
    """The first value of ``fault`` outside the vocabulary, as (field name, message), or ``None``."""
    if fault.rpc not in RPC_NAMES:
        return (
            "rpc",
            f"unknown RPC '{fault.rpc}'.{_hint(fault.rpc, RPC_NAMES)} Valid: {', '.join(RPC_NAMES)}.",
        )
    if fault.code is not None and fault.code not in GRPC_CODES:
        return "code", f"'{fault.code}' is not a gRPC status code.{_hint(fault.code.upper(), GRPC_CODES)}"
    if fault.crash is not None and fault.crash not in PLUGIN_CRASHES:
        return "crash", f"expected 'before' or 'after', got '{fault.crash}'"
    for name in ("delay", "times", "after"):
        value = getattr(fault, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            return name, f"must be >= 0, got {value!r}"
    if not fault.delay <= MAX_DURATION:
        return "delay", f"must be at most {MAX_DURATION:g} seconds, got {fault.delay!r}"
    return None


# ----------------------------------------------------------------------------- API-server faults
ApiVerb = Literal["any", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
"""Kubernetes API verbs an API-server fault can match."""

API_VERBS: tuple[str, ...] = tuple(sorted(v for v in typing.get_args(ApiVerb) if v != "any"))
"""Every verb the fake API server serves (``drasim.apiserver.kinds.ALL_VERBS``)."""

ApiClient = Literal["any", "kubelet", "driver", "runner"]
"""Who made an API request: the emulated kubelet, the driver under test, or the runner itself."""

CLIENT_KINDS: tuple[str, ...] = ("kubelet", "runner", "driver")
"""Who a fault may be aimed at. In-process faces name their client ("kubelet", "runner",
"driver"); every other client (an HTTP user agent) is a driver under test."""


def client_kind(client: str) -> str:
    """The kind of client behind a journal ``client`` name."""
    return client if client in CLIENT_KINDS else "driver"


API_RESOURCE_KINDS: dict[str, str] = {
    "pods": "Pod",
    "nodes": "Node",
    "events": "Event",
    "namespaces": "Namespace",
    "resourceclaims": "ResourceClaim",
    "resourceclaimtemplates": "ResourceClaimTemplate",
    "resourceslices": "ResourceSlice",
    "deviceclasses": "DeviceClass",
}
"""The resources the fake API server serves (plural -> kind), in its order
(``drasim.apiserver.kinds.RESOURCE_TYPES``; a test keeps the two equal)."""

_RESOURCE_ALIASES: dict[str, str] = {
    alias: plural for plural, kind in API_RESOURCE_KINDS.items() for alias in (plural, kind, kind.lower())
}


def api_resource(name: str) -> str | None:
    """The plural of a resource named by plural, kind or singular (``ResourceClaim`` ->
    ``resourceclaims``), or ``None`` when the API server does not serve it."""
    return _RESOURCE_ALIASES.get(name)


API_FAULT_CODES: tuple[int, ...] = (400, 401, 403, 404, 405, 406, 409, 410, 413, 415, 422, 429, 500, 503, 504)
"""HTTP statuses an API-server fault may answer with: the error statuses whose Kubernetes
``reason`` the API server knows (``drasim.apiserver.status.REASONS``; a test keeps them equal)."""


@dataclass(frozen=True, kw_only=True)
class ApiFault:
    """One fault rule for the fake API server (it answers with a Kubernetes Status error)."""

    verb: ApiVerb = field(default="any", metadata=doc("Request verb to match."))
    resource: str = field(
        default="",
        metadata=doc(
            "Plural resource to match, e.g. resourceclaims, resourceslices, nodes, pods; empty matches all."
        ),
    )
    name: str = field(default="", metadata=doc("Object name to match; empty matches all."))
    namespace: str = field(default="", metadata=doc("Namespace to match; empty matches all.", internal=True))
    subresource: str = field(
        default="", metadata=doc("Subresource (e.g. status) to match; empty matches all.", internal=True)
    )
    client: ApiClient = field(default="any", metadata=doc("Whose requests are affected."))
    code: int = field(
        default=0,
        metadata=doc(
            "HTTP status to answer with (404, 409, 429, 500, 503, ...); "
            "0 means answer normally (use with delay).",
            minimum=0,
            maximum=MAX_HTTP_STATUS,
        ),
    )
    message: str = field(default="", metadata=doc("Message of the Status error."))
    delay: float = field(
        default=0.0,
        metadata=doc("Nominal seconds of latency added before answering.", minimum=0, maximum=MAX_DURATION),
    )
    drop_watches: bool = field(
        default=False, metadata=doc("Close every open watch that matches once, when the rule is added.")
    )
    after_events: int = field(
        default=0,
        metadata=doc("With dropWatches: close a new matching watch after this many events.", internal=True),
    )
    times: int = field(
        default=0,
        metadata=doc(
            "How many matching requests the rule affects; 0 means all from now on.",
            minimum=0,
            maximum=MAX_COUNT,
        ),
    )
    after: int = field(
        default=0,
        metadata=doc(
            "Let this many matching requests through before the rule applies.", minimum=0, maximum=MAX_COUNT
        ),
    )

    @property
    def effective(self) -> bool:
        """Whether the rule does anything (answers an error, adds latency or drops watches)."""
        return bool(self.code or self.delay or self.drop_watches)


def api_fault_problem(fault: ApiFault) -> str | None:  # noqa: PLR0911 - one return per rule
    """Why the API server would refuse ``fault`` (the first reason), or ``None`` when it accepts it."""
    if fault.verb != "any" and fault.verb not in API_VERBS:
        return f"fault verb: {fault.verb!r} is not a verb; valid verbs: {', '.join(API_VERBS)}"
    if fault.resource and api_resource(fault.resource) is None:
        valid = ", ".join(API_RESOURCE_KINDS)
        return f"fault resource: {fault.resource!r} is not served; valid resources: {valid}"
    if fault.code and fault.code not in API_FAULT_CODES:
        return f"fault code: {fault.code!r} is not supported; valid codes: {list(API_FAULT_CODES)}"
    if not 0 <= fault.delay <= MAX_DURATION:  # NaN fails too
        return f"fault latency: must be >= 0 and at most {MAX_DURATION:g} seconds, got {fault.delay}"
    if fault.times < 0:
        return f"fault times: must be >= 0 (0: every matching request), got {fault.times}"
    if not fault.effective:
        return "fault: needs at least one of code, latency or dropWatch"
    if fault.client != "any" and fault.client not in CLIENT_KINDS:
        return f"fault client: {fault.client!r} is not one of {', '.join(CLIENT_KINDS)}"
    if fault.after < 0:
        return f"fault after: must be >= 0, got {fault.after}"
    if fault.drop_watches and fault.verb not in ("any", "watch"):
        return f"fault dropWatch: only applies to verb 'watch', not {fault.verb!r}"
    return None


# ----------------------------------------------------------------------------- both
F = TypeVar("F", PluginFault, ApiFault)


def scaled(fault: F, time_scale: float) -> F:
    """``fault`` with its nominal ``delay`` turned into real seconds at ``time_scale``."""
    return dataclasses.replace(fault, delay=fault.delay * time_scale) if fault.delay else fault


def _hint(value: str, valid: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(value, valid, n=1)
    return f" Did you mean '{close[0]}'?" if close else ""


def describe(fault: PluginFault | ApiFault) -> str:
    """``ApiFault(verb='get', code=503, times=2)``: the rule with the fields it sets."""
    fields = dataclasses.fields(fault)
    shown = [f"{f.name}={getattr(fault, f.name)!r}" for f in fields if getattr(fault, f.name) != f.default]
    return f"{type(fault).__name__}({', '.join(shown)})"
