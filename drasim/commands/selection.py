"""Which scenario files ``drasim run`` and ``drasim list`` read: PATHS, ``--suite NAME``, or the library."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_suite_argument(parser: argparse.ArgumentParser) -> None:
    """``--suite NAME``: a built-in suite, as pytest's ``--drasim-suite``."""
    from drasim.conformance import SUITES

    parser.add_argument(
        "--suite",
        metavar="NAME",
        help=f"a suite of the built-in library ({', '.join(SUITES)}), found wherever drasim is installed; "
        "with PATHS, both",
    )


def scenario_paths(paths: list[str], suite: str | None) -> list[Path]:
    """PATHS and the suite's directories; the whole built-in library when neither is given."""
    from drasim.conformance import suite_dirs
    from drasim.scenario import builtin_scenario_dir

    chosen = [Path(p) for p in paths]
    if suite is not None:
        chosen += suite_dirs(suite, "--suite")
    return chosen or [builtin_scenario_dir()]


def add_shard_argument(parser: argparse.ArgumentParser) -> None:
    """``--shard K/N``: one of N CI jobs."""
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="run only shard K of N (1 <= K <= N): a stable split of the rows (scenario, and kubelet "
        "version with --kubelet-version) for N parallel CI jobs; the N shards together run every row once",
    )


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"2/4"`` -> ``(2, 4)``; a ConfigError for anything else (:func:`drasim.runner.shard.parse_shard`)."""
    from drasim.runner.shard import parse_shard as parse

    return parse(text, "--shard")
