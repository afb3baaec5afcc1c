"""The house rules, checked in CI: ruff clean everywhere, mypy --strict clean on drasim/, layers kept."""

from __future__ import annotations

import os
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


def _lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on this checkout (not on whatever ``drasim`` is installed elsewhere)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_import_layers_are_kept() -> None:
    """The contracts in .importlinter (docs/architecture.md): kubelet pure, runner below the front ends..."""
    result = _lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_lint_imports_sees_a_broken_layer(tmp_path: Path) -> None:
    """The layer check is real: a contract the code breaks (the kubelet uses its ports) is reported."""
    config = tmp_path / "broken.ini"
    config.write_text(
        "[importlinter]\nroot_packages =\n    drasim\n\n"
        "[importlinter:contract:x]\nname = kubelet without ports\ntype = forbidden\n"
        "source_modules =\n    drasim.kubelet\nforbidden_modules =\n    drasim.interfaces\n"
    )
    result = _lint_imports("--config", str(config))
    assert result.returncode != 0
    assert "drasim.kubelet" in result.stdout
    assert "drasim.interfaces" in result.stdout


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
