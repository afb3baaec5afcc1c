"""The ``drasim`` command line (argparse).

Each subcommand lives in its own module under :mod:`drasim.commands` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
``(argparse.Namespace) -> int``. Exit codes: 0 pass, 1 failures found, 2 usage or
input errors. A :class:`drasim.errors.DrasimError` is printed as one clear message,
never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from drasim import __version__
from drasim.errors import DrasimError
from drasim.grpc_logging import quiet_grpc_logs

quiet_grpc_logs()  # before any subcommand imports grpc

# Subcommand modules, in the order `drasim --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "drasim.commands.run",
    "drasim.commands.checkpoint",
    "drasim.commands.fake_plugin",
    "drasim.commands.proxy",
    "drasim.commands.validate",
    "drasim.commands.list_cmd",
    "drasim.commands.explore",
    "drasim.commands.serve_apiserver",
    "drasim.commands.upstream",
    "drasim.commands.diff",
    "drasim.commands.control_plane",
    "drasim.commands.init_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="drasim",
        description="Test harness and simulator for Kubernetes DRA kubelet plugins.",
    )
    parser.add_argument("--version", action="version", version=f"drasim {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    received: list[int] = []
    previous = _interrupt_on_sigterm(received)
    try:
        return func(args)
    except DrasimError as err:
        print(f"drasim {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Driver processes and workspaces of scenarios that were running must not outlive us.
        from drasim.runner import reaper

        reaper.reap()
        name = "SIGTERM" if received else "SIGINT"
        print(f"drasim: interrupted ({name}); driver processes and workspaces removed", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    except BrokenPipeError:
        # The reader went away (`drasim list | head`): stop quietly, as other tools do.
        _silence_stdout()
        return 128 + signal.SIGPIPE
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _interrupt_on_sigterm(received: list[int]) -> Any:
    """Make SIGTERM raise ``KeyboardInterrupt`` like SIGINT, so that clean-up runs.

    Returns the previous handler (``None`` when not in the main thread, where signal
    handlers cannot be set).
    """
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_sigterm(signum: int, _frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, on_sigterm)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the flush at exit cannot fail on the closed pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (e.g. captured by a test)
        pass
    finally:
        os.close(devnull)
