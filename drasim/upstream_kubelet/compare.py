"""Compare two journals of one scenario, emulated and upstream, step by step.

Pure: it reads the journal events of two runs (``ScenarioResult.journal``) and returns the
first step where they differ in one of these aspects, in this order:

- ``rpc``: the DRA calls the drivers served, from the fake driver's own record in both runs
  (method, driver, claims; in the step the call began in). Upstream sends one
  request per driver from a Go map, so the order across drivers is not upstream's to keep:
  calls compare as a sorted list, and the claims of one request as a set;
- ``errors``: the errors PrepareResources / UnprepareResources / reconcile returned to pods
  (UIDs masked: the API server gives claims fresh UIDs in every run);
- ``cdi``: the CDI devices each container got (GetResources), grouped per device; the groups
  of a container compare as a sorted list, since from 1.36 upstream walks a container's claims
  in Go map order (``GetResources``: ``for claimName, requestNames := range claimRequests``);
- ``writes``: every write of dra_manager_state the kubelet made in the step, in order (the
  emulated store and upstream's program both journal each write's bytes as a ``checkpoint``
  event); the divergence names the first write that differs. The writes of pods started
  together by one ``parallel`` step interleave as their threads run, so there only their
  number is compared;
- ``checkpoint``: dra_manager_state at the end of the step (see :func:`canonical_checkpoint`);
- ``metrics``: the DRA metric families the kubelet exposes at the end of the step (see
  :func:`canonical_metrics`: names, label sets, gauge values and histogram counts; durations
  are not compared);
- ``outcome``: the step's own outcome (passed / failed / error).

After a ``parallel`` step that starts pods, devices are compared without who got which (see
:func:`_unassigned`).
"""

from __future__ import annotations

import bisect
import json
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
DRA_METHODS = ("NodePrepareResources", "NodeUnprepareResources")
ASPECTS = ("rpc", "errors", "cdi", "writes", "checkpoint", "metrics", "outcome")
METRIC_PREFIX = "dra_"
"""The metric families compared: the DRA manager's (``dra_operations_duration_seconds``,
``dra_grpc_operations_duration_seconds``, ``dra_resource_claims_in_use``)."""
POD_OPERATIONS = ("PrepareResources", "UnprepareResources", "ReconcileUnprepare")


@dataclass
class StepView:
    """What one step (0: set-up) did, in comparable form."""

    index: int
    name: str
    text: str = ""
    rpc: list[Any] = field(default_factory=list)
    errors: list[Any] = field(default_factory=list)
    cdi: list[Any] = field(default_factory=list)
    writes: list[Any] = field(default_factory=list)
    checkpoint: Any = None
    metrics: Any = None
    outcome: str = ""


@dataclass
class Divergence:
    """The first difference of a scenario."""

    step: int
    step_name: str
    step_text: str
    aspect: str
    emulated: Any
    upstream: Any

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _error_text(text: str) -> str:
    """An error in comparable form: UIDs and the run's node directory masked (each run has its
    own, e.g. ``/dev/shm/drasim-ab12``, in a socket path an error names), and gRPC-go's two texts
    for one expired deadline made one. Whether upstream's client reports its own context expiring
    ("context deadline exceeded") or the server's DEADLINE_EXCEEDED status ("Deadline Exceeded")
    is a race inside grpc-go when both share the deadline, not a choice of the DRA manager."""
    text = _NODE_DIR.sub("<node dir>", _UUID.sub("<uid>", text))
    return text.replace("desc = Deadline Exceeded", "desc = context deadline exceeded")


_NODE_DIR = re.compile(r"/[^\s\"':]*?/drasim-[a-z0-9]+(?=/)")


def canonical_checkpoint(text: str | None) -> Any:
    """A checkpoint file in comparable form: its entries sorted by namespace/name (upstream
    writes them in Go map order), each claim UID replaced by the claim's key (the API server
    gives each run fresh UIDs), and whether its checksum matches the content."""
    if text is None:
        return None
    try:
        document = json.loads(text)
        data = document["Data"]
        checksum_ok = zlib.crc32(data.encode("utf-8")) == document.get("Checksum")
        inner = json.loads(data)
    except (ValueError, KeyError, TypeError):
        # A damaged file (a scenario truncated it): its length follows the checksum's digits,
        # which follow the run's random claim UIDs, so compare a masked prefix.
        return {"unparsed": _UUID.sub("<uid>", text)[:120]}
    entries = inner.get("ClaimInfoStateList") or inner.get("Entries")
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, dict) and "ClaimUID" in entry:
                entry["ClaimUID"] = f"<uid of {entry.get('Namespace')}/{entry.get('ClaimName')}>"
        entries.sort(
            key=lambda e: (
                (str(e.get("Namespace")), str(e.get("ClaimName"))) if isinstance(e, dict) else ("", "")
            )
        )
    return {"data": inner, "checksumOk": checksum_ok}


def canonical_metrics(text: str) -> dict[str, Any]:
    """The DRA metric families of a Prometheus text exposition in comparable form.

    Per family (name starting with :data:`METRIC_PREFIX`): its type and its series, each a
    label set with a gauge's or counter's value, or a histogram's observation count. Skipped:
    histogram buckets and sums (durations, which differ run to run and between a Go and a
    Python process) and every family outside the DRA manager (process, Go runtime and gRPC
    library metrics are not the DRA manager's behaviour).
    """
    from drasim.upstream_kubelet.metrics import TextMetrics

    parsed = TextMetrics(text)
    families: dict[str, Any] = {}
    for name in parsed.names():
        if not name.startswith(METRIC_PREFIX):
            continue
        series = parsed.series(name)
        families[name] = {
            "type": parsed.kind(name),
            "series": sorted(([list(pair) for pair in labels], value) for labels, value in series.items()),
        }
    return families


def steps_of(journal: Iterable[Mapping[str, Any]]) -> list[StepView]:
    """The journal cut into steps; the checkpoint carries over from the step before."""
    steps = [StepView(0, "set-up")]
    starts = [float("-inf")]
    checkpoint: Any = None
    metrics: Any = None
    for event in journal:
        kind = event.get("kind")
        current = steps[-1]
        if kind == "step":
            starts.append(float(event.get("t", 0.0)))
            steps.append(
                StepView(
                    int(event.get("index", len(steps))),
                    str(event.get("name", "")),
                    str(event.get("text", "")),
                )
            )
            steps[-1].checkpoint = checkpoint
            steps[-1].metrics = metrics
        elif kind == "step-end":
            current.outcome = str(event.get("outcome", ""))
        elif kind == "rpc" and event.get("side") == "plugin":
            _add_call(steps, starts, event)
        elif kind == "kubelet":
            _add_kubelet_event(current, event)
        elif kind == "checkpoint" and "bytes" in event:
            current.writes.append(canonical_checkpoint(event.get("bytes")))
        elif kind == "metrics-snapshot":
            metrics = canonical_metrics(str(event.get("text") or ""))
            current.metrics = metrics
        elif kind == "checkpoint-file":
            checkpoint = canonical_checkpoint(event.get("bytes"))
            current.checkpoint = checkpoint
    for step in steps:
        step.rpc.sort()
        step.errors.sort()
        step.cdi.sort(key=repr)
    return steps


def _add_kubelet_event(step: StepView, event: Mapping[str, Any]) -> None:
    """An error returned to a pod, or the CDI devices a container got."""
    operation = event.get("operation")
    if operation in POD_OPERATIONS and event.get("error"):
        who = event.get("pod") or event.get("pod_uid")
        step.errors.append([operation, who, _error_text(str(event.get("error")))])
    elif operation == "GetResources":
        groups = event.get("cdi")
        if isinstance(groups, list):
            groups = sorted(groups, key=json.dumps)
        step.cdi.append([event.get("pod"), event.get("container"), groups])


def _add_call(steps: list[StepView], starts: list[float], event: Mapping[str, Any]) -> None:
    """A DRA call the driver recorded, in the step it began in."""
    method = str(event.get("method", "")).rsplit("/", 1)[-1]
    if method not in DRA_METHODS:
        return
    request = event.get("request") or {}
    listed = request.get("claims") or []
    claims = sorted(f"{c.get('namespace')}/{c.get('name')}" for c in listed if isinstance(c, Mapping))
    started = float(event.get("t", 0.0)) - float(event.get("duration") or 0.0)
    _step_at(steps, starts, started).rpc.append([method, event.get("driver"), claims])


def _step_at(steps: list[StepView], starts: list[float], t: float) -> StepView:
    """The step that was running at journal time ``t`` (a call belongs to the step it began in:
    a call the kubelet gave up on is recorded by the driver only when it ends)."""
    index = bisect.bisect_right(starts, t) - 1
    return steps[max(0, min(index, len(steps) - 1))]


def first_divergence(
    emulated: Sequence[Mapping[str, Any]], upstream: Sequence[Mapping[str, Any]]
) -> Divergence | None:
    """The first step and aspect where the two journals differ, or None when they agree."""
    left, right = steps_of(emulated), steps_of(upstream)
    raced = False
    for i in range(max(len(left), len(right))):
        if i >= len(left) or i >= len(right):
            step = left[i] if i < len(left) else right[i]
            gone = "(the run stopped before this step)"
            return Divergence(
                step.index,
                step.name,
                step.text,
                "outcome",
                left[i].outcome if i < len(left) else gone,
                right[i].outcome if i < len(right) else gone,
            )
        a, b = left[i], right[i]
        raced = raced or (a.name == "parallel" and "startPod" in a.text)
        for aspect in ASPECTS:
            x, y = getattr(a, aspect), getattr(b, aspect)
            if aspect == "writes":
                found = _first_differing_write(x, y, raced=raced, concurrent=a.name == "parallel")
                if found is not None:
                    return Divergence(a.index, a.name, a.text, aspect, found[0], found[1])
                continue
            if raced and aspect in ("cdi", "checkpoint"):
                x, y = _unassigned(aspect, x), _unassigned(aspect, y)
            if x != y:
                return Divergence(a.index, a.name, a.text, aspect, getattr(a, aspect), getattr(b, aspect))
    return None


def _first_differing_write(
    left: Sequence[Any], right: Sequence[Any], *, raced: bool, concurrent: bool
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The first of a step's checkpoint writes that differs, as each side's view of it
    (``write``: its number in the step, ``of``: the step's writes, ``checkpoint``: its content,
    None where that side made no such write); None when the writes agree."""
    if concurrent:
        if len(left) == len(right):
            return None
        note = "writes of concurrent pods: only their number is compared"
        return ({"writes": len(left), "note": note}, {"writes": len(right), "note": note})
    for k in range(max(len(left), len(right))):
        x = left[k] if k < len(left) else None
        y = right[k] if k < len(right) else None
        if raced:
            x, y = _unassigned("checkpoint", x), _unassigned("checkpoint", y)
        if x != y:
            return (
                {"write": k + 1, "of": len(left), "checkpoint": left[k] if k < len(left) else None},
                {"write": k + 1, "of": len(right), "checkpoint": right[k] if k < len(right) else None},
            )
    return None


def _unassigned(aspect: str, value: Any) -> Any:
    """Devices without the pod or claim that got them.

    Pods started by one ``parallel`` step are scheduled in whatever order their threads reach
    drasim's scheduler, so which claim gets which device is a race of the runner, not of the
    kubelet; from such a step on, both runs are compared on the devices handed out, not on who
    got which.
    """
    if aspect == "cdi":
        return sorted(json.dumps(group) for _pod, _ctr, groups in value for group in (groups or []))
    if not isinstance(value, dict) or "data" not in value:
        return value
    inner = json.loads(json.dumps(value["data"]))
    devices: list[str] = []
    for entry in inner.get("ClaimInfoStateList") or []:
        for driver, state in (entry.get("DriverState") or {}).items():
            for device in (state or {}).get("Devices") or []:
                devices.append(json.dumps([driver, device], sort_keys=True))
            if state:
                state["Devices"] = "<compared as a set>"
    return {"data": inner, "devices": sorted(devices), "checksumOk": value.get("checksumOk")}
