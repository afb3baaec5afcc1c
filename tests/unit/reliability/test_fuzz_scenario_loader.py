"""Fuzzing drasim.scenario.load_text: any text gives Scenarios or a ScenarioError, quickly.

Extends tests/unit/scenario/test_fuzz.py (arbitrary text, token soup, one mutated
scenario, random step structures), without repeating it: random trees using the
schema's field names at the ``spec`` level; line-level and tree-level mutations of
every file of the built-in library (a node replaced by a random value, a key
dropped or added); and named hostile inputs (billion laughs, recursive aliases,
Python tags, deep nesting, ...). Every example must finish under the hypothesis
deadline and never raise anything but ScenarioError, whose problems all name
the file.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from drasim.errors import ScenarioError
from drasim.scenario import Scenario, builtin_scenario_dir, load_text

FILE = "fuzz.yaml"
SETTINGS = settings(max_examples=60, deadline=timedelta(seconds=5))  # the rest: tests/conftest.py's profile


@cache
def library() -> tuple[tuple[str, str], ...]:
    """(name, text) of every built-in scenario file."""
    files = sorted(builtin_scenario_dir().rglob("*.yaml"))
    return tuple((str(p.relative_to(builtin_scenario_dir())), p.read_text(encoding="utf-8")) for p in files)


def check(text: str) -> list[Scenario] | ScenarioError:
    """The property: Scenarios, or a ScenarioError whose every problem names the file."""
    try:
        scenarios = load_text(text, FILE, base_dir=Path("/nonexistent-drasim-fuzz"))
    except ScenarioError as err:
        error = err
    else:
        assert all(isinstance(s, Scenario) for s in scenarios)
        return scenarios
    assert error.problems, "a ScenarioError without problems"
    unnamed = [p for p in error.problems if not p.startswith(f"{FILE}:")]
    assert unnamed == []
    return error


def test_the_library_is_there_and_loads() -> None:
    assert len(library()) >= 10
    for name, text in library():
        result = check(text)
        assert not isinstance(result, ScenarioError), f"{name}: {result}"


# ------------------------------------------------------- tokens for mutations

YAML_TOKENS = st.sampled_from(
    [
        ":", "- ", "  ", "\n", "{", "}", "[", "]", ",", "&a ", "*a", "!!str ", "!!binary ",
        "!!python/name:os.system", "<<: *a", "---\n", "...\n", "#", "'", '"', "|\n", ">\n", "? ", "~",
        "null", "true", "0x1F", "1e999",
        ".nan", "-.inf", "2001-12-14", "kind: Scenario\n", "apiVersion: drasim.dev/v1alpha1\n", "spec:\n",
        "steps:\n", "%YAML 1.1\n", "\t", "\ufeff", "\x85", "\u2028",
    ]
)  # fmt: skip


# ------------------------------------------------------------ random trees

FIELD_NAMES = [
    "apiVersion", "kind", "metadata", "name", "description", "tags", "spec", "driver", "fake", "command",
    "kubelet", "node", "services", "claims", "objects", "steps", "startPod", "deletePod", "expectCalls",
    "expectCheckpoint", "restartKubelet", "fault", "rpc", "error", "times", "pods", "devices", "timers",
    "apiServer", "parallel", "allocate", "claim", "count", "entries", "NodePrepareResources",
]  # fmt: skip
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["Scenario", "drasim.dev/v1alpha1", "gpu.example.com", "v1.DRAPlugin", "-1", "1s"])
)
trees = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=30,
)


@SETTINGS
@given(trees, st.booleans())
def test_random_documents_with_schema_words(tree: Any, as_scenario: bool) -> None:
    if as_scenario:
        tree = {
            "apiVersion": "drasim.dev/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "x"},
            "spec": tree,
        }
    check(yaml.safe_dump(tree, allow_unicode=True))


# ---------------------------------------------------- mutated library files


LINE_OPS = ["drop", "dup", "swap", "indent", "dedent", "cut", "replace"]


@SETTINGS
@given(st.data())
def test_line_mutations_of_library_scenarios(data: st.DataObject) -> None:
    _, text = data.draw(st.sampled_from(library()), label="file")
    lines = text.splitlines()
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        op = data.draw(
            st.sampled_from(["drop", "dup", "swap", "indent", "dedent", "cut", "replace"]), label="op"
        )
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = data.draw(st.integers(0, len(lines) - 1), label="other")
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent":
            lines[i] = "  " + lines[i]
        elif op == "dedent":
            lines[i] = lines[i].lstrip()
        elif op == "cut":
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])), label="at")]
        else:
            lines[i] = data.draw(YAML_TOKENS | st.text(max_size=20), label="text")
    check("\n".join(lines) + "\n")


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _parent(tree: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        tree = tree[part]
    return tree


@SETTINGS
@given(st.data())
def test_tree_mutations_of_library_scenarios(data: st.DataObject) -> None:
    _, text = data.draw(st.sampled_from(library()), label="file")
    documents = [d for d in yaml.safe_load_all(text) if d is not None]
    tree = data.draw(st.sampled_from(documents), label="document")
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = [p for p in _paths(tree) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths), label="path")
        parent = _parent(tree, path)
        op = data.draw(st.sampled_from(["replace", "drop", "add"]), label="op")
        if op == "replace":
            parent[path[-1]] = data.draw(trees, label="value")
        elif op == "drop":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.sampled_from(FIELD_NAMES), label="key")] = data.draw(trees, label="value")
        else:
            parent.insert(path[-1], data.draw(trees, label="value"))
    check(yaml.safe_dump(tree, allow_unicode=True, sort_keys=False))


# ------------------------------------------------------------ hostile inputs


def _laughs(depth: int, indent: str = "") -> str:
    lines = [f"{indent}l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{indent}l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, depth)]
    return "\n".join(lines) + "\n"


def _with_objects(extra: str) -> str:
    return (
        "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: x, description: y}\n"
        "spec:\n  driver: {fake: {name: gpu.example.com}}\n  objects:\n" + extra + "  steps: []\n"
    )


HOSTILE = {
    "billion-laughs-top-level": _laughs(9),
    "billion-laughs-in-objects": _with_objects(
        "    - apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: c}\n      data:\n"
        + _laughs(9, "        ")
    ),
    "recursive-alias": "a: &a [*a]\n",
    "python-tag": "!!python/object/apply:os.system ['true']\n",
    "python-name-tag": "kind: !!python/name:os.system\n",
    "deep-flow-nesting": "[" * 1000 + "]" * 1000,  # PyYAML itself is quadratic here
    "deep-block-nesting": "".join(f"{'  ' * i}a:\n" for i in range(2000)),
    "many-documents": "---\nkind: Scenario\n" * 2000,
    "nul-byte": "kind: Scenario\x00\n",
    "bom-and-crlf": "\ufeffapiVersion: drasim.dev/v1alpha1\r\nkind: Scenario\r\n",
    "lone-surrogate-escape": 'kind: "\\ud800"\n',
    "huge-float": "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: 1e999999}\n",
    "unhashable-key": "? [a, b]\n: 1\n",
    # PyYAML's int constructor raises ValueError past Python's 4300-digit limit
    "integer-too-long-for-python": "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: "
    + "9" * 5000
    + "}\n",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_inputs_are_rejected_cleanly(text: str) -> None:
    check(text)
