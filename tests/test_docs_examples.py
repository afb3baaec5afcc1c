"""Scenario examples in the README and docs/ are valid, and the README's example passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drasim.runner.run import run_scenario
from drasim.scenario import load_text

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _examples() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for index, block in enumerate(re.findall(r"```yaml\n(.*?)```", doc.read_text(), re.S)):
            if "kind: Scenario" in block and "apiVersion: drasim.dev/v1alpha1" in block:
                found.append((f"{doc.name}#{index}", block))
    return found


EXAMPLES = _examples()


def test_readme_has_a_scenario_example() -> None:
    assert any(name.startswith("README.md") for name, _ in EXAMPLES)


@pytest.mark.parametrize(("name", "text"), EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_example_is_valid(name: str, text: str) -> None:
    scenarios = load_text(text, file=name, base_dir=ROOT)
    assert scenarios


def test_readme_example_passes() -> None:
    [(name, text)] = [e for e in EXAMPLES if e[0].startswith("README.md")][:1]
    [scenario] = load_text(text, file=name)
    result = run_scenario(scenario)
    assert result.status == "passed", result.failure and result.failure.message
