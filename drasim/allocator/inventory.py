"""What the allocator can choose from: devices of ResourceSlices visible on a node.

Mirrors the scheduler's pool gathering (upstream
``staging/src/k8s.io/dynamic-resource-allocation/structured/pools.go``): only the
slices of a pool's newest generation count, a pool is complete when all its
``resourceSliceCount`` slices are present, and a device is visible on the node
through the slice's (or, with ``perDeviceNodeSelection``, the device's)
``nodeName``, ``allNodes`` or ``nodeSelector``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from drasim.allocator.cel import device_env

DeviceKey = tuple[str, str, str]


@dataclass(frozen=True)
class Candidate:
    """One device the allocator may pick, and how it is reachable from the node."""

    driver: str
    pool: str
    name: str
    device: Mapping[str, Any] = field(repr=False)
    env: Mapping[str, Any] = field(repr=False)
    node_local: bool
    node_selector: Mapping[str, Any] | None = field(repr=False)
    pool_complete: bool

    @property
    def key(self) -> DeviceKey:
        """``(driver, pool, device)``, the identity of a device cluster-wide."""
        return (self.driver, self.pool, self.name)


def gather_candidates(
    slices: Iterable[Mapping[str, Any]], node_name: str, node_labels: Mapping[str, str]
) -> list[Candidate]:
    """Every device visible on ``node_name``, in a stable order (driver, pool, slice name, index)."""
    out: list[Candidate] = []
    for pool in newest_pools(slices):
        driver, pool_name, current, complete = pool.driver, pool.name, pool.slices, pool.complete
        seen: set[str] = set()
        for item in current:
            for device in map(flat_device, item["spec"].get("devices") or []):
                name = device.get("name", "")
                if name in seen:
                    continue
                seen.add(name)
                candidate = _visible(
                    driver, pool_name, item["spec"], device, node=(node_name, node_labels), complete=complete
                )
                if candidate is not None:
                    out.append(candidate)
    return out


def flat_device(device: Mapping[str, Any]) -> Mapping[str, Any]:
    """A device in the v1 layout; v1beta1 slices nest the fields under ``basic``."""
    basic = device.get("basic")
    if basic is None:
        return device
    return {**basic, "name": device.get("name", "")}


@dataclass(frozen=True)
class Pool:
    """The slices of one pool's newest generation, sorted by slice name."""

    driver: str
    name: str
    slices: list[Mapping[str, Any]]
    complete: bool


def newest_pools(slices: Iterable[Mapping[str, Any]]) -> list[Pool]:
    """Group slices by (driver, pool name) and keep each pool's newest generation, in a stable order."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for item in slices:
        spec = item.get("spec") or {}
        pool = spec.get("pool") or {}
        groups.setdefault((spec.get("driver", ""), pool.get("name", "")), []).append(item)
    pools: list[Pool] = []
    for (driver, pool_name), members in sorted(groups.items()):
        newest = max(_generation(s) for s in members)
        current = sorted(
            (s for s in members if _generation(s) == newest),
            key=lambda s: (s.get("metadata") or {}).get("name", ""),
        )
        wanted = (current[0]["spec"].get("pool") or {}).get("resourceSliceCount", 1)
        pools.append(Pool(driver, pool_name, current, len(current) >= wanted))
    return pools


def _generation(item: Mapping[str, Any]) -> int:
    return int(((item.get("spec") or {}).get("pool") or {}).get("generation", 0))


def _visible(
    driver: str,
    pool: str,
    spec: Mapping[str, Any],
    device: Mapping[str, Any],
    *,
    node: tuple[str, Mapping[str, str]],
    complete: bool,
) -> Candidate | None:
    node_name, node_labels = node
    where = device if spec.get("perDeviceNodeSelection") else spec
    selector = where.get("nodeSelector")
    if where.get("nodeName"):
        if where["nodeName"] != node_name:
            return None
    elif not where.get("allNodes") and (
        selector is None or not node_selector_matches(selector, node_name, node_labels)
    ):
        return None
    return Candidate(
        driver=driver,
        pool=pool,
        name=device.get("name", ""),
        device=device,
        env=device_env(driver, device),
        node_local=bool(where.get("nodeName")) or bool(device.get("bindsToNode")),
        node_selector=selector,
        pool_complete=complete,
    )


def node_selector_matches(selector: Mapping[str, Any], node_name: str, labels: Mapping[str, str]) -> bool:
    """core/v1 NodeSelector semantics: terms are ORed, requirements within a term ANDed."""
    for term in selector.get("nodeSelectorTerms") or []:
        fields = {"metadata.name": node_name}
        exprs = [(r, labels) for r in term.get("matchExpressions") or []]
        exprs += [(r, fields) for r in term.get("matchFields") or []]
        if exprs and all(_requirement(r, values) for r, values in exprs):
            return True
    return False


def _requirement(req: Mapping[str, Any], values: Mapping[str, str]) -> bool:  # noqa: PLR0911
    key, op, wanted = req.get("key", ""), req.get("operator", ""), req.get("values") or []
    present = key in values
    if op == "In":
        return present and values[key] in wanted
    if op == "NotIn":
        return not present or values[key] not in wanted
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(wanted) == 1:
        try:
            have, limit = int(values[key]), int(wanted[0])
        except ValueError:
            return False
        return have > limit if op == "Gt" else have < limit
    return False


def devices_in_use(claims: Iterable[Mapping[str, Any]], skip: Mapping[str, Any]) -> dict[DeviceKey, str]:
    """Devices allocated to other claims -> ``namespace/name`` of the claim holding them.

    Results with ``adminAccess`` do not block other claims (upstream semantics).
    ``skip`` is the claim being allocated; it is recognised by uid or namespace/name.
    """
    skip_meta = skip.get("metadata") or {}
    used: dict[DeviceKey, str] = {}
    for claim in claims:
        meta = claim.get("metadata") or {}
        if _same(meta, skip_meta):
            continue
        owner = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or []:
            if result.get("adminAccess"):
                continue
            used.setdefault(
                (result.get("driver", ""), result.get("pool", ""), result.get("device", "")), owner
            )
    return used


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    if a.get("uid") and b.get("uid"):
        return bool(a["uid"] == b["uid"])
    return (a.get("namespace"), a.get("name")) == (b.get("namespace"), b.get("name"))
