"""What a step handler gets besides the world: its position, and how it reports failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drasim.errors import ConfigError, DrasimError


class StepFailure(DrasimError):  # noqa: N818 - reads better in handlers: raise StepFailure(...)
    """A step or expectation did not hold.

    ``expected``/``actual`` are plain data (rendered as a diff in reports);
    ``similar`` holds journal events close to what was expected.
    """

    def __init__(
        self,
        message: str,
        *,
        expected: Any = None,
        actual: Any = None,
        similar: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.actual = actual
        self.similar = similar or []


@dataclass
class StepContext:
    """The running step: index (0-based), YAML name, and the journal windows it may use.

    ``step_marks[i]`` is the journal sequence number when step ``i`` started;
    ``marks`` maps ``mark`` step names to sequence numbers.
    """

    index: int
    name: str
    step_marks: list[int] = field(default_factory=list)
    step_names: list[str] = field(default_factory=list)
    marks: dict[str, int] = field(default_factory=dict)

    def since(self, window: str) -> int:
        """The journal sequence number a ``since`` window starts after.

        ``start`` → 0; ``previous`` → where the previous step with the same YAML name
        started (0 if none); otherwise the name of an earlier ``mark`` step.
        """
        if window in ("", "start"):
            return 0
        if window == "previous":
            for i in range(self.index - 1, -1, -1):
                if i < len(self.step_names) and self.step_names[i] == self.name:
                    return self.step_marks[i]
            return 0
        if window in self.marks:
            return self.marks[window]
        known = ", ".join(sorted(self.marks)) or "none yet"
        msg = f"since: {window!r} is not 'start', 'previous' or an earlier mark (marks: {known})"
        raise ConfigError(msg)
