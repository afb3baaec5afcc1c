"""The step registry: YAML step name -> dataclass (kwok's dispatch-by-name ``configHandlers``).

Each step in ``spec.steps`` is a mapping with exactly one key. The key is looked up in
:data:`STEP_TYPES`; the value is decoded into that entry's dataclass and wrapped in a
:class:`Step`, which also remembers where in which file the step was written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

T = TypeVar("T")

StepKind = Literal["action", "expectation"]


@dataclass(frozen=True)
class StepType:
    """How one step name is decoded.

    ``shorthand`` names the field a non-mapping value fills (``stopPod: a`` means
    ``stopPod: {pod: a}``); ``mapping_field`` names a dict field that takes the whole
    mapping (``expectMightNeedUnprepare: {a: true}``).
    """

    name: str
    cls: type
    kind: StepKind
    shorthand: str | None = None
    mapping_field: str | None = None

    @property
    def summary(self) -> str:
        """The first paragraph of the class docstring, on one line."""
        text = (self.cls.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(text.split())


STEP_TYPES: dict[str, StepType] = {}


def step(
    name: str, *, shorthand: str | None = None, mapping_field: str | None = None
) -> Callable[[type[T]], type[T]]:
    """Register a step dataclass under its YAML name. Names starting with ``expect`` are expectations."""

    def register(cls: type[T]) -> type[T]:
        kind: StepKind = "expectation" if name.startswith("expect") else "action"
        STEP_TYPES[name] = StepType(name, cls, kind, shorthand, mapping_field)
        return cls

    return register


@dataclass(frozen=True, kw_only=True)
class Step:
    """One decoded step: its YAML name, its arguments and where it was written.

    ``args`` is an instance of ``STEP_TYPES[name].cls``; a runner dispatches on its type.
    """

    name: str
    args: object
    file: str = ""
    line: int = 0
    column: int = 0

    @property
    def kind(self) -> StepKind:
        """``action`` or ``expectation``."""
        return STEP_TYPES[self.name].kind

    @property
    def location(self) -> str:
        """``file:line:column`` of the step's key, for reports."""
        return f"{self.file}:{self.line}:{self.column}"
