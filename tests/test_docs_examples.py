"""Scenario examples in the README and docs/ are valid, and the README's example passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drasim.report.model import RESULTS
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
    result = run_scenario(scenario, results=RESULTS)
    assert result.status == "passed", result.failure and result.failure.message


def _command_lines() -> list[tuple[str, str]]:
    """Every `drasim ...` command in the README and docs/: code-block lines (continuations and
    quoted line breaks joined, comments and pipes cut, printed `Reproduce:` lines included) and
    inline code spans."""
    found: list[tuple[str, str]] = []
    for doc in DOCS:
        text = doc.read_text()
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
            lines = block.replace("\\\n", " ").splitlines()
            while lines:
                line = lines.pop(0).strip().removeprefix("$ ")
                line = line[line.index("drasim ") :] if line.startswith("Reproduce: drasim ") else line
                if not line.startswith("drasim "):
                    continue
                while (line.count("'") % 2 or line.count('"') % 2) and lines:  # a quoted argument spans lines
                    line += " " + lines.pop(0).strip()
                for cut in (" # ", " | ", " > ", " && ", "</failure>"):
                    line = line.split(cut)[0]
                found.append((doc.name, line.strip()))
        found += [(doc.name, span) for span in re.findall(r"`(drasim [a-z][^`]*)`", text)]
    return [(doc, line) for doc, line in found if re.match(r"drasim ([a-z]|-)", line)]


COMMANDS = _command_lines()


def test_docs_show_drasim_commands() -> None:
    assert len(COMMANDS) > 20


@pytest.mark.parametrize(("doc", "line"), COMMANDS, ids=[f"{d}:{c[:60]}" for d, c in COMMANDS])
def test_documented_flags_exist(doc: str, line: str) -> None:
    """Every subcommand and flag the docs show is one drasim's argument parser knows."""
    import argparse
    import shlex

    from drasim.cli import build_parser

    words = shlex.split(line.replace("[", " ").replace("]", " "))  # usage synopses: [--json]
    parser = build_parser()
    [subparsers] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    options = {o for a in parser._actions for o in a.option_strings}
    if len(words) > 1 and not words[1].startswith("-"):
        assert words[1] in subparsers.choices, f"{doc}: {line!r}: no subcommand {words[1]!r}"
        sub = subparsers.choices[words[1]]
        options |= {o for a in sub._actions for o in a.option_strings}
        nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        if nested and len(words) > 2 and words[2] in nested[0].choices:
            options |= {o for a in nested[0].choices[words[2]]._actions for o in a.option_strings}
    flags = [w.split("=", 1)[0] for w in words[1:] if re.match(r"--?[A-Za-z]", w)]
    unknown = [f for f in flags if f not in options]
    assert unknown == [], f"{doc}: {line!r}: drasim has no {unknown}"
