"""The house rules, checked in CI: ruff clean everywhere, mypy --strict clean on drasim/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["drasim", "fake_plugins", "tests", "benchmarks", "tools"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def test_ruff_check_is_clean() -> None:
    result = _run("ruff", "check", *PATHS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run("ruff", "format", "--check", *PATHS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_optional_test_import_is_in_the_test_extra() -> None:
    """A test that `importorskip`s a third-party package must get it from `pip install '.[test]'`.

    Otherwise CI (which installs the test extra) skips the test forever and nobody notices.
    """
    import re
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = config["project"]["dependencies"] + config["project"]["optional-dependencies"]["test"]
    installed = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower().replace("-", "_") for d in deps}
    modules = set()
    for path in (ROOT / "tests").rglob("*.py"):
        modules |= set(re.findall(r"importorskip\(\s*[\"']([A-Za-z0-9_]+)", path.read_text()))
    ours = {"drasim", "fake_plugins"}
    # import name -> distribution name where they differ
    distributions = {"grpc_tools": "grpcio_tools", "yaml": "pyyaml"}
    missing = sorted(m for m in modules - ours if distributions.get(m, m) not in installed)
    assert missing == [], f"add to [project.optional-dependencies] test: {missing}"
