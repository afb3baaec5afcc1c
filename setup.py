"""Packaging hook: a wheel carries the built-in scenario library and drasim's Go module.

``scenarios/`` and ``upstream/`` stay at the top of the checkout (where contributors and an
editable install use them); a wheel gets a copy of each as package data under ``drasim/_data/``,
found there by ``drasim.scenario.library`` and ``drasim.gobuild``. MANIFEST.in puts both
directories into the sdist, so a wheel built from the sdist (``python -m build``) has them too.
Everything else is configured in pyproject.toml.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("scenarios", "upstream")
DATA = Path("drasim") / "_data"


def shipped_files(root: Path) -> Iterator[Path]:
    """Every file under the shipped directories, relative to ``root`` (no dotfiles, no caches)."""
    for name in SHIPPED:
        for path in sorted((root / name).rglob("*")):
            parts = path.relative_to(root).parts
            if path.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in parts):
                yield path.relative_to(root)


class BuildPyWithData(build_py):
    """``build_py`` that also copies the shipped directories into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own directories
        for rel in shipped_files(ROOT):
            target = Path(self.build_lib) / DATA / rel
            self.mkpath(str(target.parent))
            self.copy_file(str(ROOT / rel), str(target), preserve_mode=False)


setup(cmdclass={"build_py": BuildPyWithData})
