"""``drasim explore``: generate random valid scenarios, check invariants, write a reproducer on failure.

Exit status: 0 when no invariant broke, 1 when one did (the reproducer's path is
printed), 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from drasim.errors import ConfigError


def register(subparsers: Any) -> None:
    """Add the ``explore`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "explore",
        help="generate random scenarios against the fake driver and check kubelet/driver invariants",
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
    parser.add_argument("--no-verify", action="store_true", help="do not replay the written reproducer")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every example's steps")
    parser.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    from fake_plugins import BUGS

    if args.max_examples < 1:
        raise ConfigError("--max-examples must be at least 1")
    if args.steps < 1:
        raise ConfigError("--steps must be at least 1")
    if args.time is not None and args.time <= 0:
        raise ConfigError("--time must be a positive number of seconds")
    for bug in args.inject_bug:
        if bug not in BUGS:
            raise ConfigError(f"--inject-bug: unknown bug {bug!r}; known: {', '.join(BUGS)}")


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
    )

    def show(trace: Trace) -> None:
        print(f"example: {len(trace.records)} steps")
        for record in trace.records:
            print(f"  {record.text}" + (f"  -> failed: {record.error}" if record.error else ""))

    outcome = explore(config, on_example=show if args.verbose else None)
    bugs = f", bugs: {', '.join(config.bugs)}" if config.bugs else ""
    print(
        f"explored {outcome.examples} example(s) ({outcome.shrink_examples} while shrinking), "
        f"{outcome.steps} steps "
        f"({outcome.failed_operations} operations failed as injected) in {outcome.duration:.1f}s "
        f"(seed {config.seed}{bugs})" + ("; stopped: time is up" if outcome.timed_out else "")
    )
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
        print(f"  replayed{bugs or ''}: {'fails' if repro.fails_with_bugs else 'PASSES (not reproduced)'}")
    if repro.passes_without_bugs is not None:
        print(f"  replayed without bugs: {'passes' if repro.passes_without_bugs else 'FAILS'}")
    sys.stdout.flush()
    return 1
