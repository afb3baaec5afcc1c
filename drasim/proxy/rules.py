"""The proxy's fault rules: which rule a call meets, and the calls a rule holds.

The same :class:`drasim.faults.PluginFault` rules a scenario gives the fake plugin, with the
same order and counting: the first rule that matches a call (its ``rpc``, its ``claim``) and
still has uses left applies, after letting ``after`` matching calls through. A rule's
``delay`` is in real seconds here (the runner scales it before it gets here).

Holding: ``hang`` and ``block`` keep a call in the proxy until :meth:`FaultRules.release`
(an ``unblock`` step, ``clearFaults``) or :meth:`FaultRules.stop`; a ``hang`` also ends when
the caller gives up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from drasim.faults import ANY_RPC, PluginFault
from drasim.values import ClaimRef


def claim_selected(selector: str, claim: ClaimRef) -> bool:
    """``namespace/name`` or a UID selects a claim; empty selects every claim."""
    return not selector or selector in (claim.uid, f"{claim.namespace}/{claim.name}")


def rule_matches(rule: PluginFault, rpc: str, claims: Sequence[ClaimRef]) -> bool:
    """Whether ``rule`` applies to a call of ``rpc`` that carries ``claims``."""
    if rule.rpc not in (ANY_RPC, rpc):
        return False
    return not rule.claim or any(claim_selected(rule.claim, c) for c in claims)


class FaultRules:
    """Ordered rules with their counters, and the calls they hold (thread-safe)."""

    def __init__(self, rules: Sequence[PluginFault] = ()) -> None:
        self._cond = threading.Condition()
        self._rules: list[PluginFault] = []
        self._seen: list[int] = []
        self._fired: list[int] = []
        self._generation = 0
        self._held = 0
        self._stopped = False
        self.extend(rules)

    def extend(self, rules: Sequence[PluginFault]) -> None:
        """Append rules; the rules already there keep their counters."""
        with self._cond:
            self._rules.extend(rules)
            self._seen.extend(0 for _ in rules)
            self._fired.extend(0 for _ in rules)

    def clear(self) -> None:
        """Forget every rule and release every held call."""
        with self._cond:
            self._rules, self._seen, self._fired = [], [], []
        self.release()

    def select(self, rpc: str, claims: Sequence[ClaimRef] = ()) -> PluginFault | None:
        """The rule that applies to this call, if any; uses one of its uses."""
        with self._cond:
            if not self._rules:
                return None
            for i, rule in enumerate(self._rules):
                if not rule_matches(rule, rpc, claims):
                    continue
                if rule.times and self._fired[i] >= rule.times:
                    continue
                self._seen[i] += 1
                if self._seen[i] <= rule.after:
                    continue
                self._fired[i] += 1
                return rule
        return None

    def count(self) -> int:
        """How many rules there are."""
        with self._cond:
            return len(self._rules)

    def fired(self) -> list[int]:
        """How often each rule applied, in order."""
        with self._cond:
            return list(self._fired)

    # ------------------------------------------------------------------ holding calls
    def hold(self, cancelled: Callable[[], bool] | None = None) -> bool:
        """Hold the calling thread until released or stopped, or (with ``cancelled``) until the
        caller gave up. True when the caller gave up first."""
        with self._cond:
            generation = self._generation
            self._held += 1
            self._cond.notify_all()
            try:
                self._cond.wait_for(
                    lambda: (
                        self._generation != generation
                        or self._stopped
                        or (cancelled is not None and cancelled())
                    )
                )
                return cancelled is not None and cancelled() and self._generation == generation
            finally:
                self._held -= 1
                self._cond.notify_all()

    def wake(self) -> None:
        """Let held calls look again at whether their caller gave up."""
        with self._cond:
            self._cond.notify_all()

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds`` (a ``delay``), or less when the proxy stops."""
        with self._cond:
            self._cond.wait_for(lambda: self._stopped, timeout=seconds)

    def release(self) -> None:
        """Let every held call go on."""
        with self._cond:
            self._generation += 1
            self._cond.notify_all()

    def held(self) -> int:
        """How many calls are held right now."""
        with self._cond:
            return self._held

    def wait_held(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Wait until at least ``count`` calls are held."""
        with self._cond:
            return self._cond.wait_for(lambda: self._held >= count, timeout)

    def stop(self) -> None:
        """Release everything for good (the proxy stops)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def restart(self) -> None:
        """Hold calls again after :meth:`stop`."""
        with self._cond:
            self._stopped = False

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called (and not undone)."""
        with self._cond:
            return self._stopped
