"""Command-line options and ini settings of the drasim pytest plugin, resolved and validated once.

Every option has an ini twin (the command line wins). Bad values stop pytest in
``pytest_configure`` with a :class:`pytest.UsageError` that names the option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from drasim.conformance import FAKE_PLUGIN, KNOWN_CAPABILITIES, PROXY, SUITES, suite_paths
from drasim.conformance.driver_options import anchored_command
from drasim.errors import ConfigError
from drasim.limits import DEFAULT_SCENARIO_TIMEOUT
from drasim.optiontable import OPTIONS, add_pytest_options, build_run_options
from drasim.pytest_plugin.profile import NAMED_PROFILES, ProfileOverride, load_profile

if TYPE_CHECKING:
    from drasim.runner.options import RunOptions
    from drasim.scenario.schema import Scenario

DEFAULT_GLOBS = ("drasim_*.yaml", "scenarios/**/*.yaml")
REPORT_NAMES = {"junit": "drasim-report.xml", "json": "drasim-report.json", "html": "drasim-report.html"}
SETTINGS_KEY = pytest.StashKey["Settings"]()


def add_options(parser: pytest.Parser) -> None:
    """Register the ``--drasim-*`` options and ``drasim_*`` ini keys (the run options from the table)."""
    group = parser.getgroup("drasim", "drasim: DRA driver scenarios")
    add_pytest_options(group, parser)  # the run options (drasim/optiontable.py)
    group.addoption(
        "--drasim-kubelet-profile",
        metavar="NAME|FILE",
        help=f"emulated kubelet profile: {', '.join(NAMED_PROFILES)}, or a YAML file of spec.kubelet keys",
    )
    group.addoption(
        "--drasim-suite",
        metavar="NAME",
        help=f"collect a built-in scenario suite ({', '.join(SUITES)})",
    )
    group.addoption(
        "--drasim-report-dir", metavar="DIR", help="write JUnit, JSON and HTML drasim reports here"
    )
    group.addoption(
        "--drasim-shard",
        metavar="K/N",
        help="run only shard K of N (1 <= K <= N) for N parallel CI jobs: scenario rows split as by "
        "drasim run --shard, other tests by node id; the rest are deselected",
    )
    parser.addini("drasim_kubelet_profile", "emulated kubelet profile (name or YAML file)", default="")
    parser.addini("drasim_suite", "built-in scenario suite to collect", default="")
    parser.addini("drasim_report_dir", "directory for drasim's JUnit/JSON/HTML reports", default="")
    parser.addini(
        "drasim_scenario_globs",
        "scenario file globs (relative to drasim_root; a glob without '/' matches file names anywhere)",
        type="linelist",
        default=list(DEFAULT_GLOBS),
    )
    parser.addini(
        "drasim_root", "directory the scenario globs are relative to (default: rootdir)", default=""
    )


@dataclass(frozen=True)
class Settings:
    """The plugin's resolved configuration."""

    driver_cmd: str | None = None
    driver_name: str | None = None
    proxy: bool = True
    profile: ProfileOverride | None = None
    profile_source: str | None = None
    """``--drasim-kubelet-profile`` as a name or an absolute file path (for reproduce lines)."""
    suite: str | None = None
    suite_dirs: tuple[Path, ...] = ()
    report_dir: Path | None = None
    time_scale: float | None = None
    scenario_timeout: float | None = DEFAULT_SCENARIO_TIMEOUT
    declared_capabilities: frozenset[str] = frozenset()
    globs: tuple[str, ...] = DEFAULT_GLOBS
    root: Path = field(default_factory=Path.cwd)
    keep_workspace: bool = False
    fsync: bool = False
    workspace_dir: Path | None = None
    kubelet_versions: tuple[str, ...] = ()
    backend: str | None = None
    kubeconfig: Path | None = None
    context: str | None = None
    kubelet: str = "emulated"
    shard: tuple[int, int] | None = None
    """``--drasim-shard K/N`` as ``(K, N)``."""

    @property
    def capabilities(self) -> frozenset[str]:
        """What the driver under test can do: everything drasim knows for the fake plugin."""
        if self.driver_cmd:
            proxied = frozenset({PROXY}) if self.proxy else frozenset()
            return self.declared_capabilities - {FAKE_PLUGIN, PROXY} | proxied
        return self.declared_capabilities | frozenset(KNOWN_CAPABILITIES)

    @property
    def driver_label(self) -> str:
        """``the fake plugin`` or ``driver 'cmd...'`` for skip reasons."""
        return "real driver" if self.driver_cmd else "the fake plugin"

    def run_options(self, kubelet_version: str | None = None) -> RunOptions:
        """Runner options for every scenario (for one kubelet version of the matrix)."""
        from drasim.runner.options import RunOptions

        return RunOptions(
            kubelet_version=kubelet_version,
            time_scale=self.time_scale,
            driver_cmd=self.driver_cmd,
            driver_name=self.driver_name,
            capabilities=tuple(sorted(self.declared_capabilities)),  # the runner checks them again
            proxy=self.proxy,
            keep_workspace=self.keep_workspace,
            fsync=self.fsync,
            workspace_dir=self.workspace_dir,
            scenario_timeout=self.scenario_timeout,
            backend=self.backend,
            kubeconfig=self.kubeconfig,
            context=self.context,
            kubelet=self.kubelet,
        )

    def prepare(self, scenario: Scenario) -> Scenario:
        """``scenario`` with the configured kubelet profile applied."""
        return self.profile.apply(scenario) if self.profile is not None else scenario


def _value(config: pytest.Config, name: str) -> tuple[str | None, Path]:
    """An option's value (command line first, then ini) and the directory relative paths start from."""
    cli = config.getoption(name, default=None)
    if cli not in (None, ""):
        return str(cli), Path(config.invocation_params.dir)
    ini = config.getini(name)
    base = config.inipath.parent if config.inipath is not None else Path(config.rootpath)
    return (str(ini) if ini not in (None, "") else None), base


def resolve(config: pytest.Config) -> Settings:
    """Read and check every option; raises pytest.UsageError with a clear message."""
    run = _run_options(config)
    if run.backend == "kubeconfig" and run.kubeconfig is not None:
        from drasim.runner.preflight import check_cluster

        try:
            check_cluster(run.kubeconfig, run.context)  # one clear line when it cannot work
        except ConfigError as err:
            raise pytest.UsageError(f"--drasim-backend kubeconfig: {err}") from None
    suite, suite_dirs = _suite(_value(config, "drasim_suite")[0])
    root_value, root_base = _value(config, "drasim_root")
    root = Path(config.rootpath)
    if root_value is not None:
        root = Path(root_value) if Path(root_value).is_absolute() else root_base / root_value
    return Settings(
        driver_cmd=run.driver_cmd,
        driver_name=run.driver_name,
        proxy=run.proxy,
        profile=_profile(config),
        profile_source=_profile_source(config),
        suite=suite,
        suite_dirs=suite_dirs,
        report_dir=_report_dir(config),
        time_scale=run.time_scale,
        scenario_timeout=run.scenario_timeout,
        declared_capabilities=frozenset(run.capabilities),
        globs=tuple(str(g) for g in config.getini("drasim_scenario_globs")),
        root=root.resolve(),
        keep_workspace=run.keep_workspace,
        fsync=run.fsync,
        workspace_dir=run.workspace_dir,
        kubelet_versions=run.kubelet_versions,
        backend=run.backend,
        kubeconfig=run.kubeconfig,
        context=run.context,
        kubelet=run.kubelet,
        shard=_shard(config),
    )


def _run_options(config: pytest.Config) -> RunOptions:
    """The table's run options: the command line first, then the ini key (relative paths from
    where each was given)."""
    values: dict[str, Any] = {}
    bases: dict[str, Path] = {}
    for option in OPTIONS:
        if not option.pytest:
            continue
        if option.kind == "list" and option.ini:  # the ini file's entries, then the command line's
            values[option.field] = [*config.getini(option.ini_key), *config.getoption(option.dest)]
            bases[option.field] = Path(config.invocation_params.dir)
        elif option.kind in ("flag", "off") or not option.ini:
            values[option.field] = config.getoption(option.dest)
            bases[option.field] = Path(config.invocation_params.dir)
        else:
            values[option.field], bases[option.field] = _value(config, option.dest)
    if values.get("driver_cmd"):  # ./bin/driver: from the ini file's (or the command line's) directory
        values["driver_cmd"] = anchored_command(values["driver_cmd"], bases["driver_cmd"])
    try:
        return build_run_options(values, flag=lambda option: option.pytest_flag, bases=bases)
    except ConfigError as err:
        raise pytest.UsageError(str(err)) from None


def _profile(config: pytest.Config) -> ProfileOverride | None:
    value, base = _value(config, "drasim_kubelet_profile")
    if value is None:
        return None
    try:
        return load_profile(value, base)
    except ConfigError as err:
        raise pytest.UsageError(f"--drasim-kubelet-profile: {err}") from None


def _profile_source(config: pytest.Config) -> str | None:
    value, base = _value(config, "drasim_kubelet_profile")
    if value is None or value in NAMED_PROFILES:
        return value
    return str((base / value).resolve())


def _suite(suite: str | None) -> tuple[str | None, tuple[Path, ...]]:
    if suite is None:
        return None, ()
    if suite not in SUITES:
        raise pytest.UsageError(f"--drasim-suite: unknown suite {suite!r}; valid suites: {', '.join(SUITES)}")
    suite_dirs = tuple(p.resolve() for p in suite_paths(suite))
    missing = [p for p in suite_dirs if not p.is_dir()]
    if missing:
        raise pytest.UsageError(f"--drasim-suite {suite}: the scenario directory {missing[0]} does not exist")
    return suite, suite_dirs


def _shard(config: pytest.Config) -> tuple[int, int] | None:
    from drasim.runner.shard import parse_shard

    try:
        return parse_shard(config.getoption("drasim_shard"), "--drasim-shard")
    except ConfigError as err:
        raise pytest.UsageError(str(err)) from None


def _report_dir(config: pytest.Config) -> Path | None:
    value, base = _value(config, "drasim_report_dir")
    if value is None:
        return None
    report_dir = Path(value) if Path(value).is_absolute() else base / value
    if report_dir.exists() and not report_dir.is_dir():
        raise pytest.UsageError(f"--drasim-report-dir: {report_dir} exists and is not a directory")
    return report_dir


def settings_of(config: Any) -> Settings:
    """The resolved settings stored on ``config`` (defaults when the plugin was not configured)."""
    stash = getattr(config, "stash", None)
    if stash is None:
        return Settings()
    settings: Settings = stash.get(SETTINGS_KEY, Settings())
    return settings
