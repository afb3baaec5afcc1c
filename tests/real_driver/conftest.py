"""Opt-in tests against a real kubelet plugin: the upstream example driver.

Point ``DRASIM_EXAMPLE_DRIVER`` at a ``dra-example-kubeletplugin`` binary (built as the
kubernetes-sigs/dra-example-driver README describes) and run::

    DRASIM_EXAMPLE_DRIVER=/path/to/dra-example-kubeletplugin python -m pytest -m real_driver

Without it every test here is skipped with that reason. docs/real-driver.md has the
results these tests pin down.

Every test here is marked ``real_driver`` and ``slow``, and takes what it shares from the
fixtures below and ``e2e_signals`` in tests/conftest.py (which loads the helper files).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from types import ModuleType

import pytest

ENV = "DRASIM_EXAMPLE_DRIVER"
HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test in this directory carries the ``real_driver`` and ``slow`` markers."""
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.real_driver)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def expected() -> ModuleType:
    """expected.py: what the example driver passes, skips and fails (docs/real-driver.md)."""
    return sys.modules["drasim_real_driver_expected"]


@pytest.fixture(scope="session")
def repo_env() -> dict[str, str]:
    """Our environment with this checkout first on the Python path, for the subprocesses."""
    path = [str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))


@pytest.fixture(scope="session")
def example_driver() -> Path:
    """The binary named by ``DRASIM_EXAMPLE_DRIVER`` (the tests are skipped without it)."""
    value = os.environ.get(ENV, "")
    if not value:
        pytest.skip(
            f"{ENV} is not set: point it at a dra-example-kubeletplugin binary to run the "
            "real-driver tests (see docs/real-driver.md)"
        )
    path = Path(value)
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.skip(f"{ENV}={value}: not an executable file")
    return path


@pytest.fixture(scope="session")
def example_driver_cmd(example_driver: Path) -> str:
    """The ``--driver-cmd`` template docs/real-driver.md gives for the example driver."""
    return shlex.join([str(example_driver)]) + (
        " --node-name={node} --kubeconfig={kubeconfig}"
        " --kubelet-registrar-directory-path={registrar_dir} --kubelet-plugins-directory-path={plugins_dir}"
        " --cdi-root={cdi_dir} --num-devices=4 -v=4"
    )
