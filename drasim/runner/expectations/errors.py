"""``expectError`` and ``expectNoError``: kubelet errors journaled within a window.

A kubelet error is a ``kubelet`` event of one of the operations below whose
``error`` is set, or a ``registration`` event with outcome ``failed``. Other
``kubelet`` events that carry an error text (a health stream that ended, a slice
wipe that will be retried) are the kubelet's background housekeeping, not the
operations a scenario names, and do not count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drasim.plugins.registration import is_timeout
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.expectations.common import (
    describe_match,
    error_matches,
    plural,
    pod_key,
    similar,
    window_text,
)
from drasim.runner.expectations.registry import checks
from drasim.scenario.expectations import ExpectError, ExpectNoError

if TYPE_CHECKING:
    from drasim.runner.world import World

KUBELET_OPERATIONS: dict[str, tuple[str, ...]] = {
    "prepare": ("PrepareResources",),
    "unprepare": ("UnprepareResources",),
    "reconcile": ("ReconcileUnprepare",),
    "start": ("start",),
}
"""Scenario operation -> ``operation`` values of ``kubelet`` journal events
(drasim/kubelet/manager.py journals PrepareResources, UnprepareResources and one
ReconcileUnprepare per pod; the runner journals ``start``). The runner's summary
``reconcile`` event repeats the ReconcileUnprepare errors and is not counted twice."""

OTHER_OPERATIONS = ("GetResources",)
"""Kubelet errors only ``operation: any`` sees: the runner journals a failed GetResources
at container start (the container would not start)."""

REGISTRATION = "registration"


def error_events(world: World, operation: str, since: int) -> list[dict[str, Any]]:
    """Every kubelet error of ``operation`` (``any``: of every operation) after ``since``, oldest first."""
    found: list[dict[str, Any]] = []
    wanted = (
        {name for names in KUBELET_OPERATIONS.values() for name in names} | set(OTHER_OPERATIONS)
        if operation == "any"
        else set(KUBELET_OPERATIONS.get(operation, ()))
    )
    if wanted:
        found.extend(
            e
            for e in world.journal.events("kubelet", since_seq=since)
            if e.get("error") and e.get("operation") in wanted
        )
    if operation in ("any", REGISTRATION):
        found.extend(_registration_errors(world, since))
    return sorted(found, key=lambda e: int(e.get("seq", 0)))


def _registration_errors(world: World, since: int) -> list[dict[str, Any]]:
    """Failed registrations after ``since``, less dial time-outs that the retry got past.

    A dial that ran out of time on a socket that a later attempt registered is a slow start
    (typically a loaded machine), which the kubelet's reconciler absorbs by retrying; a dial
    that never succeeded is still an error.
    """
    events = world.journal.events(REGISTRATION, since_seq=since)
    registered_at: dict[str, int] = {}
    for e in events:
        if e.get("outcome") == "registered" and e.get("socket"):
            registered_at[str(e["socket"])] = int(e.get("seq", 0))
    return [
        e
        for e in events
        if e.get("outcome") == "failed"
        and e.get("error")
        and not (
            is_timeout(str(e["error"])) and registered_at.get(str(e.get("socket")), -1) > int(e.get("seq", 0))
        )
    ]


def _for_pod(world: World, events: list[dict[str, Any]], pod: str) -> list[dict[str, Any]]:
    """The events about ``pod`` (by ``namespace/name`` or by the UID the runner gave it)."""
    key = pod_key(pod, world)
    record = world.pods.get(key)
    uid = record.uid if record is not None else None
    return [e for e in events if e.get("pod") == key or (uid is not None and e.get("pod_uid") == uid)]


def _scope(operation: str, pod: str) -> str:
    text = "a kubelet error" if operation == "any" else f"a kubelet {operation} error"
    return text + (f" for pod {pod_key(pod)}" if pod else "")


def _summary(world: World, event: dict[str, Any]) -> dict[str, Any]:
    """An error event as plain data; a pod known only by UID is named."""
    data = {"seq": event.get("seq"), "operation": event.get("operation") or event.get("kind")}
    if not event.get("pod") and event.get("pod_uid"):
        names = [key for key, record in world.pods.items() if record.uid == event["pod_uid"]]
        event = {**event, "pod": names[0] if names else f"uid:{event['pod_uid']}"}
    for name in ("pod", "driver"):
        if event.get(name):
            data[name] = event[name]
    data["error"] = event.get("error")
    return data


@checks(ExpectError)
def check_expect_error(world: World, args: ExpectError, ctx: StepContext) -> None:
    """expectError: at least one matching kubelet error in the window."""
    since = ctx.since(args.since)
    every = error_events(world, args.operation, since)
    candidates = _for_pod(world, every, args.pod) if args.pod else every
    match = args.matcher()
    if any(error_matches(str(e.get("error", "")), match) for e in candidates):
        return
    wanted = _scope(args.operation, args.pod)
    how = describe_match(match)
    where = window_text(ctx, args.since)
    if candidates:
        found = f"found {plural(len(candidates), 'error')}, none matching: " + " | ".join(
            str(e.get("error")) for e in candidates[:3]
        )
    else:
        found = "found none"
    raise StepFailure(
        f"expected {wanted}{' ' + how if how else ''} {where}; {found}",
        expected={"operation": args.operation, "pod": args.pod or None, "error": how or "any"},
        actual=[_summary(world, e) for e in candidates],
        similar=similar(candidates or error_events(world, "any", since)),
    )


@checks(ExpectNoError)
def check_no_error(world: World, args: ExpectNoError, ctx: StepContext) -> None:
    """expectNoError: no kubelet error of the operation in the window."""
    since = ctx.since(args.since)
    found = error_events(world, args.operation, since)
    if not found:
        return
    what = "kubelet error" if args.operation == "any" else f"kubelet {args.operation} error"
    head = _summary(world, found[0])
    first = f"#{head['seq']} {head['operation']}" + (f" pod={head['pod']}" if "pod" in head else "")
    first += f": {head['error']}"
    raise StepFailure(
        f"expected no {what} {window_text(ctx, args.since)}; found {len(found)}, first: {first}",
        expected=[],
        actual=[_summary(world, e) for e in found],
        similar=similar(found),
    )
