"""Shared fixtures for drasim's own tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture
def short_socket_dir() -> Iterator[Path]:
    """A directory under /tmp short enough for unix socket paths (sun_path is 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="drasim-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
