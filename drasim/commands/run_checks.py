"""Checks of ``drasim run``'s arguments made before anything runs (bad input: exit 2, no traceback).

The driver options go through the check the pytest plugin uses too
(:func:`drasim.conformance.driver_options.driver_options_problem`); report paths are tried for
writing, so an unwritable ``--junit``/``--json``/``--html`` is found at start, not after the run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from drasim.errors import ConfigError

REPORT_FLAGS = ("junit", "json", "html")


def check_run_arguments(args: argparse.Namespace) -> None:
    """Raise ConfigError for the first mistake in the driver or report options."""
    from drasim.conformance.driver_options import driver_options_problem

    problem = driver_options_problem(
        driver_cmd=args.driver_cmd,
        driver_name=args.driver_name,
        capabilities=[c.strip() for item in args.capability for c in item.split(",") if c.strip()],
        bugs=args.inject_bug,
        flag=lambda name: f"--{name}",
        capabilities_need_driver=True,
    )
    if problem:
        raise ConfigError(problem)
    for name in REPORT_FLAGS:
        path = getattr(args, name, None)
        if path is not None:
            problem = report_path_problem(Path(path))
            if problem:
                raise ConfigError(f"--{name} {path}: {problem}")


def report_path_problem(path: Path) -> str | None:
    """Why a report cannot be written to ``path``, found by trying (nothing is left behind), or None."""
    if path.is_dir():
        return "is a directory; give a file name"
    existed = path.exists()
    try:
        with path.open("a" if existed else "x"):  # "a" keeps an existing file's content
            pass
    except OSError as err:
        return f"cannot write it: {err.strerror or err}"
    if not existed:
        with contextlib.suppress(OSError):
            os.unlink(path)
    return None
