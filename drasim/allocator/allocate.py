"""``allocate``: fill a ResourceClaim's status as the scheduler would (resource.k8s.io/v1)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drasim.allocator.counters import counter_book
from drasim.allocator.errors import AllocationError
from drasim.allocator.inventory import Candidate, devices_in_use, gather_candidates
from drasim.allocator.requests import ALL, request_choices
from drasim.allocator.search import Option, Pick, build_options, search


def allocate(
    claim: dict[str, Any],
    *,
    slices: Sequence[Mapping[str, Any]],
    classes: Sequence[Mapping[str, Any]],
    allocated_claims: Sequence[Mapping[str, Any]],
    node_name: str,
    pods: Sequence[Mapping[str, Any]],
    node_labels: Mapping[str, str] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Return a copy of ``claim`` with ``status.allocation`` and ``status.reservedFor`` filled.

    Pure: reads only its arguments. ``allocated_claims`` are the other claims in
    the store (their allocations make devices unavailable; the claim itself is
    skipped if present). ``node_labels`` lets ``nodeSelector`` slices match on
    labels; ``metadata.name`` is always matched against ``node_name``. ``cancelled`` is looked
    at during a long search (a stopped run must not leave a search burning CPU). A claim
    that is already allocated keeps its allocation and only gains reservations.

    Raises :class:`AllocationError` when the claim cannot be allocated on the node.
    """
    meta = claim.get("metadata") or {}
    ref = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    result = copy.deepcopy(claim)
    status = result.get("status") or {}
    if not status.get("allocation"):
        try:
            status["allocation"] = _allocation(
                claim,
                slices,
                classes,
                allocated_claims,
                node=(node_name, dict(node_labels or {})),
                cancelled=cancelled,
            )
        except AllocationError as exc:
            raise AllocationError(f"cannot allocate claim {ref}: {exc}") from None
    _reserve(status, pods, meta)
    result["status"] = status
    return result


def _allocation(
    claim: Mapping[str, Any],
    slices: Sequence[Mapping[str, Any]],
    classes: Sequence[Mapping[str, Any]],
    allocated_claims: Sequence[Mapping[str, Any]],
    *,
    node: tuple[str, dict[str, str]],
    cancelled: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    node_name, node_labels = node
    devices_spec = (claim.get("spec") or {}).get("devices") or {}
    by_name = {(c.get("metadata") or {}).get("name", ""): c for c in classes}
    candidates = gather_candidates(slices, node_name, node_labels)
    in_use = devices_in_use(allocated_claims, claim)
    # Compile every request (and its selectors) before looking at any device.
    choices = [request_choices(request, by_name) for request in devices_spec.get("requests") or []]
    counters = counter_book(slices, in_use)
    per_request = [build_options(options, candidates, in_use, counters) for options in choices]
    picks = search(per_request, devices_spec.get("constraints") or [], counters, cancelled=cancelled)
    if picks is None:
        raise AllocationError(_explain(per_request, node_name))
    allocation: dict[str, Any] = {"devices": _device_result(picks, devices_spec)}
    selector = _node_selector([cand for _, cand in picks], node_name)
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _device_result(picks: list[Pick], devices_spec: Mapping[str, Any]) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    configs: list[dict[str, Any]] = []
    configured: set[str] = set()
    for choice, cand in picks:
        entry: dict[str, Any] = {
            "request": choice.result_name,
            "driver": cand.driver,
            "pool": cand.pool,
            "device": cand.name,
        }
        if choice.admin:
            entry["adminAccess"] = True
        if choice.tolerations:
            entry["tolerations"] = copy.deepcopy(list(choice.tolerations))
        for key in ("bindingConditions", "bindingFailureConditions"):
            if cand.device.get(key):
                entry[key] = list(cand.device[key])
        results.append(entry)
        if choice.result_name not in configured:
            configured.add(choice.result_name)
            for config in (choice.device_class.get("spec") or {}).get("config") or []:
                configs.append(
                    {"source": "FromClass", "requests": [choice.result_name], **copy.deepcopy(config)}
                )
    for config in devices_spec.get("config") or []:
        configs.append({"source": "FromClaim", **copy.deepcopy(dict(config))})
    out: dict[str, Any] = {"results": results} if results else {}
    if configs:
        out["config"] = configs
    return out


def _node_selector(devices: list[Candidate], node_name: str) -> dict[str, Any] | None:
    """Where the allocation is usable; node-local devices pin it to the node by name."""
    by_name = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }
    if any(c.node_local for c in devices):
        return by_name
    selectors = [c.node_selector for c in devices if c.node_selector is not None]
    if not selectors:
        return None
    if all(s == selectors[0] for s in selectors):
        return copy.deepcopy(dict(selectors[0]))
    return by_name


def _explain(per_request: list[list[Option]], node_name: str) -> str:
    for options in per_request:
        if any(o.feasible_alone() for o in options):
            continue
        if len(options) == 1:
            return _describe(options[0], node_name)
        reasons = "; ".join(_describe(o, node_name) for o in options)
        return f"request {options[0].choice.request}: no subrequest can be satisfied: {reasons}"
    return (
        f"the requests together need more devices than are available on node {node_name}, "
        "or the claim's constraints or the pools' shared counters cannot be met by any combination"
    )


def _describe(option: Option, node_name: str) -> str:
    choice = option.choice
    held = [f"{cand.name} used by {owner}" for cand, owner in option.used]
    held += [f"{cand.name} blocked by exhausted shared counters" for cand in option.blocked]
    used_note = f" ({', '.join(held)})" if held else ""
    if choice.mode == ALL:
        if held:
            return (
                f"request {choice.result_name} needs all devices of class {choice.class_name} on node "
                f"{node_name}, but {len(held)} are unavailable{used_note}"
            )
        wanted = f"request {choice.result_name} needs all devices of class {choice.class_name}"
        if not option.free:
            return f"{wanted}, none on node {node_name}"
        return f"{wanted}, but pools {', '.join(option.incomplete_pools)} are incomplete"
    plural = "s" if choice.count != 1 else ""
    return (
        f"request {choice.result_name} needs {choice.count} device{plural} of class {choice.class_name}, "
        f"{len(option.free)} available on node {node_name}{used_note}"
    )


def _reserve(
    status: dict[str, Any], pods: Sequence[Mapping[str, Any]], claim_meta: Mapping[str, Any]
) -> None:
    if not pods:
        return
    reserved: list[dict[str, Any]] = status.setdefault("reservedFor", [])
    known = {r.get("uid") for r in reserved}
    for pod in pods:
        meta = pod.get("metadata") or {}
        name, uid = meta.get("name", ""), meta.get("uid", "")
        if not uid:
            raise AllocationError(f"cannot reserve claim for pod {name!r}: the pod has no metadata.uid")
        namespace = meta.get("namespace", claim_meta.get("namespace", ""))
        if namespace != claim_meta.get("namespace", ""):
            raise AllocationError(
                f"cannot reserve claim {claim_meta.get('namespace', '')}/{claim_meta.get('name', '')} "
                f"for pod {namespace}/{name}: a claim can only be used by pods in its own namespace"
            )
        if uid not in known:
            reserved.append({"resource": "pods", "name": name, "uid": uid})
            known.add(uid)
