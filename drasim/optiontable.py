"""The run options, declared once: one row per option, for ``drasim run`` and the pytest plugin.

Each :class:`Option` row holds the option's :class:`~drasim.runner.options.RunOptions` field, its
flag (``--time-scale``; the pytest plugin's is ``--drasim-time-scale`` and its ini key
``drasim_time_scale``), its help, how a value is parsed and checked, and which front ends have
it. :func:`add_arguments` generates the ``drasim run`` flags, :func:`add_pytest_options` the
pytest options and ini keys, and :func:`build_run_options` turns the given values into
``RunOptions`` with one error message per bad value, naming the flag as the user wrote it. A new
run option is one row here plus its ``RunOptions`` field (hypothesis' settings and pytest's
``addoption``/``addini`` are the models).
"""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from drasim.errors import ConfigError
from drasim.limits import DEFAULT_SCENARIO_TIMEOUT, MAX_TIME_SCALE
from drasim.runner.backend_choice import BACKENDS
from drasim.runner.options import RunOptions
from drasim.scenario.common import BUG_NAMES

__all__ = ["OPTIONS", "Option", "add_arguments", "add_pytest_options", "build_run_options", "capability_name"]

Kind = Literal["value", "flag", "off", "list"]
Parse = Callable[[str, Path], Any]
"""A value as given (a string) and the directory relative paths start from -> the field's value;
raises ConfigError with a message that follows the flag (``must be ...`` or ``: ...``)."""


@dataclass(frozen=True)
class Option:
    """One run option (see the module docstring)."""

    field: str
    """The RunOptions field it sets."""
    flag: str
    """``drasim run``'s flag; the pytest plugin's is ``--drasim-`` and the same name."""
    help: str
    metavar: str | None = None
    kind: Kind = "value"
    """``value`` (one string), ``flag`` (given: the field is True), ``off`` (given: a field that is
    True by default is False, as ``--no-proxy``) or ``list`` (repeatable, comma-separated too)."""
    parse: Parse | None = None
    """How a value becomes the field's (None: the string itself)."""
    cli: bool = True
    """``drasim run`` has it."""
    pytest: bool = True
    """The pytest plugin has it."""
    ini: bool = True
    """The pytest plugin has an ini key for it too (the command line wins; a ``list`` option's
    ini entries and command-line entries add up)."""
    ini_name: str | None = None
    """The ini key when it is not :attr:`dest` (``drasim_capabilities``, one per line)."""

    @property
    def pytest_flag(self) -> str:
        """``--drasim-time-scale``."""
        return "--drasim-" + self.flag.removeprefix("--")

    @property
    def dest(self) -> str:
        """The pytest option's name: ``drasim_time_scale``."""
        return "drasim_" + self.flag.removeprefix("--").replace("-", "_")

    @property
    def ini_key(self) -> str:
        """The pytest ini key: :attr:`dest` unless the row names another."""
        return self.ini_name or self.dest


# ------------------------------------------------------------------ parsers
def _time_scale(value: str, _base: Path) -> float:
    try:
        scale = float(value)
    except ValueError:
        raise ConfigError(f": expected a number, got {value!r}") from None
    if not math.isfinite(scale) or scale <= 0:
        raise ConfigError(f" must be a positive number, got {value!r}")
    if scale > MAX_TIME_SCALE:
        raise ConfigError(f" must be at most {MAX_TIME_SCALE:g}, got {value!r}")
    return scale


def _scenario_timeout(value: str, _base: Path) -> float | None:
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigError(f": expected a number of seconds, got {value!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(f" must be a number of seconds (0 = no limit), got {value!r}")
    return seconds or None


def _kubelet_versions(value: str, _base: Path) -> tuple[str, ...]:
    from drasim.profiles import VersionError, parse_version_list

    try:
        return parse_version_list(value)
    except VersionError as err:
        raise ConfigError(f": {err}") from None


def _workspace_dir(value: str, base: Path) -> Path:
    from drasim.runner.workspace import check_base

    path = (base / value).resolve()
    try:
        check_base(path)
    except ConfigError as err:
        raise ConfigError(f": {err}") from None
    return path


def _driver_cmd(value: str, _base: Path) -> str:
    from drasim.runner.process import PLACEHOLDERS, render_command

    try:
        render_command(value, {name: f"<{name}>" for name in PLACEHOLDERS})
    except ConfigError as err:
        raise ConfigError(f": {err}") from None
    except ValueError as err:  # shlex: unbalanced quotes
        raise ConfigError(f": cannot split {value!r}: {err}") from None
    return value


def _path(value: str, base: Path) -> Path:
    return base / value


def _backend(value: str, _base: Path) -> str:
    if value not in BACKENDS:
        raise ConfigError(f": {value!r} is not a valid backend; valid backends: {', '.join(BACKENDS)}")
    return value


def _bugs(value: str, _base: Path) -> str:
    from fake_plugins import BUGS

    if value not in BUGS:
        raise ConfigError(f": unknown bug {value!r}; valid bugs: {', '.join(BUGS)}")
    return value


def capability_name(value: str, _base: Path | None = None) -> str:
    """A declared driver capability (``--capability``; the pytest plugin's ``--drasim-capability``
    and ``drasim_capabilities`` ini key use it too): lowercase letters, digits, '-' and '.'."""
    from drasim.conformance.requirements import KNOWN_CAPABILITIES, check_capability_names

    if check_capability_names([value]):
        raise ConfigError(
            f": invalid capability name {value!r} (lowercase letters, digits, '-' and '.'); "
            f"known capabilities: {', '.join(KNOWN_CAPABILITIES)}"
        )
    return value


def _kubelet(value: str, _base: Path) -> str:
    from drasim.runner.kubelets import KUBELET_IMPLEMENTATIONS, UPSTREAM
    from drasim.upstream_kubelet.choice import parse_kubelet_choice

    name, at, _ = value.strip().partition("@")
    if name not in KUBELET_IMPLEMENTATIONS:
        known = ", ".join(KUBELET_IMPLEMENTATIONS)
        raise ConfigError(
            f": unknown kubelet implementation {value!r}; known: {known} (upstream@<release> too)"
        )
    if name != UPSTREAM:
        if at:
            raise ConfigError(f": {value!r}: only upstream takes a release (upstream@1.35.4)")
        return name
    try:
        return str(parse_kubelet_choice(value))
    except ConfigError as err:
        raise ConfigError(f": {str(err).split(': ', 1)[-1]}") from None


# ------------------------------------------------------------------ the table
OPTIONS: tuple[Option, ...] = (
    Option(
        "driver_cmd",
        "--driver-cmd",
        "run this driver command instead of the fake driver; placeholders {node} {kubeconfig} "
        "{registrar_dir} {plugins_dir} {plugin_dir} {cdi_dir} {state_dir} {driver_name}",
        metavar="CMD",
        parse=_driver_cmd,
    ),
    Option("driver_name", "--driver-name", "the DRA driver name --driver-cmd registers", metavar="NAME"),
    Option(
        "proxy",
        "--no-proxy",
        "with --driver-cmd: let the kubelet reach the driver directly, without drasim's proxy "
        "(scenarios with plugin faults are then skipped)",
        kind="off",
        ini=False,
    ),
    Option(
        "capabilities",
        "--capability",
        "with --driver-cmd: something the driver supports (e.g. health; repeatable or comma-separated); "
        "scenarios needing capabilities the driver lacks are skipped with the reason",
        metavar="CAP",
        kind="list",
        parse=capability_name,
        ini_name="drasim_capabilities",
    ),
    Option(
        "time_scale",
        "--time-scale",
        "real seconds per kubelet second for every scenario (1 = real kubelet timers)",
        metavar="X",
        parse=_time_scale,
    ),
    Option(
        "bugs",
        "--inject-bug",
        "switch a fake-plugin bug on in every fake driver (to see which scenarios catch it): "
        + ", ".join(BUG_NAMES),
        metavar="BUG",
        kind="list",
        parse=_bugs,
        pytest=False,
    ),
    Option(
        "kubelet_versions",
        "--kubelet-version",
        "emulate this kubelet release: 1.34, a list 1.31,1.33,1.35 or all (one result per scenario and "
        "version, named scenario[kubelet-1.34]); default: the newest a scenario's kubeletVersions allows",
        metavar="V",
        parse=_kubelet_versions,
    ),
    Option(
        "kubelet",
        "--kubelet",
        "the kubelet in the node's kubelet slot: emulated (drasim's DRA manager, the default), upstream "
        "(k8s.io/kubernetes' own, built with Go for the run's kubelet version and cached) or "
        "upstream@1.35.4 (that release); see docs/kubelet-fidelity.md",
        metavar="KIND",
        parse=_kubelet,
    ),
    Option(
        "keep_workspace", "--keep-workspace", "keep each scenario's directory tree", kind="flag", ini=False
    ),
    Option(
        "workspace_dir",
        "--workspace-dir",
        "create each scenario's directory tree under DIR (default: /dev/shm when it is writable with "
        "room to spare, else /tmp; /tmp with --keep-workspace)",
        metavar="DIR",
        parse=_workspace_dir,
        ini=False,
    ),
    Option(
        "fsync",
        "--fsync",
        "fsync the kubelet checkpoint and the fake drivers' files on every write, as a real node does "
        "(off by default: writes are atomic either way, and fsync costs milliseconds on a disk)",
        kind="flag",
        ini=False,
    ),
    Option(
        "scenario_timeout",
        "--scenario-timeout",
        "real seconds each scenario may run before it is stopped and reported as failed at the step "
        "it was on; the run goes on with the next scenario "
        f"(default {DEFAULT_SCENARIO_TIMEOUT:g}; 0 = no limit)",
        metavar="SECONDS",
        parse=_scenario_timeout,
    ),
    Option(
        "backend",
        "--backend",
        "API server: memory (in-process, the default), http (drasim's HTTP API server; the kubelet reads "
        "through the kubernetes client), kubeconfig (a real cluster, see --kubeconfig)",
        metavar="NAME",
        parse=_backend,
    ),
    Option(
        "kubeconfig",
        "--kubeconfig",
        "with --backend kubeconfig: the cluster (default: $KUBECONFIG, then ~/.kube/config)",
        metavar="FILE",
        parse=_path,
    ),
    Option("context", "--context", "with --backend kubeconfig: the kubeconfig context", metavar="NAME"),
)


# ------------------------------------------------------------------ generation
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``drasim run`` flags of every row (values stay strings until :func:`build_run_options`)."""
    for option in OPTIONS:
        if not option.cli:
            continue
        text = option.help
        if option.kind == "flag":
            parser.add_argument(option.flag, dest=option.field, action="store_true", help=text)
        elif option.kind == "off":
            parser.add_argument(option.flag, dest=option.field, action="store_false", default=None, help=text)
        elif option.kind == "list":
            parser.add_argument(
                option.flag,
                dest=option.field,
                action="append",
                default=[],
                metavar=option.metavar,
                help=option.help,
            )
        else:
            parser.add_argument(option.flag, dest=option.field, metavar=option.metavar, help=text)


def add_pytest_options(group: Any, parser: Any) -> None:
    """Add the pytest plugin's ``--drasim-*`` options and ``drasim_*`` ini keys of every row."""
    for option in OPTIONS:
        if not option.pytest:
            continue
        text = option.help.replace("--", "--drasim-")
        if option.kind == "flag":
            group.addoption(option.pytest_flag, dest=option.dest, action="store_true", help=text)
        elif option.kind == "off":
            group.addoption(
                option.pytest_flag, dest=option.dest, action="store_false", default=None, help=text
            )
        elif option.kind == "list":
            group.addoption(
                option.pytest_flag,
                dest=option.dest,
                action="append",
                default=[],
                metavar=option.metavar,
                help=text,
            )
        else:
            group.addoption(option.pytest_flag, dest=option.dest, metavar=option.metavar, help=text)
        if option.ini:
            kind = "linelist" if option.kind == "list" else None
            parser.addini(option.ini_key, text, type=kind, default=[] if kind else "")


def build_run_options(
    values: Mapping[str, Any],
    *,
    flag: Callable[[Option], str],
    bases: Mapping[str, Path] | None = None,
) -> RunOptions:
    """RunOptions from the given values by field (None, "" and [] count as not given).

    ``flag`` names an option in messages as its front end spells it; a relative path starts at
    its field's entry in ``bases`` (default: the working directory). A bad value raises
    ConfigError naming the flag; so do the driver options that contradict each other
    (:func:`_driver_problem`), ``--kubeconfig``/``--context`` without ``--backend kubeconfig``,
    and ``--backend kubeconfig`` with no kubeconfig to be found.
    """
    fields: dict[str, Any] = {}
    for option in OPTIONS:
        value = values.get(option.field)
        if (
            value in (None, "", [])
            or (option.kind == "flag" and not value)
            or (option.kind == "off" and value)
        ):
            continue
        base = (bases or {}).get(option.field) or Path.cwd()
        fields[option.field] = _parsed(option, value, base, flag)
    problem = _driver_problem(fields, lambda field: flag(_row(field)))
    if problem:
        raise ConfigError(problem)
    named = {name: flag(_row(name)) for name in ("backend", "kubeconfig", "context")}
    if fields.get("backend") != "kubeconfig":
        if "kubeconfig" in fields or "context" in fields:
            raise ConfigError(
                f"{named['kubeconfig']} and {named['context']} need {named['backend']} kubeconfig"
            )
    elif "kubeconfig" not in fields:
        from drasim.runner.backend_choice import default_kubeconfig

        fields["kubeconfig"] = default_kubeconfig()
        if fields["kubeconfig"] is None:
            raise ConfigError(
                f"{named['backend']} kubeconfig needs {named['kubeconfig']} FILE "
                "($KUBECONFIG is unset, no ~/.kube/config)"
            )
    _check_kubelet(fields, flag)
    return RunOptions(**fields)


def _driver_problem(fields: Mapping[str, Any], flag: Callable[[str], str]) -> str | None:
    """The driver options that contradict each other, one rule for both front ends: with a driver
    command no fake plugin runs (so an injected fake-plugin bug would be ignored); a driver name
    and capabilities describe the driver command, so without one they are an error (there is
    nothing to declare for the fake plugin: it has every capability drasim knows)."""
    cmd = flag("driver_cmd")
    if "driver_cmd" in fields:
        if "bugs" in fields:
            return (
                f"{flag('bugs')} switches a bug on in drasim's fake plugin, and with {cmd} no fake "
                "plugin runs: the bug would be ignored"
            )
        return None
    if "driver_name" in fields:
        return f"{flag('driver_name')} needs {cmd}"
    if "capabilities" in fields:
        return f"{flag('capabilities')} says what the driver under test can do: it needs {cmd}"
    return None


def _check_kubelet(fields: dict[str, Any], flag: Callable[[Option], str]) -> None:
    """``--kubelet upstream@<release>`` runs as that release's kubelet version (a different
    ``--kubelet-version`` is an error); an upstream kubelet's binaries are built now, so that a
    missing Go or a release the module proxy does not serve is one clear error up front."""
    choice = str(fields.get("kubelet", "emulated"))
    if not choice.startswith("upstream"):
        return
    from drasim.profiles import DEFAULT_VERSION
    from drasim.upstream_kubelet.choice import parse_kubelet_choice, release_for, upstream_binary

    parsed = parse_kubelet_choice(choice)
    versions = tuple(fields.get("kubelet_versions", ()))
    if parsed.minor_version is not None:
        if versions and versions != (parsed.minor_version,):
            raise ConfigError(
                f"{flag(_row('kubelet'))} {choice} runs kubelet {parsed.minor_version}; "
                f"drop {flag(_row('kubelet_versions'))} or make it match"
            )
        fields["kubelet_versions"] = versions = (parsed.minor_version,)
    releases = []
    for version in versions or (DEFAULT_VERSION,):
        with contextlib.suppress(ConfigError):  # older than upstream's program: skipped per run
            releases.append(release_for(parsed, version))
    try:
        for release in dict.fromkeys(releases):
            upstream_binary(release)
    except ConfigError as err:
        raise ConfigError(f"{flag(_row('kubelet'))}: {err}") from None


def _parsed(option: Option, value: Any, base: Path, flag: Callable[[Option], str]) -> Any:
    """One option's value, parsed; errors name the flag."""
    try:
        if option.kind == "flag":
            return True
        if option.kind == "off":
            return False
        if option.kind == "list":
            items = [item.strip() for entry in value for item in str(entry).split(",") if item.strip()]
            return tuple(option.parse(item, base) if option.parse else item for item in items)
        return option.parse(str(value), base) if option.parse else str(value)
    except ConfigError as err:
        raise ConfigError(f"{flag(option)}{err}") from None


def _row(field: str) -> Option:
    return next(option for option in OPTIONS if option.field == field)
