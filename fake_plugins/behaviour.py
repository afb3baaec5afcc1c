"""Scriptable behaviour of a fake driver: faults, deliberate bugs and device health.

Everything here is plain data that a YAML scenario can carry, plus :class:`FaultPlan`,
the thread-safe bookkeeping that decides which faults fire on a given call.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from drasim.errors import ConfigError
from drasim.values import ClaimRef
from fake_plugins.decode import decode

#: RPC names a fault may target (short names; ``*`` matches every RPC).
RPC_NAMES: tuple[str, ...] = (
    "NodePrepareResources",
    "NodeUnprepareResources",
    "GetInfo",
    "NotifyRegistrationStatus",
    "NodeWatchResources",
    "*",
)

#: gRPC status code names (Python/canonical spelling) accepted in ``code``.
STATUS_CODES: tuple[str, ...] = (
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
)

CRASH_POINTS: tuple[str, ...] = ("", "before", "after")

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
        if candidate in STATUS_CODES:
            return candidate
    close = difflib.get_close_matches(code.upper(), STATUS_CODES, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise ConfigError(f"{where}: '{code}' is not a gRPC status code.{hint}")


@dataclass
class Fault:
    """One scripted misbehaviour, applied to the calls it matches.

    A fault matches a call when ``rpc`` names it and, if ``claim`` is set, the call
    carries that claim. ``times``/``once``/``skip`` say for which matching calls it fires.
    """

    rpc: str = "*"
    """RPC short name (NodePrepareResources, ..., GetInfo) or ``*`` for any."""
    claim: str = ""
    """Only calls carrying this claim (``namespace/name`` or UID); empty = every call."""
    code: str = ""
    """Fail the whole call with this gRPC status code (e.g. UNAVAILABLE)."""
    message: str = ""
    """Details text for ``code``; defaults to a description of the fault."""
    error: str = ""
    """Per-claim error string in the reply for the matching claims (prepare/unprepare)."""
    omit: bool = False
    """Leave the matching claims out of the reply."""
    extra_uid: str = ""
    """Add an entry for this UID, which nobody asked for, to the reply."""
    delay: float = 0.0
    """Seconds to wait before answering."""
    nil_entry: bool = False
    """Answer the matching claims with an empty (nil) entry: no error, no devices."""
    hang: bool = False
    """Block until the driver is stopped or its hung calls are released, or the caller gives up."""
    block: bool = False
    """Like ``hang``, but the caller giving up does not end it: once released, the call does its work."""
    crash: str = ""
    """``before`` (no side effects) or ``after`` (state written, no reply): the process dies mid-call."""
    times: int | None = None
    """Fire this many times, then behave; ``null`` = always."""
    once: bool = False
    """Shorthand for ``times: 1``."""
    skip: int = 0
    """Let this many matching calls pass untouched first."""

    def validate(self, where: str) -> None:
        """Raise ConfigError on a bad value."""
        if self.rpc not in RPC_NAMES:
            close = difflib.get_close_matches(self.rpc, RPC_NAMES, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"{where}.rpc: unknown RPC '{self.rpc}'.{hint} Valid: {', '.join(RPC_NAMES)}.")
        if self.code:
            self.code = code_name(self.code, f"{where}.code")
        if self.crash not in CRASH_POINTS:
            raise ConfigError(f"{where}.crash: expected 'before' or 'after', got '{self.crash}'")
        if self.times is not None and self.times < 0:
            raise ConfigError(f"{where}.times: must be >= 0, got {self.times}")
        if self.delay < 0:
            raise ConfigError(f"{where}.delay: must be >= 0, got {self.delay}")
        if self.once:
            self.times = 1

    def matches(self, rpc: str, claims: Sequence[ClaimRef]) -> bool:
        """Does this fault apply to a call of ``rpc`` carrying ``claims``?"""
        if self.rpc not in ("*", rpc):
            return False
        return not self.claim or any(claim_matches(self.claim, c) for c in claims)


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

    faults: list[Fault] = field(default_factory=list)
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
            fault.validate(f"{where}.faults[{i}]")
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

    def __init__(self, faults: Sequence[Fault]) -> None:
        self._faults = list(faults)
        self._seen = [0] * len(self._faults)
        self._fired = [0] * len(self._faults)
        self._lock = threading.Lock()

    def extend(self, faults: Sequence[Fault]) -> None:
        """Append rules; the counters of the rules already there are kept (no re-arming)."""
        with self._lock:
            self._faults.extend(faults)
            self._seen.extend(0 for _ in faults)
            self._fired.extend(0 for _ in faults)

    def select(self, rpc: str, claims: Sequence[ClaimRef] = ()) -> list[Fault]:
        """The fault that fires on this call (a list of at most one); consumes one use of it."""
        with self._lock:
            for i, fault in enumerate(self._faults):
                if not fault.matches(rpc, claims):
                    continue
                if fault.times is not None and self._fired[i] >= fault.times:
                    continue
                self._seen[i] += 1
                if self._seen[i] <= fault.skip:
                    continue
                self._fired[i] += 1
                return [fault]
        return []

    def fired(self) -> list[int]:
        """How often each fault fired, in declaration order."""
        with self._lock:
            return list(self._fired)
