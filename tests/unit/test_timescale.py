"""Time scaling in one place (drasim/timescale.py): the scale a report records is the one used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drasim.cli import main
from drasim.report.model import ScenarioResult
from drasim.scenario import load_text
from drasim.scenario.schema import KubeletProfile
from drasim.timescale import DEFAULT_TIME_SCALE, effective_time_scale, reported_time_scale

SCENARIO = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {{name: scaled, description: one prepare at a non-default time scale}}
spec:
  kubelet: {{timeScale: {scale}}}
  driver: {{fake: {{name: gpu.example.com}}}}
  claims: [{{name: gpu}}]
  steps:
    - startPod: {{name: a, claims: [gpu]}}
    - expectCalls: {{NodePrepareResources: 1}}
"""


def test_the_schema_default_is_the_one_default() -> None:
    assert KubeletProfile().time_scale == DEFAULT_TIME_SCALE


def test_effective_scale_prefers_the_override() -> None:
    assert effective_time_scale(0.05, None) == 0.05
    assert effective_time_scale(0.05, 0.2) == 0.2


def test_reported_scale_is_the_override_the_common_or_the_slowest() -> None:
    assert reported_time_scale([0.05, 0.05], None) == 0.05
    assert reported_time_scale([0.01, 0.5], None) == 0.5
    assert reported_time_scale([0.01, 0.5], 0.02) == 0.02
    assert reported_time_scale([], None) == DEFAULT_TIME_SCALE


def test_scenario_result_carries_the_scenario_scale_through_json() -> None:
    (scenario,) = load_text(SCENARIO.format(scale=0.05), "s.yaml")
    result = ScenarioResult.of(scenario, "passed")
    assert result.time_scale == 0.05
    assert ScenarioResult.from_dict(result.to_dict()) == result
    old = {k: v for k, v in result.to_dict().items() if k != "timeScale"}  # a report of older drasim
    assert ScenarioResult.from_dict(old).time_scale is None


@pytest.mark.parametrize(("extra", "expected"), [([], 0.05), (["--time-scale", "0.02"], 0.02)])
def test_drasim_run_records_the_scale_the_scenarios_ran_at(
    tmp_path: Path, extra: list[str], expected: float
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(scale=0.05))
    out = tmp_path / "r.json"
    assert main(["run", str(path), "--json", str(out), *extra]) == 0
    assert json.loads(out.read_text())["environment"]["timeScale"] == expected
