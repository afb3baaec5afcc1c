"""Invariants about how kubelet operations end: ``fault-free-succeeds`` and ``claim-errors-reported``.

Most operation failures in an exploration are legitimate (an injected fault, a stopped
plugin, a kubelet that is down), so the explorer does not treat a failure as a
violation by itself. Two situations are clear-cut, though:

``fault-free-succeeds``
    A step that starts while nothing can make an operation fail — the kubelet runs,
    the plugin runs and the kubelet holds a connected registration of it, no plugin
    fault rule can still fire, and the plugin holds no prepared claim the API server
    has forgotten (whose devices the scheduler may hand out again, so a new claim
    would legitimately be refused) — and that does not itself stop, start or crash the
    kubelet or the plugin, or add faults: then every PrepareResources,
    UnprepareResources and reconcile unprepare the kubelet runs during the step
    succeeds. Retries of earlier failures are included: once the cause is gone, a retry
    must work. A step during which a call ran into its gRPC deadline is left out, as
    that says more about a loaded machine than about the driver.

``claim-errors-reported``
    When the plugin is told to fail a claim (a per-claim ``error`` fault fired on a
    call), the kubelet sees that call fail: its reply carries an error for the claim,
    or the whole call failed. Counted from the fake plugin's own fault counters, per
    step: each firing happened on a distinct call, so at least as many calls of that
    RPC carrying a matching claim must have failed.

Both read the fake plugin through :class:`~drasim.runner.drivers.FakeDriverHandle`
(``explore`` always runs the fake) and the journal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drasim.explore.violations import Violation
from drasim.faults import CLAIM_RPCS
from drasim.journal import RpcCall
from drasim.runner.drivers import FakeDriverHandle
from drasim.runner.expectations.errors import KUBELET_OPERATIONS
from drasim.runner.world import World
from drasim.scenario import schema as _schema  # noqa: F401 - registers every step before steps_with
from drasim.scenario.registry import steps_with
from fake_plugins.behaviour import claim_matches  # the fake plugin's own claim selector

RESOURCE_V1 = "resource.k8s.io/v1"

LIFECYCLE_STEPS = steps_with("lifecycle")
"""Steps that change what may fail while they run; ``fault-free-succeeds`` does not judge them."""

JUDGED_OPERATIONS = ("prepare", "unprepare", "reconcile")
"""The scenario language's operations whose failures ``fault-free-succeeds`` judges."""

OPERATIONS: dict[str, str] = {
    journaled: operation for operation in JUDGED_OPERATIONS for journaled in KUBELET_OPERATIONS[operation]
}
"""Kubelet journal operation -> the scenario language's ``operation`` (expectNoError/expectError),
read from the expectations' own table so that the two cannot drift apart."""

OPERATION_STEPS = steps_with("operation")
"""Steps whose own result is the kubelet operation they run (their ``expectError`` is its error)."""

DEADLINE = "DeadlineExceeded"


def fake_driver(world: World) -> Any:
    """The fake plugin (``fake_plugins.FakeDriver``) of the exploration's only driver, or ``None``."""
    handle = world.fleet.driver()
    return handle.driver if isinstance(handle, FakeDriverHandle) else None


def armed_faults(driver: Any) -> list[Any]:
    """The plugin's fault rules that can still fire (``times`` not used up)."""
    faults = list(driver.behaviour.faults)
    fired = driver.fault_counts()
    return [f for f, n in zip(faults, fired, strict=True) if not f.times or n < f.times]


def _describe_fault(fault: Any) -> str:
    what = fault.code or (f"error {fault.error!r}" if fault.error else "") or f"crash {fault.crash}"
    return f"{fault.rpc} {what}" + (f" for {fault.claim}" if fault.claim else "")


def unclean_reason(world: World) -> str | None:
    """Why an operation may legitimately fail now, or ``None`` when nothing may make it fail."""
    driver = fake_driver(world)
    if world.kubelet is None:
        return "the kubelet is down"
    if driver is None:
        return "not the fake plugin"
    if not world.fleet.driver().running:
        return "the plugin is not running"
    return _fault_reason(driver) or _registration_reason(world, driver) or _stale_reason(world, driver)


def _fault_reason(driver: Any) -> str | None:
    armed = armed_faults(driver)
    return "fault rule(s) armed: " + "; ".join(_describe_fault(f) for f in armed) if armed else None


def _registration_reason(world: World, driver: Any) -> str | None:
    assert world.kubelet is not None
    endpoint = str(driver.endpoint)
    instances = world.kubelet.instances(world.fleet.driver().name)
    if any(c.connected and str(c.endpoint) == endpoint for c in instances):
        return None
    return "the kubelet holds no connected registration of the running plugin"


def _stale_reason(world: World, driver: Any) -> str | None:
    """A claim the plugin holds but the API server deleted: its devices may be allocated again."""
    known = {
        str((c.get("metadata") or {}).get("uid", ""))
        for c in world.api.runner_api.list(RESOURCE_V1, "ResourceClaim")
    }
    stale = sorted(uid for uid in driver.prepared_claims() if uid not in known)
    if stale:
        return f"the plugin still holds claim(s) the API server no longer has: {', '.join(stale)}"
    return None


@dataclass(frozen=True)
class FaultCounts:
    """The fake plugin's fault rules and how often each fired, at one moment."""

    behaviour: Any
    faults: tuple[Any, ...]
    fired: tuple[int, ...]

    @classmethod
    def of(cls, driver: Any) -> FaultCounts:
        """A snapshot of ``driver``'s current rules and counters."""
        return cls(driver.behaviour, tuple(driver.behaviour.faults), tuple(driver.fault_counts()))


def _pod_name(world: World, event: Mapping[str, Any]) -> str:
    if event.get("pod"):
        return str(event["pod"])
    uid = event.get("pod_uid")
    names = [rec.key for rec in world.pods.values() if rec.uid == uid]
    return names[0] if names else f"uid:{uid}"


class OutcomeChecks:
    """Per-run state of the two invariants; :meth:`before` each step, :meth:`after` it."""

    def __init__(self) -> None:
        self.clean: str | None = None
        """``None`` when the current step started clean, else why not."""
        self.step = ""
        self.start_seq = 0
        self.counts: FaultCounts | None = None

    def before(self, world: World, step: str) -> None:
        """Remember the state the step starts in."""
        self.step = step
        self.start_seq = world.journal.mark()
        self.clean = "a lifecycle step" if step in LIFECYCLE_STEPS else unclean_reason(world)
        driver = fake_driver(world)
        self.counts = None if driver is None else FaultCounts.of(driver)

    def after(self, world: World, calls: Sequence[RpcCall], index: int) -> list[Violation]:
        """Both checks over the step's journal window and kubelet-side ``calls``."""
        return self._fault_free(world, calls, index) + self._errors_reported(world, calls, index)

    def _fault_free(self, world: World, calls: Sequence[RpcCall], index: int) -> list[Violation]:
        if self.clean is not None:
            return []
        if any(c.code == DEADLINE for c in calls):
            return []
        failed = [
            e
            for e in world.journal.events("kubelet", since_seq=self.start_seq)
            if e.get("error") and e.get("operation") in OPERATIONS
        ]
        if not failed:
            return []
        first = failed[0]
        operation = str(first["operation"])
        pod = _pod_name(world, first)
        return [
            Violation(
                "fault-free-succeeds",
                f"{operation} for pod {pod} failed during step {index + 1} ({self.step}), which started "
                "with no fault armed, the plugin registered and connected and the kubelet up: "
                f"{first['error']}",
                {
                    "step": self.step,
                    "operation": operation,
                    "scenario_operation": OPERATIONS[operation],
                    "pod": pod,
                    "error": str(first["error"]),
                    "seq": first.get("seq"),
                    "failures": [
                        {"seq": e.get("seq"), "operation": e.get("operation"), "error": e.get("error")}
                        for e in failed
                    ],
                },
                index,
            )
        ]

    def _errors_reported(self, world: World, calls: Sequence[RpcCall], index: int) -> list[Violation]:
        before = self.counts
        driver = fake_driver(world)
        if before is None or driver is None or driver.behaviour is not before.behaviour:
            return []  # rules were replaced during the step (their counters restarted)
        now = driver.fault_counts()
        if len(now) < len(before.fired):
            return []  # rules were cleared during the step (their counters restarted)
        found = []
        # Rules added during the step come after the old ones, whose counters are kept.
        for fault, then, count in zip(before.faults, before.fired, now[: len(before.fired)], strict=True):
            fired = count - then
            if fired <= 0 or not fault.error or fault.rpc not in CLAIM_RPCS:
                continue
            carrying = [
                c
                for c in calls
                if c.name == fault.rpc and any(claim_matches(fault.claim, x) for x in c.claims)
            ]
            failed = [c for c in carrying if not c.ok or _claim_error(c, fault.claim)]
            if len(failed) >= fired:
                continue
            found.append(
                Violation(
                    "claim-errors-reported",
                    f"the plugin was made to fail {fault.claim or 'every claim'} on {fault.rpc} "
                    f"({fault.error!r}) {fired} time(s) during step {index + 1} ({self.step}), but only "
                    f"{len(failed)} of the {len(carrying)} call(s) the kubelet made reported an error",
                    {
                        "step": self.step,
                        "rpc": fault.rpc,
                        "claim": fault.claim,
                        "error": fault.error,
                        "fired": fired,
                        "call_seqs": [c.seq for c in carrying],
                        "failed_seqs": [c.seq for c in failed],
                    },
                    index,
                )
            )
        return found


def _claim_error(call: RpcCall, selector: str) -> bool:
    """Some claim the selector matches is answered with an error (or left out of the reply)."""
    results = call.claim_results
    for claim in call.claims:
        if not claim_matches(selector, claim):
            continue
        entry = results.get(claim.uid)
        if not isinstance(entry, Mapping) or entry.get("error"):
            return True
    return False
