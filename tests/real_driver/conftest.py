"""The real-driver tier: drasim's scenarios against real DRA kubelet plugin binaries.

Every test here runs once per real driver (the ``real_driver`` fixture's parameters):

``test-driver``
    Kubernetes' own DRA test driver (test/e2e/dra/test-driver, kubelet-plugin mode), built
    by drasim's Go module (``upstream/cmd/test-driver``): tests/conftest.py builds it with
    drasim's other Go programs before the tests, and the ``go_program`` fixture hands it out.
    Runs in the default test run whenever Go is on PATH; skipped with the reason otherwise
    (or with ``DRASIM_TEST_GO=skip``). The first run builds it (about a minute with a warm Go
    build cache); later runs reuse it.
``example-driver``
    kubernetes-sigs/dra-example-driver's ``dra-example-kubeletplugin``. The Go module proxy
    does not serve that module, so it is opt-in: build it as its README says and point
    ``DRASIM_EXAMPLE_DRIVER`` at the binary.

docs/real-driver.md has the results these tests pin down (tests/real_driver/expected.py).
Every test here carries the ``real_driver`` and ``slow`` markers; ``-m "not real_driver"``
leaves the tier out.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

EXAMPLE_ENV = "DRASIM_EXAMPLE_DRIVER"
HERE = Path(__file__).parent
DRIVERS = ("test-driver", "example-driver")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test in this directory carries the ``real_driver`` and ``slow`` markers."""
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.real_driver)
            item.add_marker(pytest.mark.slow)


@dataclass(frozen=True)
class RealDriver:
    """A real driver binary and how drasim runs it."""

    id: str
    cmd: str
    """The --driver-cmd template."""
    driver_name: str
    """The DRA driver name it registers (--driver-name)."""
    process_name: str
    """A text of its /proc/<pid>/cmdline."""
    expected: Any
    """Its tests/real_driver/expected.py entry."""
    log_lines: tuple[str, ...]
    """Texts of its log that a prepare-unprepare round trip writes (klog, -v=4)."""

    def run_args(self) -> list[str]:
        """``drasim run`` options: its declared capabilities, and ``--no-proxy`` where it was measured so."""
        caps = [arg for cap in self.expected.capabilities for arg in ("--capability", cap)]
        return caps if self.expected.proxy else [*caps, "--no-proxy"]

    def pytest_args(self) -> list[str]:
        """The same as pytest options (``--drasim-capability``, ``--drasim-no-proxy``)."""
        caps = [arg for cap in self.expected.capabilities for arg in ("--drasim-capability", cap)]
        return caps if self.expected.proxy else [*caps, "--drasim-no-proxy"]


@pytest.fixture(scope="session")
def expected() -> ModuleType:
    """expected.py: what each real driver passes, skips and fails (docs/real-driver.md)."""
    return sys.modules["drasim_real_driver_expected"]


@pytest.fixture(scope="session")
def repo_env() -> dict[str, str]:
    """Our environment with this checkout first on the Python path, for the subprocesses."""
    path = [str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))


def test_driver_template(binary: Path) -> str:
    """The --driver-cmd template docs/real-driver.md gives for the test driver."""
    return shlex.join([str(binary)]) + (
        " --drivername={driver_name} --node-name={node} --plugin-registration-path={registrar_dir}"
        " --datadir={plugins_dir} --cdi-dir={cdi_dir} -v=4"
    )


def example_driver_binary() -> Path:
    """The binary named by ``DRASIM_EXAMPLE_DRIVER`` (skipped without it)."""
    value = os.environ.get(EXAMPLE_ENV, "")
    if not value:
        pytest.skip(
            f"{EXAMPLE_ENV} is not set: point it at a dra-example-kubeletplugin binary to run the "
            "example driver's tests (the Go module proxy does not serve it; see docs/real-driver.md)"
        )
    path = Path(value)
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.skip(f"{EXAMPLE_ENV}={value}: not an executable file")
    return path


def example_driver_cmd(binary: Path) -> str:
    """The ``--driver-cmd`` template docs/real-driver.md gives for the example driver."""
    return shlex.join([str(binary)]) + (
        " --node-name={node} --kubeconfig={kubeconfig}"
        " --kubelet-registrar-directory-path={registrar_dir} --kubelet-plugins-directory-path={plugins_dir}"
        " --cdi-root={cdi_dir} --num-devices=4 -v=4"
    )


def _make(driver_id: str, expected: ModuleType, go_program: Callable[[str], Path]) -> RealDriver:
    if driver_id == "test-driver":
        return RealDriver(
            id="test-driver",
            cmd=test_driver_template(go_program("test-driver")),
            driver_name="gpu.example.com",
            process_name="drasim-test-driver",
            expected=expected.TEST_DRIVER,
            log_lines=("resourceslicecontroller.go", '"CDI file(s) created"'),
        )
    return RealDriver(
        id="example-driver",
        cmd=example_driver_cmd(example_driver_binary()),
        driver_name="gpu.example.com",
        process_name="dra-example-kubeletplugin",
        expected=expected.EXAMPLE_DRIVER,
        log_lines=("draplugin.go", '"PrepareResourceClaims is called"'),
    )


@pytest.fixture(scope="session")
def real_drivers(expected: ModuleType, go_program: Callable[[str], Path]) -> Callable[[str], RealDriver]:
    """A real driver by its id (``test-driver``, ``example-driver``); skips where it is not available."""
    made: dict[str, RealDriver] = {}

    def get(driver_id: str) -> RealDriver:
        if driver_id not in made:
            made[driver_id] = _make(driver_id, expected, go_program)
        return made[driver_id]

    return get


@pytest.fixture(scope="session", params=DRIVERS)
def real_driver(request: pytest.FixtureRequest, real_drivers: Callable[[str], RealDriver]) -> RealDriver:
    """Each real driver in turn (skipped, with the reason, where it is not available)."""
    return real_drivers(request.param)
