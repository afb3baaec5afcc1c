"""The Python example in docs/pytest-plugin.md runs and passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "pytest-plugin.md"


def test_docs_example_passes(pytester: pytest.Pytester) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    example = next(b for b in blocks if b.startswith("# tests/test_my_driver.py"))
    pytester.makepyfile(test_my_driver=example)
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=2)
