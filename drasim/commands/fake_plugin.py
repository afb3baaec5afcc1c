"""``drasim fake-plugin``: run one scriptable fake DRA driver (flags as in :mod:`fake_plugins.cli`)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``fake-plugin`` subcommand with the same flags as ``python -m fake_plugins``."""
    from fake_plugins.cli import add_arguments

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "fake-plugin",
        help="run a scriptable fake DRA kubelet plugin (registration + DRA gRPC over unix sockets)",
        description="Run a scriptable fake DRA kubelet plugin until SIGTERM.",
    )
    add_arguments(parser)
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from fake_plugins.cli import run

    return run(args)
