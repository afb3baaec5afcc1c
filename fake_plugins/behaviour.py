"""Scriptable behaviour of a fake driver: faults, deliberate bugs and device health.

Everything here is plain data that a YAML scenario can carry, plus :class:`FaultPlan`,
the thread-safe bookkeeping that decides which faults fire on a given call. Fault rules are
:class:`drasim.faults.PluginFault` values, the rules a scenario writes; :func:`decode_fault`
reads them from a behaviour file, which keeps its own keys (``omit``, ``extraUid``, ``skip``,
``once``, ``times: null``). Their ``delay`` is in real seconds.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from drasim.errors import ConfigError
from drasim.faults import ANY_RPC, GRPC_CODES, PluginFault, plugin_fault_problem
from drasim.values import ClaimRef
from fake_plugins.decode import DECODERS, decode, decode_fields

#: Deliberate bugs a conformance suite must catch; see :class:`Behaviour`.
BUGS: dict[str, str] = {
    "non-idempotent": "a repeated prepare returns new CDI IDs each time instead of the recorded devices",
    "forgets-state": "no checkpoint file: a restarted driver has forgotten every prepared claim",
    "drops-claim": "the prepare reply leaves out the last requested claim",
    "ignores-claim-errors": (
        "a claim that fails to prepare or unprepare, or cannot be read from the API server, "
        "is reported as a success"
    ),
    "duplicate-cdi-ids": "every device lists its CDI ID twice",
    "no-cdi-spec": "no CDI spec file is written",
    "double-allocates": "a device already prepared for another claim is prepared again",
}

HEALTH_VALUES: tuple[str, ...] = ("HEALTHY", "UNHEALTHY", "UNKNOWN")

#: ``health_check_timeout_seconds`` is an int64 on the wire.
MAX_TIMEOUT_SECONDS = 2**63 - 1


def code_name(code: str, where: str) -> str:
    """Normalise ``Unavailable`` / ``unavailable`` / ``UNAVAILABLE`` to the canonical name."""
    upper = "".join("_" + c if c.isupper() and i else c for i, c in enumerate(code)).upper()
    for candidate in (code.upper(), upper.replace("__", "_")):
        if candidate in GRPC_CODES:
            return candidate
    close = difflib.get_close_matches(code.upper(), GRPC_CODES, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise ConfigError(f"{where}: '{code}' is not a gRPC status code.{hint}")


# A fault rule is a :class:`drasim.faults.PluginFault`, the one fault vocabulary of scenarios and
# the runner. A behaviour file keeps its own keys for it (camelCase or snake_case):
_WIRE_FIELDS: dict[str, Any] = {
    "rpc": str,  # RPC short name or ``*`` (the default): which calls the rule matches
    "claim": str,  # only calls carrying this claim (``namespace/name`` or UID); empty: every call
    "code": str,  # fail the whole call with this gRPC status code (Go-style names accepted)
    "message": str,  # details text for ``code``
    "error": str,  # per-claim error string for the matching claims (prepare/unprepare)
    "omit": bool,  # leave the matching claims out of the reply (``missing_claim``)
    "extra_uid": str,  # add an entry for this UID, which nobody asked for (``unknown_uid``)
    "delay": float,  # real seconds to wait before answering
    "nil_entry": bool,  # answer the matching claims with an empty (nil) entry
    "hang": bool,  # block until released or stopped, or until the caller gives up
    "block": bool,  # like hang, but the caller giving up does not end it
    "crash": str,  # ``before`` / ``after``: the process dies mid-call
    "times": int | None,  # fire this many times, then behave; null (the default): always
    "once": bool,  # shorthand for times: 1
    "skip": int,  # let this many matching calls pass untouched first (``after``)
}
_WIRE_NAMES = {"after": "skip", "missing_claim": "omit", "extra_uid": "extraUid"}
"""PluginFault field -> behaviour-file key, where they differ (for error messages)."""


def decode_fault(data: Any, where: str = "fault") -> PluginFault:
    """The :class:`PluginFault` a behaviour file's fault mapping describes (or ``data`` itself,
    when it is one), checked; bad input is a ConfigError naming the key."""
    if isinstance(data, PluginFault):
        check_fault(data, where)
        return data
    wire = decode_fields(_WIRE_FIELDS, data, where)
    times = wire.get("times")
    if times is not None and times < 1:
        raise ConfigError(f"{where}.times: must be >= 1 (null or left out: every matching call), got {times}")
    code = wire.get("code") or None
    extra_uid = wire.get("extra_uid", "")
    fault = PluginFault(
        rpc=wire.get("rpc", ANY_RPC),
        claim=wire.get("claim", ""),
        code=code_name(code, f"{where}.code") if code else None,  # type: ignore[arg-type]
        message=wire.get("message", ""),
        error=wire.get("error", ""),
        missing_claim=wire.get("omit", False),
        unknown_uid=bool(extra_uid),
        extra_uid=extra_uid,
        nil_entry=wire.get("nil_entry", False),
        delay=wire.get("delay", 0.0),
        hang=wire.get("hang", False),
        block=wire.get("block", False),
        crash=wire.get("crash") or None,
        times=1 if wire.get("once") else times or 0,
        after=wire.get("skip", 0),
    )
    check_fault(fault, where)
    return fault


def check_fault(fault: PluginFault, where: str) -> None:
    """Raise ConfigError when ``fault`` leaves the vocabulary (:func:`drasim.faults.plugin_fault_problem`)."""
    problem = plugin_fault_problem(fault)
    if problem is not None:
        name, message = problem
        raise ConfigError(f"{where}.{_WIRE_NAMES.get(name, name)}: {message}")


DECODERS[PluginFault] = decode_fault


def fault_matches(fault: PluginFault, rpc: str, claims: Sequence[ClaimRef]) -> bool:
    """Does ``fault`` apply to a call of ``rpc`` carrying ``claims``?"""
    if fault.rpc not in (ANY_RPC, rpc):
        return False
    return not fault.claim or any(claim_matches(fault.claim, c) for c in claims)


def claim_matches(selector: str, claim: ClaimRef) -> bool:
    """``namespace/name`` or a UID selects a claim; empty selects every claim."""
    return not selector or selector in (claim.uid, f"{claim.namespace}/{claim.name}")


@dataclass
class HealthSpec:
    """The health the driver reports for one device on its health stream."""

    device: str = ""
    """Device name (e.g. gpu-0)."""
    pool: str = ""
    """Pool name; empty = the driver's pool (the node name)."""
    health: str = "HEALTHY"
    """HEALTHY, UNHEALTHY or UNKNOWN."""
    message: str = ""
    """Optional detail text."""
    timeout_seconds: int = 0
    """health_check_timeout_seconds (YAML ``timeoutSeconds``); 0 = the kubelet's default (30 s)."""


@dataclass
class Behaviour:
    """What a fake driver does beyond the correct protocol (YAML: ``faults``, ``bugs``, ``health``)."""

    faults: list[PluginFault] = field(default_factory=list)
    bugs: list[str] = field(default_factory=list)
    health: list[HealthSpec] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Any, where: str = "behaviour") -> Behaviour:
        """Decode and validate; ``None`` gives the default (correct) behaviour."""
        behaviour = cls() if data is None else decode(cls, data, where)
        behaviour.validate(where)
        return behaviour

    def validate(self, where: str = "behaviour") -> None:
        """Check fault values, bug names and health values."""
        for i, fault in enumerate(self.faults):
            check_fault(fault, f"{where}.faults[{i}]")
        for i, bug in enumerate(self.bugs):
            if bug not in BUGS:
                close = difflib.get_close_matches(bug, BUGS, n=1)
                hint = f" Did you mean '{close[0]}'?" if close else ""
                raise ConfigError(f"{where}.bugs[{i}]: unknown bug '{bug}'.{hint} Valid: {', '.join(BUGS)}.")
        for i, spec in enumerate(self.health):
            if spec.health.upper() not in HEALTH_VALUES:
                valid = ", ".join(HEALTH_VALUES)
                raise ConfigError(f"{where}.health[{i}].health: expected one of {valid}, got '{spec.health}'")
            spec.health = spec.health.upper()
            if not spec.device:
                raise ConfigError(f"{where}.health[{i}].device: required")
            if isinstance(spec.timeout_seconds, bool) or not isinstance(spec.timeout_seconds, int):
                got = f"{type(spec.timeout_seconds).__name__} {spec.timeout_seconds!r}"
                raise ConfigError(f"{where}.health[{i}].timeoutSeconds: expected an integer, got {got}")
            if not 0 <= spec.timeout_seconds <= MAX_TIMEOUT_SECONDS:
                raise ConfigError(
                    f"{where}.health[{i}].timeoutSeconds: expected 0 to {MAX_TIMEOUT_SECONDS} "
                    f"(0 = the kubelet's default), got {spec.timeout_seconds}"
                )

    def has_bug(self, name: str) -> bool:
        """Is the named bug switched on?"""
        return name in self.bugs


class FaultPlan:
    """Counts how often each fault fired and picks the fault for a call (thread-safe).

    Rules are checked in order; the first one that matches the call and applies to it
    (past its ``skip``, ``times`` not used up) fires, and no later rule is consulted. A
    rule counts a call towards its ``skip`` only when it was consulted for that call.
    """

    def __init__(self, faults: Sequence[PluginFault]) -> None:
        self._faults = list(faults)
        self._seen = [0] * len(self._faults)
        self._fired = [0] * len(self._faults)
        self._lock = threading.Lock()

    def extend(self, faults: Sequence[PluginFault]) -> None:
        """Append rules; the counters of the rules already there are kept (no re-arming)."""
        with self._lock:
            self._faults.extend(faults)
            self._seen.extend(0 for _ in faults)
            self._fired.extend(0 for _ in faults)

    def select(self, rpc: str, claims: Sequence[ClaimRef] = ()) -> list[PluginFault]:
        """The fault that fires on this call (a list of at most one); consumes one use of it."""
        with self._lock:
            for i, fault in enumerate(self._faults):
                if not fault_matches(fault, rpc, claims):
                    continue
                if fault.times and self._fired[i] >= fault.times:
                    continue
                self._seen[i] += 1
                if self._seen[i] <= fault.after:
                    continue
                self._fired[i] += 1
                return [fault]
        return []

    def fired(self) -> list[int]:
        """How often each fault fired, in declaration order."""
        with self._lock:
            return list(self._fired)
