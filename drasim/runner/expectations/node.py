"""Expectations on the node's live state: pods, registrations, slices, metrics, device health.

``expectRegistered`` may wait up to :data:`SETTLE_TIMEOUT` for connection changes that
other threads report; the rest read the state as it is now.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from drasim.errors import ApiError
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.expectations.common import find_pod, plural, pod_key, settle
from drasim.runner.expectations.registry import checks
from drasim.scenario.expectations import (
    CallCount,
    ExpectConnections,
    ExpectMetric,
    ExpectMightNeedUnprepare,
    ExpectPod,
    ExpectRegistered,
    ExpectResourceSlices,
)

if TYPE_CHECKING:
    from drasim.runner.world import World


def _kubelet_stopped(what: str) -> StepFailure:
    return StepFailure(f"{what}: the kubelet is not running", actual={"kubelet": "stopped"})


@checks(ExpectMightNeedUnprepare)
def check_might_need_unprepare(world: World, args: ExpectMightNeedUnprepare, ctx: StepContext) -> None:
    """expectMightNeedUnprepare: the kubelet's PodMightNeedToUnprepareResources answer per pod."""
    if world.kubelet is None:
        raise _kubelet_stopped("expected PodMightNeedToUnprepareResources answers")
    manager = world.kubelet
    expected: dict[str, bool] = {}
    actual: dict[str, bool] = {}
    for ref, want in args.pods.items():
        record = find_pod(world, ref)
        expected[record.key] = want
        actual[record.key] = bool(manager.pod_might_need_to_unprepare_resources(record.uid))
    wrong = [key for key in expected if expected[key] != actual[key]]
    if wrong:
        parts = [f"pod {key}: expected {expected[key]}, found {actual[key]}" for key in wrong]
        raise StepFailure(
            "PodMightNeedToUnprepareResources: " + "; ".join(parts), expected=expected, actual=actual
        )


@checks(ExpectPod)
def check_pod(world: World, args: ExpectPod, ctx: StepContext) -> None:
    """expectPod: the phase as the runner tracks it (a forgotten pod is Gone) and the deletionTimestamp."""
    key = pod_key(args.pod, world)
    record = world.pods.get(key)
    if record is None and args.phase in ("Gone", None) and not args.deleting:
        return
    record = find_pod(world, args.pod)
    if args.phase is not None and record.phase != args.phase:
        raise StepFailure(
            f"expected pod {key} to be {args.phase}; it is {record.phase}",
            expected={"phase": args.phase},
            actual={"phase": record.phase},
            similar=world.journal.events("kubelet", pod=key)[-5:],
        )
    if args.deleting is not None:
        try:
            obj = world.api.runner_api.get("v1", "Pod", record.name, record.namespace)
        except ApiError:
            obj = None
        deleting = bool(obj and (obj.get("metadata") or {}).get("deletionTimestamp"))
        if deleting != args.deleting:
            state = "absent" if obj is None else ("deleting" if deleting else "not deleted")
            raise StepFailure(
                f"expected pod {key} {'to have' if args.deleting else 'not to have'} a deletionTimestamp "
                f"in the API server; the Pod object is {state}",
                expected={"deleting": args.deleting},
                actual={"deleting": deleting, "inApi": obj is not None},
            )


# ------------------------------------------------------------------------ metrics


def _labels_text(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


@checks(ExpectMetric)
def check_metric(world: World, args: ExpectMetric, ctx: StepContext) -> None:
    """expectMetric: one series (exact labels): present, gauge value, histogram count.

    A gauge series that does not exist reads as 0 for ``value`` (as a dashboard shows
    a missing series); use ``present`` to tell the two apart.
    """
    metrics: Any = world.metrics
    if getattr(world, "upstream_kubelet", False) and world.kubelet is not None:
        # --kubelet upstream: upstream's own registry (its collector and DRA histograms).
        from drasim.upstream_kubelet.metrics import TextMetrics

        kubelet: Any = world.kubelet
        metrics = TextMetrics(kubelet.metrics_text())
    series = {tuple(sorted(key)): value for key, value in metrics.series(args.name).items()}
    wanted = tuple(sorted(args.labels.items()))
    name = f"{args.name}{_labels_text(dict(args.labels))}"
    exists = wanted in series
    others = [dict(key) | {"value": value} for key, value in sorted(series.items()) if key != wanted]
    problems: list[str] = []
    expected: dict[str, Any] = {}
    actual: dict[str, Any] = {"present": exists}
    if args.present is not None and exists != args.present:
        problems.append(f"expected series {name} to be {'present' if args.present else 'absent'}; "
                        f"it is {'present' if exists else 'absent'}")  # fmt: skip
        expected["present"] = args.present
    if args.value is not None:
        gauge = metrics.gauge(args.name, **args.labels)
        if exists and gauge is None:
            problems.append(f"expected gauge {name} = {args.value:g}; it is a histogram")
        else:
            value = 0.0 if gauge is None else float(gauge)
            if not math.isclose(value, args.value, rel_tol=1e-9, abs_tol=1e-12):
                absent = "" if exists else " (no such series)"
                problems.append(f"expected {name} = {args.value:g}; found {value:g}{absent}")
            actual["value"] = value
        expected["value"] = args.value
    if args.count is not None:
        count = metrics.histogram_count(args.name, **args.labels)
        if count != args.count:
            problems.append(f"expected {plural(args.count, 'observation')} in {name}; found {count}")
        expected["count"], actual["count"] = args.count, count
    if problems:
        actual["otherSeries"] = others
        raise StepFailure("; ".join(problems), expected=expected, actual=actual)


# ------------------------------------------------------------------------ slices


def list_slices(world: World, selector: str) -> list[dict[str, Any]]:
    """ResourceSlices matching a field selector, read from the store (no journaled API call, no faults)."""
    return world.api.list_slices(selector)


@checks(ExpectResourceSlices)
def check_resource_slices(world: World, args: ExpectResourceSlices, ctx: StepContext) -> None:
    """expectResourceSlices: how many slices (and devices) a driver has for a node."""
    node = world.api.node_name(args.node) if args.node else world.node
    selector = f"spec.nodeName={node}" + (f",spec.driver={args.driver}" if args.driver else "")
    if node == world.node:  # slices a kubelet start wiped: see what the driver republishes
        world.fleet.wait_republished_slices([args.driver] if args.driver else None)
    slices = list_slices(world, selector)
    devices = sum(len((s.get("spec") or {}).get("devices") or []) for s in slices)
    names = [str((s.get("metadata") or {}).get("name", "")) for s in slices]
    whose = f"{args.driver} " if args.driver else ""
    problems: list[str] = []
    if args.count is not None and len(slices) != args.count:
        problems.append(f"expected {plural(args.count, 'ResourceSlice')} of {whose}on node {node}; "
                        f"found {len(slices)} {names}")  # fmt: skip
    if args.devices is not None and devices != args.devices:
        problems.append(f"expected {plural(args.devices, 'device')} in the ResourceSlices of {whose}"
                        f"on node {node}; found {devices}")  # fmt: skip
    if args.unchanged_since:
        change = _slice_change(world, args.unchanged_since, slices, node, args.driver)
        if change:
            problems.append(f"expected the ResourceSlices of {whose}on node {node} to be the same objects "
                            f"as at mark {args.unchanged_since!r}; {change}")  # fmt: skip
    if problems:
        given = (("count", args.count), ("devices", args.devices), ("unchangedSince", args.unchanged_since))
        expected = {k: v for k, v in given if v not in (None, "")}
        raise StepFailure(
            "; ".join(problems),
            expected=expected,
            actual={"count": len(slices), "devices": devices, "slices": names},
            similar=world.journal.events("api", resource="resourceslices")[-10:],
        )


def slice_identities(slices: list[dict[str, Any]]) -> list[dict[str, str]]:
    """What makes a ResourceSlice the same object: UID and resourceVersion (plus where it belongs)."""
    out = []
    for item in slices:
        md, spec = item.get("metadata") or {}, item.get("spec") or {}
        fields = {"uid": md.get("uid"), "name": md.get("name"), "resourceVersion": md.get("resourceVersion"),
                  "driver": spec.get("driver"), "node": spec.get("nodeName")}  # fmt: skip
        out.append({key: str(value or "") for key, value in fields.items()})
    return out


def _slice_change(world: World, mark: str, slices: list[dict[str, Any]], node: str, driver: str) -> str:
    """How the node's (driver's) slices differ from those recorded by ``mark``; empty when identical."""
    recorded = world.journal.events("mark", name=mark)
    if not recorded:
        raise StepFailure(f"expectResourceSlices: no mark {mark!r} was recorded before this step")
    then = {s["uid"]: s for s in recorded[-1].get("slices") or []
            if s.get("node") == node and (not driver or s.get("driver") == driver)}  # fmt: skip
    now = {s["uid"]: s for s in slice_identities(slices)}
    gone = sorted(then[u]["name"] for u in then.keys() - now.keys())
    new = sorted(now[u]["name"] for u in now.keys() - then.keys())
    written = sorted(now[u]["name"] for u in now.keys() & then.keys()
                     if now[u]["resourceVersion"] != then[u]["resourceVersion"])  # fmt: skip
    parts = [f"{what}: {', '.join(names)}" for what, names in
             (("deleted or replaced", gone), ("new", new), ("updated", written)) if names]  # fmt: skip
    return "; ".join(parts)


_CONNECTION_WORDS = {
    "grpc-channel": "channels",
    "grpc-connected": "connects",
    "grpc-disconnected": "disconnects",
}


@checks(ExpectConnections)
def check_connections(world: World, args: ExpectConnections, ctx: StepContext) -> None:
    """expectConnections: gRPC channels, connects and disconnects of the kubelet to a driver."""
    since = ctx.since(args.since)

    def count(operation: str) -> int:
        events = world.journal.events("kubelet", since_seq=since, operation=operation)
        return sum(1 for e in events if not args.driver or e.get("driver") == args.driver)

    def low(n: int | CallCount) -> int:
        return n if isinstance(n, int) else (n.at_least or 0)

    wanted = args.counts()
    settle(world, lambda: all(count(op) >= low(n) for op, n in wanted.items()))
    expected: dict[str, Any] = {}
    actual: dict[str, Any] = {}
    problems = []
    for op, n in wanted.items():
        word, found = _CONNECTION_WORDS[op], count(op)
        expected[word] = n if isinstance(n, int) else n.describe()
        actual[word] = found
        if (found != n) if isinstance(n, int) else not n.holds(found):
            problems.append(f"expected {expected[word]} {word}, found {found}")
    if problems:
        whose = f" to {args.driver}" if args.driver else ""
        raise StepFailure(
            f"gRPC connections of the kubelet{whose}: " + "; ".join(problems),
            expected=expected,
            actual=actual,
            similar=[
                e
                for e in world.journal.events("kubelet", since_seq=since)
                if str(e.get("operation", "")).startswith("grpc-")
            ][-10:],
        )


# ------------------------------------------------------------------------ registration


def registration_state(world: World, driver: str) -> dict[str, Any]:
    """What the kubelet knows of a driver's instances now."""
    if world.kubelet is None:
        return {"registered": False, "instances": 0, "connected": False, "service": None, "healthService": ""}
    kubelet = world.kubelet
    instances = list(kubelet.instances(driver))
    newest = instances[-1] if instances else None
    return {
        "registered": bool(instances),
        "instances": len(instances),
        "connected": any(bool(i.connected) for i in instances),
        "service": None if newest is None else kubelet.service_of(driver, newest.endpoint),
        # The service of the newest instance's health stream ("" when the kubelet opened none).
        "healthService": "" if newest is None else kubelet.health_service(driver, newest.endpoint),
    }


_FINAL_AFTER_A_PASS = frozenset({"registered", "instances", "service", "healthService"})
"""What a registry pass decides (the health service too: the plugin manager picks it, or none,
when it registers an instance); a gRPC connection comes up on its own time."""


def _only_in_process_drivers(world: World) -> bool:
    from drasim.runner.drivers import FakeDriverHandle

    return all(isinstance(handle, FakeDriverHandle) for handle in world.fleet.drivers.values())


@checks(ExpectRegistered)
def check_registered(world: World, args: ExpectRegistered, ctx: StepContext) -> None:
    """expectRegistered: registered at all, instance count, chosen service, connection."""
    driver = args.driver or world.fleet.driver("").name
    expected: dict[str, Any] = {"registered": args.registered}
    for name, key in (
        ("service", "service"),
        ("instances", "instances"),
        ("connected", "connected"),
        ("health_service", "healthService"),
    ):
        if getattr(args, name) is not None:
            expected[key] = getattr(args, name)

    def wrong() -> list[str]:
        state = registration_state(world, driver)
        return [name for name, value in expected.items() if state[name] != value]

    never = bool(expected.get("healthService")) and not world.version.health_services
    if wrong() and world.kubelet is not None and not never:  # never: no stream can come (< 1.34)
        if set(expected) <= _FINAL_AFTER_A_PASS and _only_in_process_drivers(world):
            # Nothing outside this process can register: once a registry pass changes nothing,
            # these values cannot change before the next step (a failed registration is retried
            # only on advanceClock), so there is nothing to wait for.
            world.fleet.settle_registrations()
        else:
            settle(world, lambda: not wrong())
    state = registration_state(world, driver)
    bad = wrong()
    if bad:
        parts = [f"expected {name} {expected[name]!r}; found {state[name]!r}" for name in bad]
        stopped = " (the kubelet is not running)" if world.kubelet is None else ""
        raise StepFailure(
            f"registration of {driver}{stopped}: " + "; ".join(parts),
            expected=expected,
            actual={name: state[name] for name in expected},
            similar=world.journal.events("registration", driver=driver)[-10:],
        )
