"""Fuzzing: whatever the text, the loader returns scenarios or raises ScenarioError, nothing else."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from drasim.errors import ScenarioError
from drasim.scenario import load_text
from drasim.scenario.registry import STEP_TYPES

from .conftest import HEADER

VALID = (
    HEADER
    + "  steps:\n    - startPod: {name: a, claims: [gpu]}\n    - expectCalls: {NodePrepareResources: 1}\n"
)

TOKENS = [
    "apiVersion: drasim.dev/v1alpha1",
    "kind: Scenario",
    "metadata:",
    "spec:",
    "steps:",
    "  - ",
    "- ",
    ": ",
    "{",
    "}",
    "[",
    "]",
    ", ",
    "\n",
    "  ",
    "&a ",
    "*a",
    "<<: ",
    "!!str ",
    "null",
    "true",
    "-1",
    "1e400",
    "'",
    '"',
    "---\n",
    "#",
    "\t",
    "? ",
    "name",
    "file: x.yaml",
    *STEP_TYPES,
]


def _check(text: str) -> None:
    problems: list[str] = []
    try:
        result = load_text(text, "fuzz.yaml")
    except ScenarioError as err:
        problems, result = err.problems, []
    assert isinstance(result, list)
    assert all(p.startswith("fuzz.yaml:") for p in problems)
    assert problems or result


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hs.lists(hs.sampled_from(TOKENS), max_size=40).map("".join))
def test_token_soup_never_escapes(text):
    _check(text)


@settings(max_examples=200, deadline=None)
@given(hs.text(max_size=200))
def test_arbitrary_text_never_escapes(text):
    _check(text)


@settings(max_examples=300, deadline=None)
@given(hs.integers(0, len(VALID) - 1), hs.integers(0, 8), hs.sampled_from(TOKENS))
def test_mutated_valid_scenario_never_escapes(position, cut, insert):
    _check(VALID[:position] + insert + VALID[position + cut :])


@settings(max_examples=150, deadline=None)
@given(
    hs.recursive(
        hs.none() | hs.booleans() | hs.integers() | hs.floats(allow_nan=False) | hs.text(max_size=8),
        lambda inner: (
            hs.lists(inner, max_size=4)
            | hs.dictionaries(hs.sampled_from(TOKENS[:9] + list(STEP_TYPES)), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_arbitrary_structures_as_steps_never_escape(value):
    import json

    _check(HEADER + "  steps:\n    - " + json.dumps(value) + "\n")
