"""The real-driver path end to end, with the fake plugin run as a separate process."""

from __future__ import annotations

import importlib
import shlex
import sys

import pytest

for _module in (
    "drasim.runner.run",
    "drasim.runner.actions",
    "drasim.runner.expectations",
    "fake_plugins.driver",
):
    importlib.import_module(_module)  # kept across pytester's in-process runs (see tests/plugin)

#: What a driver author would pass: every path and name comes from drasim's placeholders.
DRIVER_CMD = shlex.join([sys.executable, "-m", "fake_plugins"]) + (
    " --driver-name {driver_name} --node-name {node} --kubeconfig {kubeconfig} --publish-slices"
    " --registry-dir {registrar_dir} --plugin-dir {plugin_dir} --cdi-dir {cdi_dir} --state-dir {state_dir}"
)


@pytest.fixture
def driver_cmd() -> str:
    """The fake plugin as a driver command template."""
    return DRIVER_CMD
