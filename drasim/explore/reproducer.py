"""Write a failing exploration as a scenario file that ``drasim run`` can replay.

The file holds the exploration's node (:mod:`drasim.explore.base`), the executed
steps as a reproducer must write them (operation failures carry ``expectError``),
and, right after the step where the violation showed, expectations that fail for
the same reason where the scenario language can say so. A header comment names the
violated invariant and its data. The written file is loaded back with the scenario
loader, so it is always valid for ``drasim validate``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from drasim.explore.base import base_spec
from drasim.explore.encode import encode
from drasim.explore.engine import ExploreConfig, Trace
from drasim.explore.outcomes import OPERATION_STEPS
from drasim.explore.violations import INVARIANTS, Violation
from drasim.fsutil import USER_FILE_MODE, atomic_write_text
from drasim.runner.options import RunOptions
from drasim.scenario import expectations as E  # noqa: N812 - E.ExpectCalls reads like the YAML
from drasim.scenario import steps as S  # noqa: N812
from drasim.scenario.common import ErrorMatch
from drasim.scenario.loader import load_file
from drasim.scenario.registry import Step
from drasim.scenario.schema import Scenario


@dataclass(frozen=True)
class Reproducer:
    """A written reproducer and what replaying it showed."""

    path: Path
    scenario: Scenario
    fails_with_bugs: bool | None = None
    """Replayed with the exploration's bugs (or none): did it fail? ``None``: not replayed."""
    passes_without_bugs: bool | None = None
    """Replayed without bugs: did it pass? ``None``: not replayed or no bug was injected."""


# ----------------------------------------------------------------------------- expectations
MARK = "before-violation"


def _short(claim: str) -> str:
    """``default/x`` → ``x`` (the scenario language's default namespace)."""
    return claim.split("/", 1)[1] if claim.startswith("default/") else claim


def _step_of(trace: Trace, seq: int) -> int:
    """Index of the step during which journal event ``seq`` was recorded."""
    index = 0
    for i, mark in enumerate(trace.marks):
        if mark < seq:
            index = i
    return index


@dataclass
class Expectations:
    """What a reproducer adds to the executed steps so that it fails for the violation's reason."""

    marks: dict[int, list[Step]] = field(default_factory=dict)
    """Steps (marks) to insert after step i (-1: before the first step)."""
    checks: list[Step] = field(default_factory=list)
    """Expectations to put right after the step where the violation showed."""
    rewrites: dict[int, Step] = field(default_factory=dict)
    """Step i written like this instead of as it was recorded."""


def _with_expect_error(step: Step, match: ErrorMatch | None) -> Step:
    return Step(name=step.name, args=dataclasses.replace(step.args, expect_error=match))  # type: ignore[type-var]


def _outcome_expectations(trace: Trace, violation: Violation, out: Expectations) -> None:
    """``fault-free-succeeds`` and ``claim-errors-reported``: say how the operation must end.

    An operation step (startPod, deletePod, ...) says it with its own ``expectError``: none
    (it must succeed) or the injected error (it must fail). Errors of automatic retries and
    reconcile passes are checked with a mark before the step and ``expectNoError`` /
    ``expectError`` since that mark after it.
    """
    index = violation.step_index
    if index is None or index >= len(trace.records):
        return
    data = violation.data
    step = trace.records[index].step
    own = step.name in OPERATION_STEPS
    if violation.invariant == "fault-free-succeeds":
        if own and trace.records[index].error is not None:
            out.rewrites[index] = _with_expect_error(step, None)
            return
        operation = data.get("scenario_operation", "any")
        check: Step = Step(name="expectNoError", args=E.ExpectNoError(operation=operation, since=MARK))
    else:
        error = str(data["error"])
        if own:
            out.rewrites[index] = _with_expect_error(step, ErrorMatch(contains=error))
            return
        check = Step(name="expectError", args=E.ExpectError(contains=error, since=MARK))
    out.marks[index - 1] = [Step(name="mark", args=S.Mark(name=MARK))]
    out.checks.append(check)


def expectations_for(trace: Trace, violation: Violation) -> Expectations:
    """The marks, expectations and rewritten steps for a violation."""
    data = violation.data
    name = violation.invariant
    out = Expectations()
    marks = out.marks
    checks = out.checks
    if name in ("fault-free-succeeds", "claim-errors-reported"):
        _outcome_expectations(trace, violation, out)
    elif name == "idempotent-prepare":
        checks.append(
            Step(name="expectConsistentReplies", args=E.ExpectConsistentReplies(claim=_short(data["claim"])))
        )
    elif name == "unique-cdi-ids":
        pod = data["pod"].split("/", 1)[1]
        checks.append(
            Step(
                name="expectCdiDevices",
                args=E.ExpectCdiDevices(pod=pod, container=data["container"], unique=True),
            )
        )
    elif name == "checkpoint-matches-cache":
        claims = {
            _short(key): E.ClaimCheckpoint(pods=entry["pods"], device_count=entry["devices"])
            for key, entry in data.get("expected", {}).items()
        }
        checks.append(
            Step(name="expectCheckpoint", args=E.ExpectCheckpoint(entries=len(claims), claims=claims))
        )
    elif name == "all-released":
        if "cache" in data or "checkpoint" in data:
            checks.append(Step(name="expectCheckpoint", args=E.ExpectCheckpoint(entries=0)))
        if "cdi_specs" in data:
            checks.append(Step(name="expectCdiSpecs", args=E.ExpectCdiSpecs(count=0)))
    elif name == "no-unprepare-in-use" and violation.step_index is not None:
        mark = "before-violation"
        marks[violation.step_index - 1] = [Step(name="mark", args=S.Mark(name=mark))]
        checks.append(
            Step(
                name="expectCalls",
                args=E.ExpectCalls(claim=_short(data["claim"]), since=mark, node_unprepare_resources=0),
            )
        )
    elif (
        name == "unprepared-once"
        and data["allowed"] == 1
        and data["all_unprepare_seqs"] == data["unprepare_seqs"]
    ):
        mark = "after-last-prepare"
        marks[_step_of(trace, int(data["last_prepare_seq"]))] = [Step(name="mark", args=S.Mark(name=mark))]
        checks.append(
            Step(
                name="expectCalls",
                args=E.ExpectCalls(claim=_short(data["claim"]), since=mark, node_unprepare_resources=1),
            )
        )
    return out


def reproducer_steps(trace: Trace) -> list[Step]:
    """The trace's steps as written, with marks and expectations for its violation."""
    violation = trace.violation
    extra = expectations_for(trace, violation) if violation else Expectations()
    after = violation.step_index if violation and violation.step_index is not None else len(trace.records) - 1
    out: list[Step] = list(extra.marks.get(-1, []))
    for i, record in enumerate(trace.records):
        out.append(extra.rewrites.get(i, record.written))
        out.extend(extra.marks.get(i, []))
        if i == after:
            out.extend(extra.checks)
    if not out:
        out.append(Step(name="reconcile", args=S.Reconcile()))
    return out


# ----------------------------------------------------------------------------- writing
def _header(trace: Trace, config: ExploreConfig, command: str) -> str:
    violation = trace.violation
    lines = ["Generated by drasim explore.", f"Command: {command}"]
    if violation is not None:
        where = (
            f"after step {violation.step_index + 1}"
            if violation.step_index is not None
            else "at the end of the run (after the settle steps)"
        )
        lines += [
            f"Violated invariant: {violation.invariant} ({where})",
            f"  {INVARIANTS.get(violation.invariant, '')}",
            f"Found: {violation.message}",
            "Data: " + json.dumps(violation.data, default=str, sort_keys=True)[:2000],
        ]
    failed = [
        r
        for i, r in enumerate(trace.records)
        if r.error
        and not (violation and violation.invariant == "fault-free-succeeds" and i == violation.step_index)
    ]
    if failed:
        lines.append(
            f"{len(failed)} operation(s) failed legitimately (injected faults etc.); see expectError."
        )
    if config.bugs:
        lines.append(
            f"Replay with: drasim run <this file> {' '.join('--inject-bug ' + b for b in config.bugs)}"
        )
    return "".join(f"# {line}\n" for line in lines)


def command_line(config: ExploreConfig) -> str:
    """The ``drasim explore`` command that reproduces an exploration."""
    words = ["drasim", "explore", "--seed", str(config.seed), "--max-examples", str(config.max_examples)]
    words += ["--steps", str(config.steps)]
    for bug in config.bugs:
        words += ["--inject-bug", bug]
    return " ".join(words)


def scenario_document(
    trace: Trace, config: ExploreConfig, name: str, *, catches: bool = False
) -> dict[str, Any]:
    """The reproducer as YAML data."""
    violation = trace.violation
    invariant = violation.invariant if violation else "none"
    metadata: dict[str, Any] = {
        "name": name,
        "description": f"drasim explore found a violation of '{invariant}' (shrunk sequence).",
        "source": command_line(config),
        "tags": ["explore", invariant],
    }
    if catches and config.bugs:
        metadata["catches"] = list(config.bugs)
    return {
        "apiVersion": "drasim.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": metadata,
        "spec": {**base_spec(), "steps": [encode(s) for s in reproducer_steps(trace)]},
    }


def _atomic_write(path: Path, text: str) -> None:
    """Write a reproducer atomically, readable as the umask allows (like any file a user keeps)."""
    atomic_write_text(path, text, mode=USER_FILE_MODE)


def write_reproducer(
    trace: Trace, out_dir: Path, config: ExploreConfig, *, verify: bool = True
) -> Reproducer:
    """Write ``<out_dir>/<name>.yaml``, load it back, and (``verify``) replay it with and without the bugs."""
    invariant = trace.violation.invariant if trace.violation else "none"
    name = f"explore-{invariant}-seed-{config.seed}"
    path = out_dir / f"{name}.yaml"

    def write(catches: bool) -> Scenario:
        doc = scenario_document(trace, config, name, catches=catches)
        body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)
        _atomic_write(path, _header(trace, config, command_line(config)) + body)
        return load_file(path)[0]

    scenario = write(False)
    if not verify:
        return Reproducer(path, scenario)
    from drasim.report.model import RESULTS
    from drasim.runner.run import run_scenario

    with_bugs = run_scenario(scenario, RunOptions(bugs=tuple(config.bugs)), results=RESULTS)
    fails = with_bugs.status == "failed"
    passes: bool | None = None
    if config.bugs:
        passes = run_scenario(scenario, RunOptions(), results=RESULTS).status == "passed"
        if fails and passes:
            scenario = write(True)
    return Reproducer(path, scenario, fails, passes)
