"""The codec modules do no I/O: they import no file, socket or thread modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import drasim.checkpoint

PACKAGE = Path(drasim.checkpoint.__file__).parent
PURE = ["__init__.py", "codec.py", "crc.py", "gojson.py", "incremental.py", "legacy.py", "view.py"]
FORBIDDEN = {
    "os",
    "pathlib",
    "io",
    "socket",
    "threading",
    "tempfile",
    "shutil",
    "subprocess",
    "http",
    "urllib",
}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("name", PURE)
def test_pure_modules_import_no_io(name):
    imported = {module.split(".")[0] for module in imported_modules(PACKAGE / name)}
    assert not imported & FORBIDDEN
    assert "drasim.checkpoint.store" not in imported_modules(PACKAGE / name)


def test_package_init_imports_nothing():
    assert imported_modules(PACKAGE / "__init__.py") == set()
