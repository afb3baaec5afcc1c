"""``drasim run [PATHS...]``: run scenarios and report.

Without PATHS the built-in library runs against the built-in fake driver and the
in-memory API server. ``--driver-cmd`` puts a real driver (any command) in place of
the fake one. Exit status: 0 when every scenario passed (or was skipped), 1 when
one failed, 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drasim.commands.run_checks import check_run_arguments
from drasim.commands.run_environment import (
    backend_detail,
    driver_and_backend,
    driver_detail,
    kubelet_description,
)
from drasim.commands.run_reports import finish_run
from drasim.commands.selection import add_shard_argument, add_suite_argument, parse_shard, scenario_paths
from drasim.errors import ConfigError
from drasim.optiontable import add_arguments, build_run_options

if TYPE_CHECKING:
    from drasim.report import RunReport
    from drasim.report.terminal import TerminalReporter
    from drasim.runner.options import RunOptions
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
    add_suite_argument(parser)
    add_shard_argument(parser)
    parser.add_argument("-k", dest="keyword", default="", metavar="NAME", help="only names containing NAME")
    parser.add_argument(
        "--tag", action="append", default=[], metavar="T", help="only scenarios with this tag (repeatable)"
    )
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write a JSON report")
    parser.add_argument(
        "--html", type=Path, metavar="FILE", help="write an HTML report with sequence diagrams"
    )
    parser.add_argument("--fail-fast", action="store_true", help="skip the rest after the first failure")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="run N scenarios at a time")
    add_arguments(parser)  # the run options (drasim/optiontable.py)
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print each scenario as it starts, and all in the table"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary line")
    parser.set_defaults(func=run)


def run_options(args: argparse.Namespace) -> RunOptions:
    """The :class:`RunOptions` the parsed ``drasim run`` arguments ask for (ConfigError naming the flag)."""
    return build_run_options(vars(args), flag=lambda option: option.flag)


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


def run(args: argparse.Namespace) -> int:
    """Load, filter, run, report."""
    from drasim.commands.list_cmd import select
    from drasim.report import RunEnvironment, RunReport
    from drasim.report.terminal import TerminalReporter
    from drasim.runner.run import RunInterrupted
    from drasim.scenario import load_paths
    from drasim.timescale import reported_time_scale

    check_run_arguments(args)
    parse_shard(args.shard)  # bad input before anything runs
    if args.jobs < 1:
        raise ConfigError(f"-j/--jobs must be at least 1, got {args.jobs}")
    options = run_options(args)
    scenarios = select(
        load_paths(scenario_paths(args.paths, args.suite)), tags=args.tag, keyword=args.keyword
    )
    if not scenarios:
        print("drasim run: no scenario matched", file=sys.stderr)
        return 2
    if options.backend == "kubeconfig" and options.kubeconfig is not None:
        from drasim.runner.preflight import check_cluster

        check_cluster(options.kubeconfig, options.context)  # one clear line when it cannot work
    driver, backend = driver_and_backend(scenarios, options)
    environment = RunEnvironment(
        driver=driver,
        backend=backend,
        driver_detail=driver_detail(options, scenarios),
        backend_detail=backend_detail(options),
        kubelet=kubelet_description(options, scenarios),
        time_scale=reported_time_scale((s.spec.kubelet.time_scale for s in scenarios), options.time_scale),
        extra={
            **({"kubeletVersions": ",".join(options.kubelet_versions)} if options.kubelet_versions else {}),
            **({"injectedBugs": ",".join(options.bugs)} if options.bugs else {}),
        },
    )
    reporter = TerminalReporter(verbose=args.verbose, quiet=args.quiet)
    report = RunReport(environment=environment)
    try:
        _run_all(scenarios, options, args, reporter, report)
    except RunInterrupted:
        finish_run(report, reporter, args)  # the counts and reports of what ran
        raise
    finish_run(report, reporter, args)
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
    interrupts like Ctrl-C, and an interrupted run leaves what ran in ``report``."""
    from drasim.conformance import real_driver_skip_reason
    from drasim.report import RESULTS
    from drasim.runner.run import RunInterrupted, run_scenarios

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
            shard=parse_shard(args.shard),
        )
    except RunInterrupted as interrupted:
        report.results = interrupted.results
        raise
    finally:
        restore()
        report.duration = time.monotonic() - started
    return report
