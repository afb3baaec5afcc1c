"""The step registry: YAML step name -> dataclass (kwok's dispatch-by-name ``configHandlers``).

Each step in ``spec.steps`` is a mapping with exactly one key. The key is looked up in
:data:`STEP_TYPES`; the value is decoded into that entry's dataclass and wrapped in a
:class:`Step`, which also remembers where in which file the step was written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
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

    The traits say what the step does, in one place for every reader (scenario validation,
    explore's oracle and reproducer): ``prepares`` / ``unprepares``: the kubelet may run
    PrepareResources / UnprepareResources during it; ``operation``: the step's own result is
    that kubelet operation (its ``expectError`` is the operation's error); ``pod_field``: its
    ``pod`` field names a pod started earlier; ``lifecycle``: it changes what may fail while it
    runs (kubelet or plugin restarts, faults); ``starts_plugin``: it (re)starts driver processes,
    which then register with the kubelet; ``needs``: the capabilities of the driver under test
    the step needs when it targets that driver (its ``driver`` field empty or naming it), each
    with the reason a skipped scenario gives (``{where}`` is the step and its location;
    :mod:`drasim.conformance.requirements` reads them).
    """

    name: str
    cls: type
    kind: StepKind
    shorthand: str | None = None
    mapping_field: str | None = None
    prepares: bool = False
    unprepares: bool = False
    operation: bool = False
    pod_field: bool = False
    lifecycle: bool = False
    starts_plugin: bool = False
    needs: tuple[tuple[str, str], ...] = ()

    @property
    def summary(self) -> str:
        """The first paragraph of the class docstring, on one line."""
        text = (self.cls.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(text.split())


STEP_TYPES: dict[str, StepType] = {}


def step(
    name: str,
    *,
    shorthand: str | None = None,
    mapping_field: str | None = None,
    prepares: bool = False,
    unprepares: bool = False,
    operation: bool = False,
    pod_field: bool = False,
    lifecycle: bool = False,
    starts_plugin: bool = False,
    needs: Mapping[str, str] | None = None,
) -> Callable[[type[T]], type[T]]:
    """Register a step dataclass under its YAML name, with its traits (see :class:`StepType`).

    Names starting with ``expect`` are expectations.
    """

    def register(cls: type[T]) -> type[T]:
        kind: StepKind = "expectation" if name.startswith("expect") else "action"
        STEP_TYPES[name] = StepType(
            name,
            cls,
            kind,
            shorthand,
            mapping_field,
            prepares,
            unprepares,
            operation,
            pod_field,
            lifecycle,
            starts_plugin,
            tuple((needs or {}).items()),
        )
        return cls

    return register


def steps_with(trait: str) -> frozenset[str]:
    """The names of the registered steps that have ``trait`` (``"unprepares"``, ...)."""
    return frozenset(name for name, t in STEP_TYPES.items() if getattr(t, trait))


def step_type_of(cls: type) -> StepType:
    """The registered step whose dataclass is ``cls`` (KeyError for a class that is no step)."""
    for t in STEP_TYPES.values():
        if t.cls is cls:
            return t
    raise KeyError(f"{cls.__name__} is not a registered step (missing @step)")


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

    @classmethod
    def of(cls, args: object) -> Step:
        """A step built in code, named by the registry after its arguments' class."""
        return cls(name=step_type_of(type(args)).name, args=args)


def walk_steps(steps: Iterable[Step]) -> Iterator[Step]:
    """Steps in file order, each followed by those nested in it (``parallel`` steps, ``during``)."""
    for step in steps:
        yield step
        inner = getattr(step.args, "steps", None)
        if isinstance(inner, list):
            yield from walk_steps(s for s in inner if isinstance(s, Step))
        during = getattr(step.args, "during", None)
        if isinstance(during, Step):
            yield from walk_steps([during])
