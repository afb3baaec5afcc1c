"""The kubelet core does no I/O: its modules may not import I/O or wire libraries."""

from __future__ import annotations

import ast
from pathlib import Path

import drasim.kubelet

FORBIDDEN = {
    "grpc",
    "kubernetes",
    "google",
    "yaml",
    "os",
    "pathlib",
    "socket",
    "http",
    "urllib",
    "subprocess",
}


def imported_roots(source: str) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_kubelet_modules_import_no_io_libraries() -> None:
    package = Path(drasim.kubelet.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert len(modules) >= 8
    offenders = {
        path.name: sorted(imported_roots(path.read_text()) & FORBIDDEN)
        for path in modules
        if imported_roots(path.read_text()) & FORBIDDEN
    }
    assert offenders == {}


def test_checker_sees_forbidden_imports() -> None:
    source = "import os.path\nfrom google.protobuf import message\nfrom . import state\nimport threading\n"
    assert imported_roots(source) & FORBIDDEN == {"os", "google"}
