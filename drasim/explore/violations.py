"""What an invariant violation is, and one exception class per invariant.

Each invariant raises its own exception class so that hypothesis, which tells
failures apart by exception type and origin, shrinks each broken invariant on its
own instead of drifting from one to another while it minimises a sequence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Invariant name -> what it promises. The names appear in reports and reproducers.
INVARIANTS: dict[str, str] = {
    "unprepared-once": (
        "every claim the driver prepared is unprepared exactly once after its last pod went "
        "(checked after the final settle: faults cleared, pods deleted, reconcile, clock advanced); "
        "one extra unprepare is allowed per kubelet crash at unprepare:after-rpc in between"
    ),
    "no-unprepare-in-use": (
        "no NodeUnprepareResources for a claim while a Running pod (Running before and after the step) "
        "uses it"
    ),
    "checkpoint-matches-cache": (
        "while the kubelet is idle, the checkpoint on disk holds the same claims as the manager's cache, "
        "the same devices for claims marked prepared, and every pod reference of the cache"
    ),
    "unique-cdi-ids": "no container is handed the same CDI device ID twice",
    "idempotent-prepare": (
        "the driver answers a repeated NodePrepareResources for a claim UID with the same devices "
        "(until that claim is unprepared)"
    ),
    "all-released": (
        "after the final settle the kubelet's cache and checkpoint are empty and no CDI spec file is left"
    ),
    "fault-free-succeeds": (
        "every PrepareResources / UnprepareResources / reconcile unprepare during a step that started "
        "with no plugin fault armed, the plugin running, registered and connected, the kubelet up and no "
        "prepared claim the API server forgot succeeds (steps that stop, start or crash the kubelet or "
        "the plugin, or add faults, are not judged)"
    ),
    "claim-errors-reported": (
        "when the plugin is made to fail a claim (a per-claim error fault fired), the kubelet sees that "
        "call fail: an error for the claim in the reply, or a failed call"
    ),
    "cdi-devices-exist": (
        "every CDI device ID in a successful NodePrepareResources reply names a device of a valid CDI "
        "spec in the CDI directory when the step ends (unless the claim was unprepared meanwhile)"
    ),
    "slices-republished": (
        "a driver process publishes its ResourceSlices again within 10 s of every (re)start "
        "(no ``plugin-process no-slices`` event)"
    ),
    "explorer-error": "a generated step raised an error the explorer did not expect (a drasim bug)",
}


@dataclass(frozen=True)
class Violation:
    """One broken invariant: which, a sentence, the data behind it, and the step after which it showed."""

    invariant: str
    message: str
    data: dict[str, Any] = field(default_factory=dict)
    step_index: int | None = None
    """0-based index into the executed steps; ``None`` for end-of-run checks."""

    def describe(self) -> str:
        """``invariant: message``."""
        return f"{self.invariant}: {self.message}"


class InvariantViolation(AssertionError):  # noqa: N818 - reads as what happened
    """Raised inside an exploration example; carries the :class:`Violation`."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(violation.describe())
        self.violation = violation


def _class_name(invariant: str) -> str:
    return "".join(part.capitalize() for part in invariant.split("-")) + "Violation"


VIOLATION_TYPES: dict[str, type[InvariantViolation]] = {
    name: type(_class_name(name), (InvariantViolation,), {"__module__": __name__}) for name in INVARIANTS
}


def violation_error(violation: Violation) -> InvariantViolation:
    """The exception of the violation's own class."""
    return VIOLATION_TYPES[violation.invariant](violation)
