"""First-fit search with backtracking over a claim's requests.

Like the scheduler's structured allocator (upstream
``staging/src/k8s.io/dynamic-resource-allocation/structured/allocator.go``), the
search takes requests in order and devices in a stable order, tries a
``firstAvailable`` request's subrequests in order, and backtracks when a later
request or a constraint (``matchAttribute``, ``distinctAttribute``) cannot be
met. The first combination found wins; there is no scoring.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from drasim.allocator.counters import CounterBook
from drasim.allocator.errors import AllocationError
from drasim.allocator.inventory import Candidate, DeviceKey
from drasim.allocator.requests import ALL, Choice

Pick = tuple[Choice, Candidate]
MAX_WORK = 500_000
"""Devices the search may place in trial combinations before it gives up.

Counted in devices, not combinations: a combination of a 32-device request costs 32 times one
of a single device, so the bound is on CPU time (one to two seconds on a slow machine) whatever
the claim's size. Upstream bounds its allocator by time instead (the scheduler's filter
timeout, DRASchedulerFilterTimeout); a deterministic count keeps drasim's outcome independent
of the machine's speed."""
CANCEL_EVERY = 256
"""Combinations tried between two looks at the caller's ``cancelled`` callback."""


@dataclass
class Option:
    """A choice with its eligible devices: ``free``, ``used`` by other claims, or ``blocked``.

    Blocked devices are free but their shared counters are already used up.
    """

    choice: Choice
    free: list[Candidate]
    used: list[tuple[Candidate, str]] = field(default_factory=list)
    blocked: list[Candidate] = field(default_factory=list)

    @property
    def incomplete_pools(self) -> list[str]:
        return sorted({f"{c.driver}/{c.pool}" for c in self.free if not c.pool_complete})

    def feasible_alone(self) -> bool:
        """Whether this option could be met if it were the claim's only request."""
        if self.choice.mode == ALL:
            return bool(self.free) and not self.used and not self.blocked and not self.incomplete_pools
        return len(self.free) >= self.choice.count


def build_options(
    choices: Sequence[Choice],
    candidates: Sequence[Candidate],
    in_use: Mapping[DeviceKey, str],
    counters: CounterBook,
) -> list[Option]:
    """Split each choice's eligible devices into free, already-allocated and counter-blocked ones."""
    options: list[Option] = []
    for choice in choices:
        option = Option(choice, [])
        for cand in candidates:
            if not choice.eligible(cand):
                continue
            owner = in_use.get(cand.key)
            if choice.admin:
                option.free.append(cand)
            elif owner is not None:
                option.used.append((cand, owner))
            elif not counters.fits([cand.key]):
                option.blocked.append(cand)
            else:
                option.free.append(cand)
        options.append(option)
    return options


class _Budget:
    def __init__(self, cancelled: Callable[[], bool] | None) -> None:
        self.work = 0
        self.tries = 0
        self.cancelled = cancelled

    def spend(self, devices: int) -> None:
        self.work += max(1, devices)
        self.tries += 1
        if self.work > MAX_WORK:
            raise AllocationError(
                f"gave up after trying {self.tries} device combinations ({MAX_WORK} devices placed)"
            )
        if self.cancelled is not None and self.tries % CANCEL_EVERY == 0 and self.cancelled():
            raise AllocationError("the allocation was cancelled (the run was stopped)")


def search(
    per_request: Sequence[Sequence[Option]],
    constraints: Sequence[Mapping[str, Any]],
    counters: CounterBook,
    *,
    cancelled: Callable[[], bool] | None = None,
) -> list[Pick] | None:
    """The first combination of devices meeting every request, constraint and shared counter, or None.

    Raises :class:`AllocationError` when the search passes :data:`MAX_WORK`, or when
    ``cancelled`` (looked at every :data:`CANCEL_EVERY` combinations) returns true.
    """
    if not all(any(o.feasible_alone() for o in options) for options in per_request):
        return None  # some request cannot be met even alone: no combination of the others helps
    return _search(per_request, 0, [], _Rules(constraints, counters), _Budget(cancelled))


@dataclass(frozen=True)
class _Rules:
    constraints: Sequence[Mapping[str, Any]]
    counters: CounterBook

    def hold(self, picked: Sequence[Pick]) -> bool:
        if not constraints_hold(picked, self.constraints):
            return False
        return self.counters.fits(cand.key for choice, cand in picked if not choice.admin)


def _search(
    per_request: Sequence[Sequence[Option]],
    index: int,
    picked: list[Pick],
    rules: _Rules,
    budget: _Budget,
) -> list[Pick] | None:
    if index == len(per_request):
        return list(picked)
    taken = {cand.key for _, cand in picked}
    for option in per_request[index]:
        for devices in _device_sets(option, taken):
            attempt = picked + [(option.choice, cand) for cand in devices]
            budget.spend(len(attempt))
            if not rules.hold(attempt):
                continue
            found = _search(per_request, index + 1, attempt, rules, budget)
            if found is not None:
                return found
    return None


def _device_sets(option: Option, taken: set[DeviceKey]) -> Iterator[tuple[Candidate, ...]]:
    available = [c for c in option.free if c.key not in taken]
    if option.choice.mode == ALL:
        if option.feasible_alone() and len(available) == len(option.free):
            yield tuple(available)
        return
    yield from combinations(available, option.choice.count)


def constraints_hold(picked: Sequence[Pick], constraints: Sequence[Mapping[str, Any]]) -> bool:
    """``matchAttribute``: same value on all devices in scope; ``distinctAttribute``: all different."""
    for constraint in constraints:
        scope = constraint.get("requests") or []
        devices = [cand for choice, cand in picked if _in_scope(choice, scope)]
        for mode in ("matchAttribute", "distinctAttribute"):
            name = constraint.get(mode)
            if not name or not devices:
                continue
            values = [attribute(cand, name) for cand in devices]
            if any(v is None for v in values):
                return False
            distinct = len({repr(v) for v in values})
            if (mode == "matchAttribute" and distinct != 1) or (
                mode == "distinctAttribute" and distinct != len(values)
            ):
                return False
    return True


def _in_scope(choice: Choice, scope: Sequence[str]) -> bool:
    return not scope or choice.result_name in scope or choice.request in scope


def attribute(cand: Candidate, qualified: str) -> Any:
    """A device attribute by fully qualified name (``domain/name``), or None."""
    domain, _, name = qualified.rpartition("/")
    return cand.env["attributes"].get(domain or cand.driver, {}).get(name)
