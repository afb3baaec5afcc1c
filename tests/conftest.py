"""Shared fixtures for drasim's own tests."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

pytest_plugins = ["pytester"]

TESTS = Path(__file__).parent


def _load_module(name: str, path: Path) -> ModuleType:
    """Import a helper file by path, once (``sys.modules[name]``).

    Tests run with ``--import-mode=importlib``, so a test module cannot import a file next to it.
    """
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def load_module() -> Callable[[str, Path], ModuleType]:
    """``load_module(name, path)``: import a helper file of the tests by path, once."""
    return _load_module


@pytest.fixture(scope="session")
def e2e_signals() -> ModuleType:
    """tests/e2e/signals.py: start a held ``drasim run``, signal it, check nothing is left."""
    return _load_module("drasim_test_e2e_signals", TESTS / "e2e" / "signals.py")


@pytest.fixture
def short_socket_dir() -> Iterator[Path]:
    """A directory under /tmp short enough for unix socket paths (sun_path is 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="drasim-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
