"""Checks of ``drasim run``'s own arguments made before anything runs (bad input: exit 2, no
traceback): report paths are tried for writing, so an unwritable ``--junit``/``--json``/``--html``
is found at start, not after the run. (The run options, the driver options among them, are
checked by the option table for both front ends: :func:`drasim.optiontable.build_run_options`.)
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from drasim.errors import ConfigError

REPORT_FLAGS = ("junit", "json", "html")


def check_run_arguments(args: argparse.Namespace) -> None:
    """Raise ConfigError for the first report path that cannot be written."""
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
