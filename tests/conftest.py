"""Shared fixtures for drasim's own tests."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

# Every property test draws the same examples on every run (CI stays deterministic) and keeps
# no example database; a module sets only how many examples it wants and, where it matters,
# a deadline. (`drasim explore` sets all of these itself, so the profile does not reach it.)
settings.register_profile(
    "drasim-tests",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
settings.load_profile("drasim-tests")

TESTS = Path(__file__).parent

#: Helper files of the tests, imported by path once, here, under these names. Tests run with
#: ``--import-mode=importlib``, so a test module cannot import a file next to it; it takes the
#: helper from ``sys.modules[name]`` (or from a fixture below).
HELPERS = {
    "drasim_test_checks_world": TESTS / "unit" / "runner" / "checks_world.py",
    "drasim_test_e2e_signals": TESTS / "e2e" / "signals.py",
    "drasim_test_init_repo": TESTS / "e2e" / "init_repo.py",
    "drasim_real_driver_expected": TESTS / "real_driver" / "expected.py",
    "k8spb_test_objects": TESTS / "unit" / "k8spb" / "objects.py",
}


def _load_module(name: str, path: Path) -> ModuleType:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


for _name, _path in HELPERS.items():
    _load_module(_name, _path)


@pytest.fixture(scope="session")
def e2e_signals() -> ModuleType:
    """tests/e2e/signals.py: start a held ``drasim run``, signal it, check nothing is left."""
    return sys.modules["drasim_test_e2e_signals"]


@pytest.fixture
def short_socket_dir() -> Iterator[Path]:
    """A directory under /tmp short enough for unix socket paths (sun_path is 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="drasim-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
