"""Command-line options and ini settings of the drasim pytest plugin, resolved and validated once.

Every option has an ini twin (the command line wins). Bad values stop pytest in
``pytest_configure`` with a :class:`pytest.UsageError` that names the option.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from drasim.conformance import FAKE_PLUGIN, KNOWN_CAPABILITIES, SUITES, check_capability_names, suite_paths
from drasim.errors import ConfigError
from drasim.pytest_plugin.profile import NAMED_PROFILES, ProfileOverride, load_profile
from drasim.runner.process import PLACEHOLDERS, render_command
from drasim.scenario.limits import DEFAULT_SCENARIO_TIMEOUT, MAX_TIME_SCALE

if TYPE_CHECKING:
    from drasim.runner.world import RunOptions
    from drasim.scenario.schema import Scenario

DEFAULT_GLOBS = ("drasim_*.yaml", "scenarios/**/*.yaml")
REPORT_NAMES = {"junit": "drasim-report.xml", "json": "drasim-report.json", "html": "drasim-report.html"}
SETTINGS_KEY = pytest.StashKey["Settings"]()


def add_options(parser: pytest.Parser) -> None:
    """Register the ``--drasim-*`` options and ``drasim_*`` ini keys."""
    group = parser.getgroup("drasim", "drasim: DRA driver scenarios")
    placeholders = " ".join("{" + p + "}" for p in PLACEHOLDERS)
    group.addoption(
        "--drasim-driver-cmd",
        metavar="CMD",
        help=f"run this driver command instead of the fake plugin; placeholders {placeholders}",
    )
    group.addoption(
        "--drasim-driver-name", metavar="NAME", help="DRA driver name the driver command registers"
    )
    group.addoption(
        "--drasim-kubelet-profile",
        metavar="NAME|FILE",
        help=f"emulated kubelet profile: {', '.join(NAMED_PROFILES)}, or a YAML file of spec.kubelet keys",
    )
    group.addoption(
        "--drasim-kubelet-version",
        metavar="V",
        help="emulate this kubelet release: 1.34, a list 1.31,1.33,1.35 or all "
        "(one test per scenario and version: scenario[kubelet-1.34])",
    )
    group.addoption(
        "--drasim-kubelet",
        metavar="KIND",
        help="whose DRA manager runs the scenarios: emulated (default), upstream (k8s.io/kubernetes' "
        "own, built with Go and cached) or upstream@1.35.4",
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
        "--drasim-time-scale", metavar="X", help="real seconds per kubelet second (1 = real kubelet timers)"
    )
    group.addoption(
        "--drasim-scenario-timeout",
        metavar="SECONDS",
        help="real seconds each scenario may run before it is stopped and fails at the step it was on "
        "(default 600; 0 = no limit)",
    )
    group.addoption(
        "--drasim-capability",
        action="append",
        default=[],
        metavar="CAP",
        help=f"a capability the driver under test has (repeatable; known: {', '.join(KNOWN_CAPABILITIES)})",
    )
    group.addoption(
        "--drasim-keep-workspace",
        action="store_true",
        help="keep each scenario's /tmp/drasim-* directory tree",
    )
    group.addoption(
        "--drasim-workspace-dir",
        metavar="DIR",
        help="create each scenario's directory tree under DIR (default: /dev/shm when usable, else /tmp)",
    )
    group.addoption(
        "--drasim-fsync",
        action="store_true",
        help="fsync the kubelet checkpoint and fake-driver files on every write, as a real node does "
        "(slower on disks; writes are atomic either way)",
    )
    _add_backend_options(group, parser)
    parser.addini("drasim_driver_cmd", "driver command template (see --drasim-driver-cmd)", default="")
    parser.addini("drasim_driver_name", "DRA driver name of drasim_driver_cmd", default="")
    parser.addini("drasim_kubelet_profile", "emulated kubelet profile (name or YAML file)", default="")
    parser.addini("drasim_suite", "built-in scenario suite to collect", default="")
    parser.addini(
        "drasim_kubelet_version", "kubelet version(s) to emulate (see --drasim-kubelet-version)", default=""
    )
    parser.addini("drasim_report_dir", "directory for drasim's JUnit/JSON/HTML reports", default="")
    parser.addini("drasim_time_scale", "real seconds per kubelet second", default="")
    parser.addini("drasim_scenario_timeout", "real seconds each scenario may run (0 = no limit)", default="")
    parser.addini("drasim_capabilities", "capabilities of the driver under test", type="linelist", default=[])
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
    profile: ProfileOverride | None = None
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

    @property
    def capabilities(self) -> frozenset[str]:
        """What the driver under test can do: everything drasim knows for the fake plugin."""
        if self.driver_cmd:
            return self.declared_capabilities - {FAKE_PLUGIN}
        return self.declared_capabilities | frozenset(KNOWN_CAPABILITIES)

    @property
    def driver_label(self) -> str:
        """``the fake plugin`` or ``driver 'cmd...'`` for skip reasons."""
        return "real driver" if self.driver_cmd else "the fake plugin"

    def run_options(self, kubelet_version: str | None = None) -> RunOptions:
        """Runner options for every scenario (for one kubelet version of the matrix)."""
        from drasim.runner.world import RunOptions

        return RunOptions(
            kubelet_version=kubelet_version,
            time_scale=self.time_scale,
            driver_cmd=self.driver_cmd,
            driver_name=self.driver_name,
            keep_workspace=self.keep_workspace,
            fsync=self.fsync,
            kubelet=self.kubelet,
            workspace_dir=self.workspace_dir,
            scenario_timeout=self.scenario_timeout,
            backend=self.backend,
            kubeconfig=self.kubeconfig,
            context=self.context,
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
    driver_cmd, _ = _value(config, "drasim_driver_cmd")
    driver_name, _ = _value(config, "drasim_driver_name")
    if driver_cmd is not None:
        _check_command(driver_cmd)
    if driver_name is not None and driver_cmd is None:
        raise pytest.UsageError(
            "--drasim-driver-name needs --drasim-driver-cmd (or the drasim_driver_cmd ini key)"
        )
    profile_value, profile_base = _value(config, "drasim_kubelet_profile")
    profile = None
    if profile_value is not None:
        try:
            profile = load_profile(profile_value, profile_base)
        except ConfigError as err:
            raise pytest.UsageError(f"--drasim-kubelet-profile: {err}") from None
    kubelet_versions = _kubelet_versions(_value(config, "drasim_kubelet_version")[0])
    suite, _ = _value(config, "drasim_suite")
    suite_dirs: tuple[Path, ...] = ()
    if suite is not None:
        if suite not in SUITES:
            raise pytest.UsageError(
                f"--drasim-suite: unknown suite {suite!r}; valid suites: {', '.join(SUITES)}"
            )
        suite_dirs = tuple(p.resolve() for p in suite_paths(suite))
        missing = [p for p in suite_dirs if not p.is_dir()]
        if missing:
            raise pytest.UsageError(
                f"--drasim-suite {suite}: the scenario directory {missing[0]} does not exist"
            )
    report_value, report_base = _value(config, "drasim_report_dir")
    report_dir = None
    if report_value is not None:
        report_dir = Path(report_value) if Path(report_value).is_absolute() else report_base / report_value
        if report_dir.exists() and not report_dir.is_dir():
            raise pytest.UsageError(f"--drasim-report-dir: {report_dir} exists and is not a directory")
    time_value, _ = _value(config, "drasim_time_scale")
    time_scale = _time_scale(time_value) if time_value is not None else None
    timeout_value, _ = _value(config, "drasim_scenario_timeout")
    scenario_timeout = (
        _scenario_timeout(timeout_value) if timeout_value is not None else DEFAULT_SCENARIO_TIMEOUT
    )
    declared = [*config.getini("drasim_capabilities"), *config.getoption("drasim_capability")]
    capabilities = [c.strip() for item in declared for c in str(item).split(",") if c.strip()]
    bad = check_capability_names(capabilities)
    if bad:
        raise pytest.UsageError(
            f"--drasim-capability: invalid capability name {bad[0]!r} "
            "(lowercase letters, digits, '-' and '.'); "
            f"known capabilities: {', '.join(KNOWN_CAPABILITIES)}"
        )
    root_value, root_base = _value(config, "drasim_root")
    root = Path(config.rootpath)
    if root_value is not None:
        root = Path(root_value) if Path(root_value).is_absolute() else root_base / root_value
    globs = tuple(str(g) for g in config.getini("drasim_scenario_globs"))
    kubelet = _kubelet(config.getoption("drasim_kubelet"), kubelet_versions)
    return Settings(
        driver_cmd=driver_cmd,
        driver_name=driver_name,
        profile=profile,
        suite=suite,
        suite_dirs=suite_dirs,
        report_dir=report_dir,
        time_scale=time_scale,
        scenario_timeout=scenario_timeout,
        declared_capabilities=frozenset(capabilities),
        globs=globs,
        root=root.resolve(),
        keep_workspace=bool(config.getoption("drasim_keep_workspace")),
        fsync=bool(config.getoption("drasim_fsync")),
        workspace_dir=_workspace_dir(config.getoption("drasim_workspace_dir")),
        kubelet_versions=kubelet_versions or _pinned_version(kubelet),
        kubelet=kubelet,
        **_backend(config),
    )


def _pinned_version(kubelet: str) -> tuple[str, ...]:
    """``upstream@1.35.4`` runs as kubelet 1.35 (the emulated profile beside it)."""
    from drasim.upstream_kubelet.choice import parse_kubelet_choice

    minor = parse_kubelet_choice(kubelet).minor_version
    return (minor,) if minor else ()


def _kubelet(value: str | None, versions: tuple[str, ...]) -> str:
    """``--drasim-kubelet``: checked now; upstream binaries are built now (or a UsageError says
    what is missing, e.g. Go)."""
    from drasim.errors import ConfigError
    from drasim.profiles import DEFAULT_VERSION
    from drasim.upstream_kubelet.choice import parse_kubelet_choice, release_for, upstream_binary

    try:
        choice = parse_kubelet_choice(value)
        if choice.upstream:
            for version in versions or (choice.minor_version or DEFAULT_VERSION,):
                upstream_binary(release_for(choice, version))
    except ConfigError as err:
        raise pytest.UsageError(f"--drasim-kubelet: {err}") from None
    return str(choice)


def _kubelet_versions(value: str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    from drasim.profiles import VersionError, parse_version_list

    try:
        return parse_version_list(value)
    except VersionError as err:
        raise pytest.UsageError(f"--drasim-kubelet-version: {err}") from None


# -- backends (issue 12) --------------------------------------------------------------------
def _add_backend_options(group: Any, parser: pytest.Parser) -> None:
    group.addoption(
        "--drasim-backend",
        metavar="NAME",
        help="API server: memory (default), http (drasim's HTTP API server through the kubernetes "
        "client) or kubeconfig (a real cluster; see --drasim-kubeconfig)",
    )
    group.addoption(
        "--drasim-kubeconfig",
        metavar="FILE",
        help="the cluster of --drasim-backend kubeconfig (default: $KUBECONFIG, then ~/.kube/config)",
    )
    group.addoption("--drasim-context", metavar="NAME", help="the kubeconfig context (default: current)")
    parser.addini("drasim_backend", "API server backend: memory, http or kubeconfig", default="")
    parser.addini("drasim_kubeconfig", "kubeconfig of the kubeconfig backend", default="")
    parser.addini("drasim_context", "kubeconfig context of the kubeconfig backend", default="")


def _backend(config: pytest.Config) -> dict[str, Any]:
    """backend, kubeconfig and context; a real cluster is checked once here (one clear line)."""
    from drasim.runner.backend_choice import BACKENDS, default_kubeconfig

    backend, _ = _value(config, "drasim_backend")
    kube_value, kube_base = _value(config, "drasim_kubeconfig")
    context, _ = _value(config, "drasim_context")
    if backend is not None and backend not in BACKENDS:
        raise pytest.UsageError(
            f"--drasim-backend: {backend!r} is not a valid backend; valid backends: {', '.join(BACKENDS)}"
        )
    if backend != "kubeconfig":
        if kube_value is not None or context is not None:
            raise pytest.UsageError(
                "--drasim-kubeconfig and --drasim-context need --drasim-backend kubeconfig"
            )
        return {"backend": backend}
    path = (kube_base / kube_value) if kube_value is not None else default_kubeconfig()
    if path is None:
        raise pytest.UsageError(
            "--drasim-backend kubeconfig needs --drasim-kubeconfig FILE "
            "($KUBECONFIG is unset, no ~/.kube/config)"
        )
    from drasim.runner.preflight import check_cluster

    try:
        check_cluster(path, context)
    except ConfigError as err:
        raise pytest.UsageError(f"--drasim-backend kubeconfig: {err}") from None
    return {"backend": backend, "kubeconfig": path, "context": context}


def _workspace_dir(value: str | None) -> Path | None:
    if not value:
        return None
    from drasim.runner.workspace import check_base

    path = Path(value).resolve()
    try:
        check_base(path)
    except ConfigError as err:
        raise pytest.UsageError(f"--drasim-workspace-dir: {err}") from None
    return path


def _check_command(command: str) -> None:
    dummy = {name: f"<{name}>" for name in PLACEHOLDERS}
    try:
        render_command(command, dummy)
    except ConfigError as err:
        raise pytest.UsageError(f"--drasim-driver-cmd: {err}") from None
    except ValueError as err:  # shlex: unbalanced quotes
        raise pytest.UsageError(f"--drasim-driver-cmd: cannot split {command!r}: {err}") from None


def _time_scale(value: str) -> float:
    try:
        scale = float(value)
    except ValueError:
        raise pytest.UsageError(f"--drasim-time-scale: expected a number, got {value!r}") from None
    if not math.isfinite(scale) or scale <= 0:
        raise pytest.UsageError(f"--drasim-time-scale must be a positive number, got {value!r}")
    if scale > MAX_TIME_SCALE:
        raise pytest.UsageError(f"--drasim-time-scale must be at most {MAX_TIME_SCALE:g}, got {value!r}")
    return scale


def _scenario_timeout(value: str) -> float | None:
    try:
        seconds = float(value)
    except ValueError:
        raise pytest.UsageError(
            f"--drasim-scenario-timeout: expected a number of seconds, got {value!r}"
        ) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise pytest.UsageError(
            f"--drasim-scenario-timeout must be a number of seconds (0 = no limit), got {value!r}"
        )
    return seconds or None


def settings_of(config: Any) -> Settings:
    """The resolved settings stored on ``config`` (defaults when the plugin was not configured)."""
    stash = getattr(config, "stash", None)
    if stash is None:
        return Settings()
    settings: Settings = stash.get(SETTINGS_KEY, Settings())
    return settings
