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


def test_documented_options_and_ini_keys_exist(pytester: pytest.Pytester) -> None:
    """Every ``--drasim-*`` option and ``drasim_*`` ini key docs/pytest-plugin.md names is one
    the plugin registers (and the other way round for the options)."""
    text = DOC.read_text()
    help_text = pytester.runpytest("--help").stdout.str()
    registered = set(re.findall(r"(--drasim-[a-z][a-z-]*)", help_text))
    documented = set(re.findall(r"(--drasim-[a-z][a-z-]*[a-z])", text))
    assert documented - registered == set()
    assert registered - documented == set()
    ini_registered = set(re.findall(r"^  (drasim_[a-z_]+) ", help_text, flags=re.MULTILINE))
    ini_documented = set(re.findall(r"`(drasim_[a-z_]+)`", text)) - {"drasim_node", "drasim_requires"}
    fixtures = set(re.findall(r"\| `(drasim_[a-z_]+)` \| (?:function|session)", text))
    assert ini_documented - fixtures - ini_registered == set()
