"""``drasim checkpoint show|verify``: placeholder until the checkpoint codec lands."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``checkpoint`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "checkpoint", help="decode or verify a kubelet dra_manager_state file"
    )
    parser.set_defaults(func=lambda _args: 2)
