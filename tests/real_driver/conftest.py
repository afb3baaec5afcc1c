"""Opt-in tests against a real kubelet plugin: the upstream example driver.

Point ``DRASIM_EXAMPLE_DRIVER`` at a ``dra-example-kubeletplugin`` binary (built as the
kubernetes-sigs/dra-example-driver README describes) and run::

    DRASIM_EXAMPLE_DRIVER=/path/to/dra-example-kubeletplugin python -m pytest -m real_driver

Without it every test here is skipped with that reason. docs/real-driver.md has the
results these tests pin down.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

ENV = "DRASIM_EXAMPLE_DRIVER"
HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test in this directory carries the ``real_driver`` marker."""
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.real_driver)


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
