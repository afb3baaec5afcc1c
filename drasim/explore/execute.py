"""Run one generated step on a live world and record what happened.

A kubelet operation that fails is usually a legitimate outcome (an injected fault, a
stopped plugin), not a violation by itself (:mod:`drasim.explore.outcomes` judges the clear
cases): the step is run without ``expectError`` and a
:class:`~drasim.runner.context.StepFailure` is recorded as "operation failed". Each
record also holds the step as a reproducer must write it so that the same run
passes step by step: with ``expectError`` when the operation failed, and a
``restartKubelet`` whose crash point was never reached as just its ``during`` action
(the runner raises before stopping the kubelet, so that is exactly what happened).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from drasim.explore.encode import step_text
from drasim.runner.context import StepFailure
from drasim.runner.session import StepSession
from drasim.scenario import steps as S  # noqa: N812
from drasim.scenario.common import ErrorMatch
from drasim.scenario.registry import Step

NOT_REACHED = "not reached"


@dataclass(frozen=True)
class StepRecord:
    """One executed step: what ran, whether its operation failed, and how a reproducer writes it."""

    step: Step
    error: str | None
    written: Step

    @property
    def text(self) -> str:
        """One line, e.g. ``startPod: {name: pod-0, claims: [claim-0]}``."""
        return step_text(self.step)


def error_match(error: str) -> ErrorMatch:
    """A stable ``contains`` for an error: its text up to the first colon (no UIDs, no timings)."""
    head = error.split(":", 1)[0].strip()
    return ErrorMatch(contains=head or error)


def _with_expect_error(step: Step, error: str) -> Step:
    if not any(f.name == "expect_error" for f in dataclasses.fields(step.args)):  # type: ignore[arg-type]
        return step
    args = dataclasses.replace(step.args, expect_error=error_match(error))  # type: ignore[type-var]
    return Step(name=step.name, args=args)


def run_step(session: StepSession, step: Step) -> StepRecord:
    """Run ``step`` in ``session`` (journaled like every step); a StepFailure is an operation
    failure, anything else propagates."""
    try:
        session.run(step)
    except StepFailure as failure:
        error = str(failure.actual) if isinstance(failure.actual, str) else failure.message
        args = step.args
        if isinstance(args, S.RestartKubelet) and args.crash_at and args.during is not None:
            during = args.during
            if failure.actual == NOT_REACHED:
                return StepRecord(step, f"crash point not reached: {failure.message}", during)
            return StepRecord(step, error, _with_expect_error(during, error))
        return StepRecord(step, error, _with_expect_error(step, error))
    return StepRecord(step, None, step)
