"""``drasim init``: a DRA driver repository's drasim tests and CI in one step.

Writes into the repository (default: the current directory):

``pytest.ini``
    the pytest plugin's configuration: the conformance suite, the driver command and name,
    what the driver supports, drasim's report directory, pytest's JUnit with the journal and
    the driver's log (``junit_logging = all``), and ``testpaths = scenarios``.
``conftest.py``
    ``KNOWN_BUGS``: scenario name -> reason, marked strict expected failures (a fix shows up
    as XPASS(strict) and fails the run, so the list stays true).
``scenarios/<name>-round-trip.yaml``
    one scenario of the driver's own, to copy from.
``.github/workflows/drasim.yml``
    a GitHub Actions workflow: build the driver, install drasim, run the tests for each kubelet
    version of a matrix, keep pytest's JUnit and drasim's JUnit/JSON/HTML reports as artifacts.

Nothing is written when any of the files exists (unless ``--force``), or when an argument is
bad (exit status 2).
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any

from drasim.errors import ConfigError

KUBELET_VERSIONS = ("1.34", "1.35", "1.36", "1.37")
"""The default matrix: the kubelet releases with resource.k8s.io/v1 that drasim emulates."""
DEFAULT_BUILD = "go build -o bin/ ./cmd/..."
REPORT_DIR = "drasim-reports"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_VERSION = re.compile(r"^1\.\d{1,3}$")
_CAPABILITY = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


def register(subparsers: Any) -> None:
    """Add the ``init`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "init",
        help="write drasim's pytest config, a scenario and a CI workflow into a driver repository",
        description=(
            "Write into a DRA driver's repository what it needs to run drasim in CI: pytest.ini "
            "(the conformance suite against the driver command), conftest.py (known driver bugs "
            "as strict expected failures), scenarios/ with one example, and "
            ".github/workflows/drasim.yml (build, test per kubelet version, reports as artifacts)."
        ),
    )
    parser.add_argument("directory", nargs="?", type=Path, default=Path(), help="the repository (default: .)")
    parser.add_argument(
        "--driver-cmd",
        required=True,
        metavar="TEMPLATE",
        help="the driver command, as for drasim run --driver-cmd (relative to the repository root)",
    )
    parser.add_argument(
        "--driver-name", required=True, metavar="NAME", help="the DRA driver name it registers"
    )
    parser.add_argument(
        "--capability",
        action="append",
        default=[],
        metavar="NAME",
        help="something the driver supports, e.g. health (repeatable)",
    )
    parser.add_argument(
        "--build",
        default=DEFAULT_BUILD,
        metavar="COMMAND",
        help=f"the CI build step (default: {DEFAULT_BUILD})",
    )
    parser.add_argument(
        "--kubelet-versions",
        default=",".join(KUBELET_VERSIONS),
        metavar="LIST",
        help=f"the CI matrix of kubelet versions (default: {','.join(KUBELET_VERSIONS)})",
    )
    parser.add_argument(
        "--install",
        default="",
        metavar="REQUIREMENT",
        help="what CI installs with pip (a git URL or a wheel; default: drasim's repository, "
        "checked out and built into a wheel: drasim is not on PyPI)",
    )
    parser.add_argument(
        "--from-repo",
        default=DRASIM_REPO_PLACEHOLDER,
        metavar="OWNER/NAME",
        help="the GitHub repository CI checks drasim out from when --install is not given",
    )
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the arguments, then write every file (or none)."""
    files = render(
        driver_cmd=args.driver_cmd,
        driver_name=args.driver_name,
        capabilities=args.capability,
        build=args.build,
        kubelet_versions=args.kubelet_versions,
        install=args.install,
        from_repo=args.from_repo,
    )
    root: Path = args.directory
    if not root.is_dir():
        raise ConfigError(f"{root}: not a directory")
    existing = [name for name in files if (root / name).exists()]
    if existing and not args.force:
        raise ConfigError(
            f"{root}: {', '.join(existing)} already exist; nothing was written (--force overwrites)"
        )
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.drasim-tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        print(f"wrote {path}")
    print("next: build the driver, then run `python -m pytest` here (see pytest.ini)")
    if not args.install and args.from_repo == DRASIM_REPO_PLACEHOLDER:
        print(
            f"edit .github/workflows/drasim.yml: {DRASIM_REPO_PLACEHOLDER} stands for drasim's repository "
            "(or run drasim init again with --from-repo or --install)"
        )
    return 0


def render(
    *,
    driver_cmd: str,
    driver_name: str,
    capabilities: list[str],
    build: str,
    kubelet_versions: str,
    install: str,
    from_repo: str = "",
) -> dict[str, str]:
    """Every file, by its path relative to the repository; raises ConfigError for bad input."""
    from drasim.runner.process import PLACEHOLDERS, render_command

    if not _NAME.match(driver_name) or len(driver_name) > 63:
        raise ConfigError(f"--driver-name {driver_name!r}: expected a DNS subdomain such as gpu.example.com")
    render_command(driver_cmd, {p: f"<{p}>" for p in PLACEHOLDERS})  # a clear error for a bad template
    if not install and not _REPO.match(from_repo or DRASIM_REPO_PLACEHOLDER):
        raise ConfigError(f"--from-repo {from_repo!r}: expected OWNER/NAME of a GitHub repository")
    if "\n" in driver_cmd or "\n" in build or "\n" in install:
        raise ConfigError("--driver-cmd, --build and --install must be one line each")
    caps = [c.strip() for item in capabilities for c in item.split(",") if c.strip()]
    bad = [c for c in caps if not _CAPABILITY.match(c) or c == "fake-plugin"]
    if bad:
        raise ConfigError(
            f"--capability: {', '.join(map(repr, bad))} is not a capability a driver can declare"
        )
    versions = [v.strip() for v in kubelet_versions.split(",") if v.strip()]
    if not versions or any(not _VERSION.match(v) for v in versions):
        raise ConfigError(f"--kubelet-versions {kubelet_versions!r}: expected a list such as 1.34,1.37")
    if not build.strip():
        raise ConfigError("--build: empty command")
    slug = driver_name.split(".", 1)[0]
    scenario = _scenario(slug, driver_name)
    _check_scenario(scenario)
    return {
        "pytest.ini": _pytest_ini(driver_cmd, driver_name, caps),
        "conftest.py": CONFTEST,
        f"scenarios/{slug}-round-trip.yaml": scenario,
        ".github/workflows/drasim.yml": _workflow(
            build, install or None, versions, from_repo or DRASIM_REPO_PLACEHOLDER
        ),
    }


def _pytest_ini(driver_cmd: str, driver_name: str, caps: list[str]) -> str:
    lines = [
        "# drasim: the DRA conformance suite and scenarios/ against this driver (written by drasim init).",
        "# Run `python -m pytest` after building the driver; --drasim-kubelet-version 1.34 picks a kubelet.",
        "[pytest]",
        "addopts = -ra -p no:cacheprovider",
        "testpaths = scenarios",
        "drasim_suite = conformance",
        f"drasim_driver_cmd = {driver_cmd}",
        f"drasim_driver_name = {driver_name}",
    ]
    if caps:
        lines.append("drasim_capabilities =")
        lines += [f"    {c}" for c in caps]
    lines += [f"drasim_report_dir = {REPORT_DIR}", "junit_logging = all", ""]
    return "\n".join(lines)


CONFTEST = '''"""drasim tests of this driver (written by drasim init).

List a scenario the driver fails because of a known bug here, with the reason (an issue
link): it then runs as a strict expected failure, and once the bug is fixed the run fails
with XPASS(strict) until the entry is removed.
"""

import pytest

KNOWN_BUGS: dict[str, str] = {
    # "conformance-exclusive-devices": "https://github.com/<org>/<driver>/issues/<n>",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = KNOWN_BUGS.get(item.name.split("[", 1)[0])
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
'''


def _scenario(slug: str, driver_name: str) -> str:
    return f"""apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: {slug}-round-trip
  description: >-
    A pod with one claim runs with the driver's device and CDI spec;
    when it goes, the claim is unprepared and its CDI spec removed.
  tags: [{slug}]
spec:
  driver:
    # Replaced by drasim_driver_cmd (pytest.ini); the name is the driver's.
    fake: {{name: {driver_name}}}
  claims:
    - {{name: gpu}}
  steps:
    - startPod: {{name: a, claims: [gpu]}}
    - expectPod: {{pod: a, phase: Running}}
    - expectCdiSpecs: {{valid: true, resolvable: true}}
    - deletePod: a
    - expectCalls:
        calls:
          - {{method: NodePrepareResources, claims: [gpu], code: OK}}
          - {{method: NodeUnprepareResources, claims: [gpu], code: OK}}
    - expectCheckpoint: {{entries: 0}}
    - expectCdiSpecs: {{claimSpecs: 0}}
"""


def _check_scenario(text: str) -> None:
    from drasim.scenario.loader import load_text

    load_text(text, "<drasim init scenario>")


DRASIM_REPO_PLACEHOLDER = "OWNER/drasim"
"""Stands for drasim's GitHub repository in the workflow until ``--from-repo`` names it."""
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _install_steps(install: str | None, repo: str) -> str:
    """The workflow's steps that install drasim: ``install`` with pip, or (drasim is not on PyPI)
    drasim's repository checked out and built into a wheel, as docs/real-driver.md does."""
    if install is not None:
        return f"""      - name: Install drasim
        run: python -m pip install {_yaml_scalar(shlex.quote(install))}
"""
    return f"""      - name: Get drasim (not on PyPI; its repository)
        uses: actions/checkout@v4
        with:
          repository: {repo}
          path: .drasim-src
      - name: Install drasim
        run: >-
          python -m pip wheel --no-deps -w .drasim-dist ./.drasim-src
          && python -m pip install .drasim-dist/drasim-*.whl
"""


def _workflow(build: str, install: str | None, versions: list[str], repo: str) -> str:
    matrix = ", ".join(f'"{v}"' for v in versions)
    return f"""# drasim: the DRA conformance suite and scenarios/ against this driver (drasim init wrote it).
name: drasim
on:
  push:
  pull_request:
jobs:
  drasim:
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix:
        kubelet: [{matrix}]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version-file: go.mod
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Build the driver
        run: {_yaml_scalar(build)}
{_install_steps(install, repo)}\
      - name: Conformance suite and scenarios/ (kubelet ${{{{ matrix.kubelet }}}})
        run: >-
          python -m pytest --drasim-kubelet-version ${{{{ matrix.kubelet }}}}
          --junitxml {REPORT_DIR}/pytest-junit.xml
      - name: Keep the reports
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: drasim-reports-kubelet-${{{{ matrix.kubelet }}}}
          path: {REPORT_DIR}/
"""


def _yaml_scalar(text: str) -> str:
    """``text`` as a YAML plain scalar if it is one, else single-quoted."""
    import yaml

    dumped = yaml.safe_dump(text, default_style=None).strip()
    return dumped.removesuffix("\n...").strip()
