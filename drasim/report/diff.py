"""Expected-vs-actual diffs for failure messages.

Both sides are dumped as block YAML with sorted keys, so the diff shows only
real differences, never key-order noise, and reads like the scenario file.
"""

from __future__ import annotations

import difflib
from html import escape
from typing import Any

import yaml

from drasim.journal.convert import to_jsonable


def pretty(value: Any) -> str:
    """``value`` as block YAML with sorted keys; a string is shown as it is."""
    if isinstance(value, str):
        return value if value.endswith("\n") or not value else value + "\n"
    dumped: str = yaml.safe_dump(
        to_jsonable(value), sort_keys=True, default_flow_style=False, allow_unicode=True, width=100
    )
    return dumped.removesuffix("...\n")


def unified_diff(
    expected: Any, actual: Any, expected_label: str = "expected", actual_label: str = "actual"
) -> str:
    """A unified diff from ``expected`` to ``actual``; ``""`` when they render the same."""
    left = pretty(expected).splitlines(keepends=True)
    right = pretty(actual).splitlines(keepends=True)
    lines = difflib.unified_diff(left, right, fromfile=expected_label, tofile=actual_label, n=3)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_lines_html(diff: str) -> str:
    """A unified diff as HTML lines: hunk headers, additions and deletions in their own span class."""
    lines = []
    for line in diff.splitlines():
        cls = ""
        if line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+") and not line.startswith("+++"):
            cls = "add"
        elif line.startswith("-") and not line.startswith("---"):
            cls = "del"
        lines.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    return "\n".join(lines)
