"""``drasim validate [PATHS...]``: check scenario files without running them."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "validate",
        help="check scenario files without running them",
        description=(
            "Check scenario files (or directories, searched recursively for *.yaml/*.yml files "
            "with kind: Scenario) and print every problem as file:line:col: path: message. "
            "Without PATHS the built-in library is checked. Exit status 2 when there are problems."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="scenario files or directories")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Validate; print problems to stderr, or the count of valid scenarios to stdout."""
    from drasim.errors import ScenarioError
    from drasim.scenario import builtin_scenario_dir, load_paths

    paths = args.paths or [builtin_scenario_dir()]
    try:
        scenarios = load_paths(paths)
    except ScenarioError as err:
        for problem in err.problems:
            print(problem, file=sys.stderr)
        count = len(err.problems)
        print(f"{count} problem{'s' if count != 1 else ''} found", file=sys.stderr)
        return 2
    files = len({s.file for s in scenarios})
    plural = "" if len(scenarios) == 1 else "s"
    print(f"{len(scenarios)} scenario{plural} valid in {files} file{'' if files == 1 else 's'}")
    return 0
