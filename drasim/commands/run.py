"""``drasim run [PATHS...]``: run scenarios and report.

Without PATHS the built-in library runs against the built-in fake driver and the
in-memory API server. ``--driver-cmd`` puts a real driver (any command) in place of
the fake one. Exit status: 0 when every scenario passed (or was skipped), 1 when
one failed, 2 for bad input.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drasim.errors import ConfigError

if TYPE_CHECKING:
    from drasim.report import RunReport
    from drasim.report.terminal import TerminalReporter
    from drasim.runner.world import RunOptions
    from drasim.scenario.schema import Scenario


def register(subparsers: Any) -> None:
    """Add the ``run`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "run",
        help="run scenarios against a driver (default: the built-in library and fake driver)",
        description=(
            "Run scenarios. Without PATHS the built-in library runs against the built-in fake "
            "driver and the in-memory API server."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="scenario files or directories")
    parser.add_argument("-k", dest="keyword", default="", metavar="NAME", help="only names containing NAME")
    parser.add_argument(
        "--tag", action="append", default=[], metavar="T", help="only scenarios with this tag (repeatable)"
    )
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write a JSON report")
    parser.add_argument(
        "--html", type=Path, metavar="FILE", help="write an HTML report with sequence diagrams"
    )
    parser.add_argument(
        "--driver-cmd",
        metavar="CMD",
        help=(
            "run this driver command instead of the fake driver; placeholders {node} {kubeconfig} "
            "{registrar_dir} {plugins_dir} {plugin_dir} {cdi_dir} {state_dir} {driver_name}"
        ),
    )
    parser.add_argument("--driver-name", metavar="NAME", help="the DRA driver name --driver-cmd registers")
    parser.add_argument(
        "--capability",
        action="append",
        default=[],
        metavar="CAP",
        help="with --driver-cmd: something the driver supports (e.g. health); scenarios needing "
        "capabilities the driver lacks are skipped with the reason",
    )
    parser.add_argument("--fail-fast", action="store_true", help="skip the rest after the first failure")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="run N scenarios at a time")
    parser.add_argument(
        "--time-scale",
        type=float,
        metavar="X",
        help="real seconds per kubelet second for every scenario (1 = real kubelet timers)",
    )
    parser.add_argument(
        "--inject-bug",
        action="append",
        default=[],
        metavar="BUG",
        help="switch a fake-plugin bug on in every fake driver (to see which scenarios catch it)",
    )
    parser.add_argument(
        "--kubelet-version",
        metavar="V",
        help="emulate this kubelet release: 1.34, a list 1.31,1.33,1.35 or all (one result per "
        "scenario and version, named scenario[kubelet-1.34]); default: the newest, or the newest a "
        "scenario's kubeletVersions allows",
    )
    add_kubelet_argument(parser)
    parser.add_argument("--keep-workspace", action="store_true", help="keep each scenario's directory tree")
    parser.add_argument(
        "--workspace-dir",
        type=Path,
        metavar="DIR",
        help="create each scenario's directory tree under DIR (default: /dev/shm when it is writable "
        "with room to spare, else /tmp; /tmp with --keep-workspace)",
    )
    parser.add_argument(
        "--fsync",
        action="store_true",
        help="fsync the kubelet checkpoint and the fake drivers' files on every write, as a real node "
        "does (off by default: writes are atomic either way, and fsync costs milliseconds on a disk)",
    )
    parser.add_argument(
        "--scenario-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="real seconds each scenario may run before it is stopped and reported as failed at the step "
        "it was on; the run goes on with the next scenario (default 600; 0 = no limit)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print each scenario as it starts")
    add_backend_arguments(parser)
    parser.set_defaults(func=run)


def run_options(args: argparse.Namespace) -> RunOptions:
    """The :class:`RunOptions` the parsed ``drasim run`` arguments ask for."""
    from drasim.runner.world import RunOptions
    from drasim.scenario.limits import DEFAULT_SCENARIO_TIMEOUT

    timeout = DEFAULT_SCENARIO_TIMEOUT if args.scenario_timeout is None else args.scenario_timeout
    kubelet_versions: tuple[str, ...] = ()
    if args.kubelet_version is not None:
        from drasim.profiles import VersionError, parse_version_list

        try:
            kubelet_versions = parse_version_list(args.kubelet_version)
        except VersionError as err:
            raise ConfigError(f"--kubelet-version: {err}") from None
    kubelet = kubelet_option(args, kubelet_versions)
    if kubelet.release is not None and not kubelet_versions:
        kubelet_versions = (str(kubelet.minor_version),)
    return RunOptions(
        **backend_options(args),
        kubelet=str(kubelet),
        time_scale=args.time_scale,
        driver_cmd=args.driver_cmd,
        driver_name=args.driver_name,
        keep_workspace=args.keep_workspace,
        fsync=args.fsync,
        workspace_dir=args.workspace_dir,
        kubelet_versions=kubelet_versions,
        scenario_timeout=timeout or None,
        bugs=tuple(args.inject_bug),
        capabilities=tuple(c for item in args.capability for c in item.split(",") if c),
    )


# -- the upstream kubelet (issue 24) ---------------------------------------------------------
def add_kubelet_argument(parser: argparse.ArgumentParser) -> None:
    """``--kubelet emulated|upstream|upstream@<release>``."""
    parser.add_argument(
        "--kubelet",
        default="emulated",
        metavar="KIND",
        help="whose DRA manager runs the scenarios: emulated (drasim's, the default), upstream "
        "(k8s.io/kubernetes' own, built with Go for the run's kubelet version and cached) or "
        "upstream@1.35.4 (that release); see docs/kubelet-fidelity.md",
    )


def kubelet_option(args: argparse.Namespace, kubelet_versions: tuple[str, ...]) -> Any:
    """The parsed ``--kubelet``; for upstream, the binaries are built now (exit 2 naming what is missing)."""
    from drasim.upstream_kubelet.choice import parse_kubelet_choice, release_for, upstream_binary

    choice = parse_kubelet_choice(getattr(args, "kubelet", None))
    if not choice.upstream:
        return choice
    if choice.release is not None and kubelet_versions and kubelet_versions != (choice.minor_version,):
        msg = (
            f"--kubelet {choice} runs kubelet {choice.minor_version}; drop --kubelet-version or make it match"
        )
        raise ConfigError(msg)
    from drasim.profiles import DEFAULT_VERSION

    for version in kubelet_versions or (choice.minor_version or DEFAULT_VERSION,):
        upstream_binary(release_for(choice, version), quiet=False)
    return choice


# -- backends (issue 12) --------------------------------------------------------------------
def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """``--backend``, ``--kubeconfig``, ``--context``."""
    parser.add_argument(
        "--backend",
        choices=("memory", "http", "kubeconfig"),
        help="API server: memory (in-process, the default), http (drasim's HTTP API server; the "
        "kubelet reads through the kubernetes client), kubeconfig (a real cluster, see --kubeconfig)",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        metavar="FILE",
        help="with --backend kubeconfig: the cluster (default: $KUBECONFIG, then ~/.kube/config)",
    )
    parser.add_argument("--context", metavar="NAME", help="with --backend kubeconfig: the kubeconfig context")


def _interrupt_on_sigterm() -> Callable[[], None]:
    """SIGTERM (a cancelled CI job) ends the run like Ctrl-C: each scenario still cleans up
    (driver processes stopped, a real cluster's namespaces deleted). Returns the undo."""
    import signal
    import threading

    previous: object = None

    def interrupt(signum: int, frame: object) -> None:
        if callable(previous):  # the CLI's handler records which signal ended the run
            previous(signum, frame)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, interrupt)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """RunOptions fields for the backend flags (the cluster itself is checked by :func:`run`)."""
    if args.backend != "kubeconfig":
        if args.kubeconfig is not None or args.context is not None:
            raise ConfigError("--kubeconfig and --context need --backend kubeconfig")
        return {"backend": args.backend}
    from drasim.runner.backend_choice import default_kubeconfig

    path = args.kubeconfig or default_kubeconfig()
    if path is None:
        raise ConfigError(
            "--backend kubeconfig needs --kubeconfig FILE ($KUBECONFIG is unset, no ~/.kube/config)"
        )
    return {"backend": "kubeconfig", "kubeconfig": path, "context": args.context}


def run(args: argparse.Namespace) -> int:
    """Load, filter, run, report."""
    from drasim.commands.list_cmd import select
    from drasim.report import RunEnvironment, RunReport
    from drasim.report.html import write_html
    from drasim.report.json_report import write_json
    from drasim.report.junit import write_junit
    from drasim.report.terminal import TerminalReporter
    from drasim.scenario import builtin_scenario_dir, load_paths
    from drasim.scenario.limits import DEFAULT_SCENARIO_TIMEOUT, MAX_TIME_SCALE
    from drasim.timescale import reported_time_scale

    if args.jobs < 1:
        raise ConfigError(f"-j/--jobs must be at least 1, got {args.jobs}")
    if args.time_scale is not None and not 0 < args.time_scale <= MAX_TIME_SCALE:
        raise ConfigError(
            f"--time-scale must be positive and at most {MAX_TIME_SCALE:g}, got {args.time_scale}"
        )
    timeout = DEFAULT_SCENARIO_TIMEOUT if args.scenario_timeout is None else args.scenario_timeout
    if not math.isfinite(timeout) or timeout < 0:
        raise ConfigError(f"--scenario-timeout must be a number of seconds (0 = no limit), got {timeout}")
    if args.inject_bug:
        from fake_plugins import BUGS

        unknown = [b for b in args.inject_bug if b not in BUGS]
        if unknown:
            raise ConfigError(f"--inject-bug: unknown bug {unknown[0]!r}; valid bugs: {', '.join(BUGS)}")
    if args.workspace_dir is not None:
        from drasim.runner.workspace import check_base

        try:
            check_base(args.workspace_dir)
        except ConfigError as err:
            raise ConfigError(f"--workspace-dir: {err}") from None
    options = run_options(args)
    scenarios = select(
        load_paths(args.paths or [builtin_scenario_dir()]), tags=args.tag, keyword=args.keyword
    )
    if not scenarios:
        print("drasim run: no scenario matched", file=sys.stderr)
        return 2
    if options.backend == "kubeconfig" and options.kubeconfig is not None:
        from drasim.runner.preflight import check_cluster

        check_cluster(options.kubeconfig, options.context)  # one clear line when it cannot work
    environment = RunEnvironment(
        driver=args.driver_cmd or "fake",
        backend=args.backend or ("http" if args.driver_cmd else "memory"),
        time_scale=reported_time_scale((s.spec.kubelet.time_scale for s in scenarios), options.time_scale),
        extra={"kubeletVersions": ",".join(options.kubelet_versions)} if options.kubelet_versions else {},
    )
    reporter = TerminalReporter(verbose=args.verbose)
    report = _run_all(scenarios, options, args, reporter, RunReport(environment=environment))
    reporter.finish(report)
    for path, write in ((args.junit, write_junit), (args.json, write_json), (args.html, write_html)):
        if path is not None:
            write(report, path)
            print(f"wrote {path}")
    return 0 if report.ok else 1


def _run_all(
    scenarios: list[Scenario],
    options: RunOptions,
    args: argparse.Namespace,
    reporter: TerminalReporter,
    report: RunReport,
) -> RunReport:
    """Run ``scenarios`` into ``report`` (started when it was made): the runner gets the report
    model's result builder and the conformance suite's real-driver skip reasons; SIGTERM
    interrupts like Ctrl-C."""
    from drasim.conformance import real_driver_skip_reason
    from drasim.report import RESULTS
    from drasim.runner.run import run_scenarios

    started = time.monotonic()
    restore = _interrupt_on_sigterm()
    try:
        report.results = run_scenarios(
            scenarios,
            options,
            results=RESULTS,
            real_driver_skip=real_driver_skip_reason,
            jobs=args.jobs,
            fail_fast=args.fail_fast,
            reporter=reporter,
        )
    finally:
        restore()
    report.duration = time.monotonic() - started
    return report
