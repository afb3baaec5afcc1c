"""``drasim list [PATHS...] [--tag T] [-k NAME]``: show scenarios with their tags and descriptions."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from drasim.commands.selection import add_suite_argument, scenario_paths

if TYPE_CHECKING:
    from drasim.scenario.schema import Scenario


def register(subparsers: Any) -> None:
    """Add the ``list`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "list",
        help="list scenarios (name, tags, description)",
        description="List scenarios. Without PATHS the built-in library is listed.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="scenario files or directories")
    add_suite_argument(parser)
    parser.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="T",
        help="only scenarios with this tag (repeatable: all must match)",
    )
    parser.add_argument(
        "-k", dest="keyword", default="", metavar="NAME", help="only scenarios whose name contains NAME"
    )
    parser.set_defaults(func=run)


def select(scenarios: list[Scenario], *, tags: list[str], keyword: str) -> list[Scenario]:
    """Scenarios carrying every tag whose name contains ``keyword`` (case-insensitive)."""
    keyword = keyword.lower()
    return [
        s for s in scenarios if all(t in s.metadata.tags for t in tags) and keyword in s.metadata.name.lower()
    ]


def run(args: argparse.Namespace) -> int:
    """Print one line per scenario: name, tags, description."""
    from drasim.scenario import load_paths

    scenarios = select(
        load_paths(scenario_paths(args.paths, args.suite)), tags=args.tag, keyword=args.keyword
    )
    if not scenarios:
        print("drasim list: no scenario matched", file=sys.stderr)
        return 2
    width = max((len(s.name) for s in scenarios), default=0)
    tag_width = max((len(",".join(s.metadata.tags)) for s in scenarios), default=0)
    for s in sorted(scenarios, key=lambda s: s.name):
        print(f"{s.name:<{width}}  {','.join(s.metadata.tags):<{tag_width}}  {s.metadata.description}")
    print(f"{len(scenarios)} scenario{'s' if len(scenarios) != 1 else ''}")
    return 0
