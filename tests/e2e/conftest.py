"""The real-driver path end to end, with the fake plugin run as a separate process."""

from __future__ import annotations

import importlib
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
DRIVER_CMD: str = sys.modules["drasim_test_fake_driver"].DRIVER_CMD  # loaded by tests/conftest.py


@pytest.fixture
def driver_cmd() -> str:
    """The fake plugin as a driver command template."""
    return DRIVER_CMD
