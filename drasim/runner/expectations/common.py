"""Helpers shared by the expectation checks: windows, names, gRPC codes, failure messages.

Expectations only read the world. Each one builds a :class:`StepFailure` whose
message says what was expected and what was found (PROPOSAL.md, "Expectation
failures"), with ``expected``/``actual`` as plain data and ``similar`` holding the
journal events closest to what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from drasim.runner.context import StepContext, StepFailure
from drasim.runner.pods import PodRecord, containers_of, split_ref
from drasim.scenario.common import ErrorMatch

if TYPE_CHECKING:
    from drasim.runner.world import World

SIMILAR_LIMIT = 10
"""At most this many journal events go into a failure's ``similar`` list."""

SETTLE_TIMEOUT = 3.0
"""Real seconds an expectation on asynchronous state (registrations, health streams) may wait
for it to settle before it fails. A check that already holds never waits."""

# Go's codes.Code.String() spellings that are not simply the CamelCase form of the enum name.
_GO_SPECIAL = {"Canceled": "CANCELLED"}
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def grpc_code(code: str | None) -> str:
    """A status code as a grpc.StatusCode name: ``DeadlineExceeded`` and ``DEADLINE_EXCEEDED`` agree.

    The kubelet side journals Go names (``Unavailable``), the fake plugin enum names
    (``UNAVAILABLE``); scenarios use enum names.
    """
    if not code:
        return ""
    if code in _GO_SPECIAL:
        return _GO_SPECIAL[code]
    if code.isupper() or "_" in code:
        return code.upper()
    return _CAMEL_BOUNDARY.sub("_", code).upper()


def claim_key(ref: str, world: World | None = None) -> str:
    """``namespace/name`` of a claim written ``namespace/name`` or ``name`` (namespace default).

    With ``world`` the namespace is the API server's (a real cluster's run namespace).
    """
    namespace, name = split_ref(ref)
    if world is not None:
        namespace = world.api.namespace(namespace)
    return f"{namespace}/{name}"


def pod_key(ref: str, world: World | None = None) -> str:
    """``namespace/name`` of a pod written ``namespace/name`` or ``name``."""
    return claim_key(ref, world)


def find_pod(world: World, ref: str) -> PodRecord:
    """The runner's record of a pod; a clear failure when the scenario never started it."""
    key = pod_key(ref, world)
    record = world.pods.get(key)
    if record is None:
        known = ", ".join(sorted(world.pods)) or "none"
        raise StepFailure(f"pod {key} is unknown: no startPod created it (pods: {known})", expected=key)
    return record


def container_name(record: PodRecord, name: str) -> str:
    """The named container, or the pod's first one when ``name`` is empty."""
    containers = containers_of(record.containers, record.claims)
    names = [c.name for c in containers]
    if not name:
        return names[0]
    if name not in names:
        raise StepFailure(
            f"pod {record.key} has no container {name!r} (containers: {', '.join(names)})", expected=name
        )
    return name


def window_text(ctx: StepContext, window: str) -> str:
    """How a ``since`` window reads in a message: ``since the start``, ``after mark 'x'``..."""
    if window in ("", "start"):
        return "since the start"
    if window == "previous":
        for i in range(ctx.index - 1, -1, -1):
            if i < len(ctx.step_names) and ctx.step_names[i] == ctx.name:
                return f"since step {i + 1} (the previous {ctx.name})"
        return "since the start"
    return f"after mark {window!r}"


def plural(count: int, word: str, many: str = "") -> str:
    """``1 call``, ``2 calls``; ``many`` is the plural form when it is not ``word + "s"``."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {many or word + 's'}"


def error_matches(message: str, match: ErrorMatch) -> bool:
    """Whether an error message satisfies ``contains`` and ``matches`` (both, when both are set)."""
    if match.contains and match.contains not in message:
        return False
    return not (match.matches and re.search(match.matches, message) is None)


def as_error_match(value: ErrorMatch | str) -> ErrorMatch:
    """The YAML shorthand: a plain string means ``contains``."""
    return ErrorMatch(contains=value) if isinstance(value, str) else value


def describe_match(match: ErrorMatch) -> str:
    """``containing 'x'``, ``matching /x/`` or both."""
    parts = []
    if match.contains:
        parts.append(f"containing {match.contains!r}")
    if match.matches:
        parts.append(f"matching /{match.matches}/")
    return " and ".join(parts)


def similar(events: Iterable[Mapping[str, Any]], limit: int = SIMILAR_LIMIT) -> list[dict[str, Any]]:
    """Plain copies of the first ``limit`` events, for :attr:`StepFailure.similar`."""
    result: list[dict[str, Any]] = []
    for event in events:
        if len(result) >= limit:
            break
        result.append(dict(event))
    return result


def settle(world: World, holds: Callable[[], bool], timeout: float | None = None) -> bool:
    """Wait (at most ``timeout`` real seconds, default :data:`SETTLE_TIMEOUT`) until ``holds()``.

    For state that other threads change (health streams, connections): the check is
    evaluated at once, then again whenever the journal grows (and at least every 0.2 s,
    for changes that are not journaled).
    """
    import time

    deadline = time.monotonic() + (SETTLE_TIMEOUT if timeout is None else timeout)
    while True:
        mark = world.journal.mark()
        if holds():
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        world.journal.wait_for(min(remaining, 0.2), since_seq=mark)
