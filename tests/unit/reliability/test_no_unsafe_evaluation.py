"""No code path in drasim (or the fake plugins) can evaluate its input.

Scans the syntax tree of every Python file for calls that execute or unpickle data
(``eval``, ``exec``, ``compile``, ``pickle``/``marshal``/``shelve``/``dill``) and for
PyYAML's unsafe entry points (``yaml.load`` without SafeLoader, ``unsafe_load``,
``full_load``, ``Loader``/``UnsafeLoader``/``FullLoader``). Generated protobuf modules
are skipped.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("drasim", "fake_plugins")

EXECUTING_BUILTINS = {"eval", "exec", "compile", "__import__"}
UNPICKLING_MODULES = {
    "pickle",
    "cPickle",
    "_pickle",
    "marshal",
    "shelve",
    "dill",
    "cloudpickle",
    "jsonpickle",
}
UNSAFE_YAML_CALLS = {"unsafe_load", "unsafe_load_all", "full_load", "full_load_all"}
UNSAFE_YAML_LOADERS = {"Loader", "UnsafeLoader", "FullLoader", "CLoader", "CUnsafeLoader", "CFullLoader"}


def python_files() -> list[Path]:
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    return [p for p in files if "_proto" not in p.parts and not p.name.endswith("_pb2.py")]


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _loader_is_safe(call: ast.Call) -> bool:
    """A Loader is given and none is one of PyYAML's unsafe ones (custom loaders derive from SafeLoader)."""
    loaders = [kw.value for kw in call.keywords if kw.arg == "Loader"] + list(call.args[1:2])
    return bool(loaders) and all(_dotted(x).split(".")[-1] not in UNSAFE_YAML_LOADERS for x in loaders)


def findings(source: str, name: str) -> list[str]:  # noqa: C901 - one branch per unsafe construct
    """Every unsafe construct in ``source`` as ``name:line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                if module.split(".")[0] in UNPICKLING_MODULES:
                    found.append(f"{name}:{node.lineno}: imports {module}")
        if isinstance(node, ast.ImportFrom) and node.module == "yaml":
            for alias in node.names:
                if alias.name in UNSAFE_YAML_LOADERS | UNSAFE_YAML_CALLS | {"load", "load_all"}:
                    found.append(f"{name}:{node.lineno}: from yaml import {alias.name}")
        if not isinstance(node, ast.Call):
            continue
        func = _dotted(node.func)
        last = func.split(".")[-1]
        if (
            func in EXECUTING_BUILTINS
            or (func.startswith("builtins.") and last in EXECUTING_BUILTINS)
            or (func.startswith("yaml.") and last in UNSAFE_YAML_CALLS)
        ):
            found.append(f"{name}:{node.lineno}: calls {func}()")
        elif func in ("yaml.load", "yaml.load_all") and not _loader_is_safe(node):
            found.append(f"{name}:{node.lineno}: calls {func}() without a safe Loader")
    return found


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import yaml\nyaml.load(text)", "calls yaml.load() without a safe Loader"),
        ("import yaml\nyaml.load(text, Loader=yaml.Loader)", "calls yaml.load() without a safe Loader"),
        ("import yaml\nyaml.load_all(text, yaml.FullLoader)", "calls yaml.load_all() without a safe Loader"),
        ("import yaml\nyaml.unsafe_load(text)", "calls yaml.unsafe_load()"),
        ("from yaml import load", "from yaml import load"),
        ("eval(text)", "calls eval()"),
        ("exec(code)", "calls exec()"),
        ("import pickle", "imports pickle"),
        ("from marshal import loads", "imports marshal"),
    ],
)
def test_the_scanner_sees_unsafe_constructs(source: str, expected: str) -> None:
    assert [f.split(": ", 1)[1] for f in findings(source, "x.py")] == [expected]


@pytest.mark.parametrize(
    "source",
    [
        "import yaml\nyaml.safe_load(text)",
        "import yaml\nyaml.load(text, Loader=yaml.SafeLoader)",
        "import yaml\nyaml.load(text, Loader=LineLoader)",
        "import json\njson.loads(text)",
        "def _eval(node): return node\n_eval(tree)",
        "ast.literal_eval(text)",
    ],
)
def test_the_scanner_accepts_safe_constructs(source: str) -> None:
    assert findings(source, "x.py") == []


def test_no_source_file_evaluates_input() -> None:
    files = python_files()
    assert len(files) > 50, "the scan found too few files; did the layout change?"
    problems = [
        f for path in files for f in findings(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert problems == []
