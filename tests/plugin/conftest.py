"""Helpers for the pytester tests of the drasim pytest plugin."""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import Callable

import pytest

# pytester's in-process runs forget every module imported during the run, and with
# PYTHONDONTWRITEBYTECODE each re-import compiles (and assertion-rewrites) again.
# Importing what a scenario run needs once, here, keeps each inner run fast.
for _module in (
    "drasim.allocator.allocate",
    "drasim.runner.actions",
    "drasim.runner.expectations",
    "drasim.runner.health",
    "drasim.runner.run",
    "fake_plugins.driver",
    "fake_plugins.slices",
):
    importlib.import_module(_module)

PASSING = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: {name}
  description: one pod, one claim, one prepare call
  tags: [{tags}]
spec:
  driver:
    fake: {{name: gpu.example.com}}
  claims:
    - {{name: gpu}}
  steps:
    - startPod: {{name: a, claims: [gpu]}}
    - expectCalls: {{NodePrepareResources: {count}}}
"""


def make_scenario_text(name: str, *, count: int = 1, tags: str = "demo") -> str:
    """A small scenario; ``count`` other than 1 makes its expectation fail."""
    return PASSING.format(name=name, count=count, tags=tags)


@pytest.fixture
def scenario_text() -> Callable[..., str]:
    """``scenario_text(name, count=1, tags="demo")`` -> the text of a small scenario."""
    return make_scenario_text


@pytest.fixture(autouse=True)
def _lean_inner_runs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner pytest runs without plugins that cost seconds per run and are not under test."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest -p no:benchmark -p no:cacheprovider")


@pytest.fixture
def write(pytester: pytest.Pytester) -> Callable[[str, str], None]:
    """``write(relative_path, text)``: a file in the pytester directory (parents created)."""

    def make(path: str, text: str) -> None:
        target = pytester.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))

    return make
