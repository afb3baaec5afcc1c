"""``resetConnections`` and ``refuseConnections``: decoded, checked with file:line errors, and
needing the fake plugin or drasim's proxy in front of a real driver."""

from __future__ import annotations

from collections.abc import Callable

from drasim.conformance.requirements import scenario_requirements
from drasim.scenario import steps as S  # noqa: N812 - S.RefuseConnections reads like the YAML
from drasim.scenario.schema import Scenario

TEXT = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: t, description: d}
spec:
  driver: {fake: {name: gpu.example.com}}
  steps:
    - refuseConnections: {}
    - refuseConnections: {refuse: false}
    - resetConnections: gpu.example.com
"""


def test_the_steps_decode(load_ok: Callable[[str], list[Scenario]]) -> None:
    [scenario] = load_ok(TEXT)
    steps = [s.args for s in scenario.spec.steps]
    assert steps == [
        S.RefuseConnections(),
        S.RefuseConnections(refuse=False),
        S.ResetConnections(driver="gpu.example.com"),
    ]


def test_a_bad_field_is_a_file_line_error(steps_problems: Callable[[str], list[str]]) -> None:
    assert steps_problems("- refuseConnections: {refuse: maybe}\n") == [
        "s.yaml:12:35: spec.steps[0].refuseConnections.refuse: expected a boolean (true or false), "
        "got a string ('maybe')"
    ]


def test_an_unknown_driver_is_a_file_line_error(steps_problems: Callable[[str], list[str]]) -> None:
    assert steps_problems("- resetConnections: other.example.com\n") == [
        "s.yaml:12:25: spec.steps[0].resetConnections.driver: unknown driver 'other.example.com'. "
        "Drivers in this scenario: gpu.example.com"
    ]


def test_a_real_driver_needs_the_proxy_for_them(load_ok: Callable[[str], list[Scenario]]) -> None:
    [scenario] = load_ok(TEXT)
    [need] = scenario_requirements(scenario)
    assert need.capability == "proxy"
    assert "refuses the kubelet's connections to the plugin" in need.reason
