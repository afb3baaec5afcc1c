"""Turn a claim's device requests into the choices the search tries.

A request with ``exactly`` has one choice; a request with ``firstAvailable`` has
one choice per subrequest, tried in order, and its results are named
``<request>/<subrequest>`` (upstream ``DeviceRequestAllocationResult.request``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drasim.allocator.cel import Selector, SelectorRuntimeError, compile_selector
from drasim.allocator.errors import AllocationError
from drasim.allocator.inventory import Candidate
from drasim.allocator.quantity import parse_quantity

EXACT_COUNT = "ExactCount"
ALL = "All"
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class Choice:
    """One way to satisfy a request: the request itself, or one of its subrequests."""

    request: str
    result_name: str
    class_name: str
    device_class: Mapping[str, Any] = field(repr=False)
    class_selectors: tuple[Selector, ...] = field(repr=False)
    selectors: tuple[Selector, ...] = field(repr=False)
    mode: str
    count: int
    admin: bool
    tolerations: tuple[Mapping[str, Any], ...] = field(repr=False)
    capacity: Mapping[str, str] = field(repr=False)

    def eligible(self, cand: Candidate) -> bool:
        """Class and request selectors match, taints are tolerated, capacity is enough."""
        for selector in (*self.class_selectors, *self.selectors):
            try:
                if not selector.matches(cand.env):
                    return False
            except SelectorRuntimeError as exc:
                raise AllocationError(
                    f"selector {selector.expression!r} (request {self.result_name}) failed on device "
                    f"{cand.driver}/{cand.pool}/{cand.name}: {exc}"
                ) from None
        return self._tolerates(cand) and self._has_capacity(cand)

    def _tolerates(self, cand: Candidate) -> bool:
        for taint in cand.device.get("taints") or []:
            if taint.get("effect") in _BLOCKING_EFFECTS and not any(
                tolerates(t, taint) for t in self.tolerations
            ):
                return False
        return True

    def _has_capacity(self, cand: Candidate) -> bool:
        for key, wanted in self.capacity.items():
            domain, _, name = key.rpartition("/")
            have = cand.env["capacity"].get(domain or cand.driver, {}).get(name)
            if have is None or have.value < parse_quantity(str(wanted)):
                return False
        return True


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Upstream DeviceToleration matching (key, operator Exists/Equal, value, effect)."""
    effect = toleration.get("effect", "")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key", "")
    if key and key != taint.get("key"):
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return True
    return bool(key) and toleration.get("value", "") == taint.get("value", "")


def request_choices(request: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]]) -> list[Choice]:
    """The choices for one ``spec.devices.requests[]`` entry, in the order they are tried."""
    name = request.get("name", "")
    exactly = request.get("exactly")
    subrequests = request.get("firstAvailable") or []
    if exactly is not None:
        return [_choice(name, name, exactly, classes, admin=bool(exactly.get("adminAccess")))]
    if subrequests:
        return [
            _choice(name, f"{name}/{sub.get('name', '')}", sub, classes, admin=False) for sub in subrequests
        ]
    raise AllocationError(f"request {name} sets neither exactly nor firstAvailable")


def _choice(
    request: str,
    result_name: str,
    spec: Mapping[str, Any],
    classes: Mapping[str, Mapping[str, Any]],
    *,
    admin: bool,
) -> Choice:
    class_name = spec.get("deviceClassName", "")
    device_class = classes.get(class_name)
    if device_class is None:
        raise AllocationError(f"request {result_name}: device class {class_name!r} not found")
    mode = spec.get("allocationMode") or EXACT_COUNT
    if mode not in (EXACT_COUNT, ALL):
        raise AllocationError(f"request {result_name}: unsupported allocationMode {mode!r}")
    count = int(spec.get("count") or 1)
    if mode == EXACT_COUNT and count < 1:
        raise AllocationError(f"request {result_name}: count must be at least 1, got {count}")
    return Choice(
        request=request,
        result_name=result_name,
        class_name=class_name,
        device_class=device_class,
        class_selectors=_selectors((device_class.get("spec") or {}).get("selectors")),
        selectors=_selectors(spec.get("selectors")),
        mode=mode,
        count=count,
        admin=admin,
        tolerations=tuple(spec.get("tolerations") or ()),
        capacity=dict((spec.get("capacity") or {}).get("requests") or {}),
    )


def _selectors(entries: Any) -> tuple[Selector, ...]:
    out: list[Selector] = []
    for entry in entries or []:
        cel = (entry or {}).get("cel")
        if cel is None:
            raise AllocationError(f"selector not supported: {entry!r} (only cel selectors exist)")
        out.append(compile_selector(cel.get("expression", "")))
    return tuple(out)
