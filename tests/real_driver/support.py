"""Helpers of the real-driver tests (loaded by path: the tests are not a package)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def repo_env() -> dict[str, str]:
    """Our environment with this checkout first on the Python path."""
    path = [str(REPO), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))
