"""The documented driver-CI recipes, run from an installed wheel in an empty directory.

One test (it builds and installs once): the sdist is built with setuptools' PEP 517 hooks (as
``python -m build`` does), the wheel with ``pip wheel`` from the unpacked sdist, and the wheel is
installed non-editable into a fresh venv. drasim's dependencies come from the environment running
this test (a ``.pth`` file; no download), but drasim itself only from the wheel: the test checks
that ``import drasim`` resolves inside the venv. Then each recipe's commands, exactly as the docs
write them (the test checks the docs still contain them), run from an empty directory with only
the venv on PATH; ``$DRIVER`` is the fake plugin as a separate process.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

#: The install line and the commands of each documented recipe: (document, command).
RECIPES: list[tuple[str, str]] = [
    ("README.md", "drasim run --suite conformance --junit out.xml --html out.html"),
    (
        "docs/real-driver.md",
        'drasim run --suite conformance --driver-cmd "$DRIVER" --driver-name gpu.example.com '
        "--junit report.xml --html report.html",
    ),
    (
        "docs/real-driver.md",
        'pytest --drasim-suite conformance --drasim-driver-cmd "$DRIVER" '
        "--drasim-driver-name gpu.example.com --drasim-report-dir reports/ -rs",
    ),
    ("docs/scenarios.md", "drasim list --suite conformance"),
]
#: How the docs say to get drasim without PyPI (the test runs the wheel route).
INSTALL = [
    ("docs/real-driver.md", "pip wheel --no-deps -w dist ./drasim"),
    ("docs/real-driver.md", "pip install dist/drasim-*.whl"),
]


def _flat(text: str) -> str:
    """Shell text with line continuations and runs of blanks folded, as the docs wrap commands."""
    return re.sub(r"\s+", " ", text.replace("\\\n", " "))


def _copy_source(dest: Path) -> Path:
    ignore = shutil.ignore_patterns(
        ".git",
        "build",
        "dist",
        "*.egg-info",
        "__pycache__",
        ".*cache",
        ".tox",
        ".hypothesis",
        "drasim-report",
    )
    return Path(shutil.copytree(REPO, dest, ignore=ignore, symlinks=True))


def _run(argv: list[str] | str, cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    print(f"$ {argv}", file=sys.stderr, flush=True)
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        shell=isinstance(argv, str),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, (
        f"{argv}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return done.stdout


def _build_wheel(tmp: Path, env: dict[str, str]) -> Path:
    source = _copy_source(tmp / "checkout")
    sdist_dir = tmp / "sdist"
    hook = "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))"
    name = _run([sys.executable, "-c", hook, str(sdist_dir)], source, env).strip().splitlines()[-1]
    with tarfile.open(sdist_dir / name) as archive:
        archive.extractall(tmp / "unpacked", filter="data")
    (unpacked,) = (tmp / "unpacked").iterdir()
    wheels = tmp / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(unpacked)], tmp, env)
    (wheel,) = wheels.glob("drasim-*.whl")
    return wheel


def _fresh_venv(tmp: Path, wheel: Path, env: dict[str, str]) -> Path:
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
    python = venv / "bin" / "python"
    purelib = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp, env).strip()
    )
    outer = dict.fromkeys(
        [*site.getsitepackages(), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    )
    (purelib / "zz_outer_dependencies.pth").write_text("".join(f"{p}\n" for p in outer))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python)]
    _run([*pip, "install", "--no-deps", "--no-index", str(wheel)], tmp, env)
    return venv


def test_documented_recipes_work_from_an_installed_wheel(tmp_path: Path) -> None:
    docs = {name: _flat((REPO / name).read_text(encoding="utf-8")) for name, _ in [*RECIPES, *INSTALL]}
    for name, command in [*RECIPES, *INSTALL]:
        assert _flat(command) in docs[name], f"{name} no longer gives `{command}`"

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "DRASIM_", "PYTEST_"))}
    wheel = _build_wheel(tmp_path, env)
    venv = _fresh_venv(tmp_path, wheel, env)
    work = tmp_path / "driver-repo"
    work.mkdir()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    python = str(venv / "bin" / "python")
    env["DRIVER"] = shlex.join([python, "-m", "fake_plugins"]) + (
        " --driver-name {driver_name} --node-name {node} --kubeconfig {kubeconfig} --publish-slices"
        " --registry-dir {registrar_dir} --plugin-dir {plugin_dir} --cdi-dir {cdi_dir}"
        " --state-dir {state_dir}"
    )

    # drasim, its library and its Go module come from the venv, not from this checkout.
    where = _run(
        [
            python,
            "-c",
            "import drasim, drasim.gobuild as g, drasim.scenario as s; "
            "print(drasim.__file__); print(s.builtin_scenario_dir()); print(g.source_dir()); "
            "print(','.join(g.programs()))",
        ],
        work,
        env,
    ).split()
    *where, shipped_programs = where
    assert all(Path(p).is_relative_to(venv) for p in where), where
    # Every Go program of the checkout (upstream/cmd/*, with its _overlay files: the file
    # comparison below) is one the installed drasim can build; none is listed by name.
    checkout_programs = sorted(p.name for p in (REPO / "upstream" / "cmd").iterdir() if p.is_dir())
    assert checkout_programs, "no Go program in upstream/cmd"
    assert shipped_programs.split(",") == checkout_programs
    installed = Path(where[0]).parent / "_data"
    for shipped in ("scenarios", "upstream"):
        expected = {
            p.relative_to(REPO / shipped)
            for p in (REPO / shipped).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
        }
        got = {p.relative_to(installed / shipped) for p in (installed / shipped).rglob("*") if p.is_file()}
        assert got == expected, (
            f"{shipped}: missing {sorted(expected - got)[:5]}, extra {sorted(got - expected)[:5]}"
        )

    outputs = {command: _run(command, work, env) for _, command in RECIPES}
    conformance = len(list((REPO / "scenarios" / "conformance").glob("*.yaml")))
    assert outputs["drasim list --suite conformance"].endswith(f"\n{conformance} scenarios\n")
    for report in ("out.xml", "out.html", "report.xml", "report.html"):
        assert (work / report).is_file(), report
    assert list((work / "reports").iterdir()), "the pytest route wrote no reports"
