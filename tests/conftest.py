"""Shared fixtures for drasim's own tests."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
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


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default in pyproject.toml): two workers per CPU.

    The suite waits more than it computes (child processes, sockets, scaled kubelet timers): with
    one worker per CPU the two CPUs of the reference machine were about half idle. Two per CPU
    keep them busy (docs/performance.md, "drasim's own test suite": 2 min 9-22 s against 3 min
    5-38 s on a quiet 2-CPU machine). Tests that scale kubelet time down (``timeScale: 0.01``
    makes a 45 s deadline 0.45 s of real time) must not depend on getting a CPU at once; a test
    that does is a bug to fix, not a reason for fewer workers. ``PYTEST_XDIST_AUTO_NUM_WORKERS``
    or ``-n N`` override it.
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, 2 * cpus)


TESTS = Path(__file__).parent


@pytest.hookimpl(trylast=True)  # after the directories' conftests have added their markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the ``slow`` tests first, the real-driver library run first of all.

    ``--dist worksteal`` gives each worker a contiguous share of this order and lets an idle
    worker steal from the end of another's queue. A long test that starts last makes the whole
    run wait for it; started first, the short tests fill in around it. The real driver's library
    run (one ``drasim run`` that several tests read, ``tests/real_driver/test_cli.py``) goes
    first, so its readers follow it on the same worker instead of waiting for it elsewhere.
    """

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("slow") is None:
            return 2
        return 0 if item.nodeid.startswith("tests/real_driver/test_cli.py") else 1

    items.sort(key=rank)  # stable: the order within each rank is pytest's


#: Helper files of the tests, imported by path once, here, under these names. Tests run with
#: ``--import-mode=importlib``, so a test module cannot import a file next to it; it takes the
#: helper from ``sys.modules[name]`` (or from a fixture below).
HELPERS = {
    "drasim_test_checks_world": TESTS / "unit" / "runner" / "checks_world.py",
    "drasim_test_fake_driver": TESTS / "fake_driver_runs.py",
    "drasim_test_e2e_signals": TESTS / "e2e" / "signals.py",
    "drasim_test_init_repo": TESTS / "e2e" / "init_repo.py",
    "drasim_test_proxy_waiting": TESTS / "integration" / "proxy" / "waiting.py",
    "drasim_test_scenario_passing": TESTS / "scenarios" / "passing.py",
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


#: Set to ``skip`` to run without building drasim's Go programs (their tests then skip).
GO_ENV = "DRASIM_TEST_GO"


def pytest_configure(config: pytest.Config) -> None:
    """Build drasim's Go programs once, before any test, outside every test's timeout.

    Only the main process builds (pytest-xdist workers find the binaries in the cache). Without
    Go the Go-backed tests skip with the reason; with Go, a build that fails stops the run: a
    broken Go program must not pass as skipped tests.
    """
    from drasim import gobuild

    if hasattr(config, "workerinput"):
        return
    problem = gobuild.go_problem()
    if os.environ.get(GO_ENV) == "skip":
        problem = f"{GO_ENV}=skip"
    if problem:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for program in gobuild.programs():
        if gobuild.cached(program) is None:
            started = time.monotonic()
            if reporter is not None:
                reporter.write_line(f"drasim tests: building Go program {program} (cached after) ...")
            try:
                gobuild.build(program)
            except gobuild.GoError as err:
                raise pytest.UsageError(f"building drasim's Go program {program} failed: {err}") from None
            if reporter is not None:
                reporter.write_line(f"drasim tests: built {program} in {time.monotonic() - started:.0f} s")


@pytest.fixture(scope="session")
def go_program() -> Callable[[str], Path]:
    """``go_program("kubelet")``: the cached binary of one of drasim's Go programs.

    Skips the test with the reason when Go is not there (or ``DRASIM_TEST_GO=skip``).
    """
    from drasim import gobuild

    def get(program: str) -> Path:
        problem = gobuild.go_problem() or (f"{GO_ENV}=skip" if os.environ.get(GO_ENV) == "skip" else None)
        if problem:
            pytest.skip(f"drasim's Go program {program} cannot be built here: {problem}")
        binary = gobuild.cached(program)
        if binary is None:  # a program added after the session started, or an xdist worker race
            binary = gobuild.build(program)
        return binary

    return get


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
