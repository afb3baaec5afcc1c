"""``drasim explore``: generate random valid scenarios, check invariants, write a reproducer on failure.

Exit status: 0 when no invariant broke, 1 when one did (the reproducer's path is
printed), 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from drasim.errors import ConfigError

if TYPE_CHECKING:
    from drasim.explore.engine import ExploreConfig, ExploreOutcome


def register(subparsers: Any) -> None:
    """Add the ``explore`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "explore",
        help="generate random scenarios (the fake driver or a driver command), check invariants",
        description=(
            "Generate random but valid step sequences (pods, shared and template claims, kubelet "
            "restarts and crashes, plugin restarts, injected faults) with hypothesis, run each on a "
            "fresh simulated node with the fake driver, and check invariants after every step. A "
            "violation is shrunk to a minimal sequence and written as a scenario file."
        ),
    )
    parser.add_argument("--max-examples", type=int, default=100, metavar="N", help="examples to generate")
    parser.add_argument(
        "--time", type=float, default=None, metavar="SECONDS", help="stop generating after this long"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (same seed, same run)")
    parser.add_argument(
        "--steps", type=int, default=20, metavar="N", help="most generated steps per example (default 20)"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("explore-out"), metavar="DIR", help="where reproducers go"
    )
    parser.add_argument(
        "--inject-bug",
        action="append",
        default=[],
        metavar="BUG",
        help="switch a fake-plugin bug on (repeatable), to see that exploration finds it",
    )
    parser.add_argument(
        "--driver-cmd",
        metavar="TEMPLATE",
        help="explore this driver command in place of the fake plugin (placeholders as for drasim run "
        "--driver-cmd); plugin faults and kubelet restarts are left out, see docs/explore.md",
    )
    parser.add_argument("--driver-name", metavar="NAME", help="the DRA driver name --driver-cmd registers")
    parser.add_argument("--no-verify", action="store_true", help="do not replay the written reproducer")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every example's steps")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress lines on stderr (only the summary)"
    )
    parser.set_defaults(func=run)


class Progress:
    """Progress of an exploration on stderr, so that a long run is visibly alive.

    On a terminal one line is rewritten after every example; otherwise (CI logs) a line is
    printed every tenth of the examples or every 10 seconds, whichever comes first, and when
    shrinking starts.
    """

    EVERY_SECONDS = 10.0

    def __init__(self, stream: TextIO, max_examples: int, time_limit: float | None) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.max_examples = max_examples
        self.time_limit = time_limit
        self.step = max(1, max_examples // 10)
        self.last_printed = 0.0
        self.shrinking = False
        self.width = 0

    def line(self, outcome: ExploreOutcome, elapsed: float) -> str:
        """``explore: 30/100 examples, 412 steps, 4.2s`` (or what shrinking has done so far)."""
        limit = f" of {self.time_limit:g}s" if self.time_limit else ""
        if outcome.shrink_examples:
            found = outcome.examples - outcome.shrink_examples
            return (
                f"explore: violation found at example {found}; shrinking: "
                f"{outcome.shrink_examples} examples tried, {elapsed:.1f}s{limit}"
            )
        return (
            f"explore: {outcome.examples}/{self.max_examples} examples, {outcome.steps} steps, "
            f"{elapsed:.1f}s{limit}"
        )

    def update(self, outcome: ExploreOutcome, elapsed: float) -> None:
        """Called after every example."""
        text = self.line(outcome, elapsed)
        if self.tty:
            self.stream.write("\r" + text.ljust(self.width))
            self.width = len(text)
            self.stream.flush()
            return
        started_shrinking = bool(outcome.shrink_examples) and not self.shrinking
        self.shrinking = self.shrinking or started_shrinking
        due = outcome.examples % self.step == 0 or elapsed - self.last_printed >= self.EVERY_SECONDS
        if started_shrinking or due:
            self.last_printed = elapsed
            print(text, file=self.stream, flush=True)

    def done(self) -> None:
        """End the rewritten terminal line before the summary."""
        if self.tty and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def _check(args: argparse.Namespace) -> None:
    from fake_plugins import BUGS

    if args.max_examples < 1:
        raise ConfigError("--max-examples must be at least 1")
    if args.steps < 1:
        raise ConfigError("--steps must be at least 1")
    if args.time is not None and args.time <= 0:
        raise ConfigError("--time must be a positive number of seconds")
    if args.driver_cmd is not None and not args.driver_cmd.strip():
        raise ConfigError("--driver-cmd: empty command")
    if args.driver_cmd and args.inject_bug:
        raise ConfigError("--inject-bug switches on bugs of the fake plugin; it cannot go with --driver-cmd")
    if args.driver_name and not args.driver_cmd:
        raise ConfigError("--driver-name needs --driver-cmd")
    for bug in args.inject_bug:
        if bug not in BUGS:
            raise ConfigError(f"--inject-bug: unknown bug {bug!r}; known: {', '.join(BUGS)}")


def _labels(config: ExploreConfig) -> str:
    """``, bugs: ...`` and ``, driver: ...`` for what was explored (empty for the plain fake plugin)."""
    bugs = f", bugs: {', '.join(config.bugs)}" if config.bugs else ""
    if config.driver_cmd:
        bugs += f", driver: {config.driver_cmd}"
    return bugs


def _summary(config: ExploreConfig, outcome: ExploreOutcome) -> str:
    """The one-line account of an exploration: examples, steps, time, seed, bugs, driver."""
    return (
        f"explored {outcome.examples} example(s) ({outcome.shrink_examples} while shrinking), "
        f"{outcome.steps} steps "
        f"({outcome.failed_operations} operations failed as injected) in {outcome.duration:.1f}s "
        f"(seed {config.seed}{_labels(config)})" + ("; stopped: time is up" if outcome.timed_out else "")
    )


def run(args: argparse.Namespace) -> int:
    """Explore, print a summary, write a reproducer on failure."""
    try:
        import hypothesis  # noqa: F401 - only to give a clear error when it is missing
    except ImportError:
        msg = "drasim explore needs hypothesis; install it with: pip install 'drasim[explore]'"
        raise ConfigError(msg) from None
    from drasim.explore import ExploreConfig, Trace, explore
    from drasim.explore.reproducer import write_reproducer

    _check(args)
    config = ExploreConfig(
        max_examples=args.max_examples,
        time_limit=args.time,
        seed=args.seed,
        steps=args.steps,
        bugs=tuple(args.inject_bug),
        driver_cmd=args.driver_cmd,
        driver_name=args.driver_name,
    )

    def show(trace: Trace) -> None:
        print(f"example: {len(trace.records)} steps")
        for record in trace.records:
            print(f"  {record.text}" + (f"  -> failed: {record.error}" if record.error else ""))

    progress = None if args.quiet else Progress(sys.stderr, args.max_examples, args.time)
    outcome = explore(
        config,
        on_example=show if args.verbose else None,
        on_progress=progress.update if progress is not None else None,
    )
    if progress is not None:
        progress.done()
    print(_summary(config, outcome))
    failure = outcome.failure
    if failure is None or failure.violation is None:
        print("no invariant was violated")
        return 0
    violation = failure.violation
    print(f"VIOLATION {violation.describe()}")
    if outcome.flaky:
        print("  (flaky: it did not show again when replayed; timing-dependent, see the trace below)")
    print(f"shrunk to {len(failure.records)} steps:")
    for i, record in enumerate(failure.records, 1):
        start = failure.settle_from
        settle = "  (settle)" if start is not None and i > start else ""
        failed = f"  -> failed: {record.error}" if record.error else ""
        print(f"  {i:2d}. {record.text}{failed}{settle}")
    repro = write_reproducer(failure, args.out, config, verify=not args.no_verify)
    print(f"reproducer: {repro.path}")
    if repro.fails_with_bugs is not None:
        verdict = "fails" if repro.fails_with_bugs else "PASSES (not reproduced)"
        print(f"  replayed{_labels(config)}: {verdict}")
    if repro.passes_without_bugs is not None:
        print(f"  replayed without bugs: {'passes' if repro.passes_without_bugs else 'FAILS'}")
    sys.stdout.flush()
    return 1
