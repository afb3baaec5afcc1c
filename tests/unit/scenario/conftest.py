"""Helpers for the scenario loader tests."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from drasim.errors import ScenarioError
from drasim.scenario import load_paths
from drasim.scenario.schema import Scenario

HEADER = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: t
  description: A test scenario.
spec:
  driver:
    fake: {name: gpu.example.com}
  claims:
    - {name: gpu}
"""


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """Write dedented text to a file under tmp_path and return its path."""

    def _write(text: str, name: str = "s.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def problems(write: Callable[..., Path]) -> Callable[[str], list[str]]:
    """Load text that must be invalid; return its problems with the directory stripped."""

    def _problems(text: str) -> list[str]:
        path = write(text)
        with pytest.raises(ScenarioError) as info:
            load_paths([path])
        prefix = str(path.parent) + "/"
        return [p.replace(prefix, "") for p in info.value.problems]

    return _problems


@pytest.fixture
def steps_problems(problems: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """Problems of a scenario made of HEADER plus the given ``steps:`` block (indented 2)."""

    def _steps(steps: str) -> list[str]:
        return problems(HEADER + "  steps:\n" + textwrap.indent(textwrap.dedent(steps), "    "))

    return _steps


@pytest.fixture
def load_ok(write: Callable[..., Path]) -> Callable[[str], list[Scenario]]:
    """Load text that must be valid."""

    def _load(text: str) -> list[Scenario]:
        return load_paths([write(text)])

    return _load
