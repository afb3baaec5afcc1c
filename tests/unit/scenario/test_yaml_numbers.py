"""YAML number traps: ``1e12`` is a number (YAML 1.2, as Kubernetes reads it), and a version
written as an unquoted number gets a "quote it" hint."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from drasim.scenario.yamlsrc import parse_documents


@pytest.mark.parametrize(
    ("text", "value"),
    [("1e12", 1e12), ("-2E3", -2000.0), ("+5e-1", 0.5), ("1.5e3", 1500.0), ("12", 12), ("1e", "1e")],
)
def test_exponent_numbers(text: str, value: object) -> None:
    (document,), _ = parse_documents(f"x: {text}\n", "f.yaml")
    assert document.data["x"] == value
    assert type(document.data["x"]) is type(value)


def test_a_number_with_an_exponent_fills_a_number_field(steps_problems: Callable[[str], list[str]]) -> None:
    (problem,) = steps_problems("- advanceClock: 1e12\n")
    assert "must be at most" in problem  # read as the number 1e12, not the string '1e12'


def test_unquoted_version_gets_a_quote_hint(problems: Callable[[str], list[str]]) -> None:
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: t, description: d}
        spec:
          driver: {fake: {name: gpu.example.com}}
          kubeletVersions: [1.35]
          steps: [{reconcile: {}}]
        """
    assert problems(text) == [
        "s.yaml:6:21: spec.kubeletVersions[0]: expected a string, got a number (1.35); "
        "YAML reads an unquoted 1.35 as a number: quote it ('1.35')"
    ]
