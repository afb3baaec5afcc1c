"""Where a driver command's relative program is found: the pytest plugin's ``drasim_driver_cmd``
ini key names ``./bin/driver`` from the ini file's directory. (The driver options are checked
once, for both front ends, by the option table: :func:`drasim.optiontable.build_run_options`.)
"""

from __future__ import annotations

import shlex
from pathlib import Path


def anchored_command(command: str, base: Path) -> str:
    """``command`` with a relative program path (``./bin/driver``, ``bin/driver``) made absolute
    against ``base``: the directory of the ini file it was written in, or of the command line.
    A bare program name (looked up on PATH), an absolute path and a template word are kept."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command  # the command check reports the quoting
    if not words:
        return command
    program = words[0]
    if "/" not in program or "{" in program or Path(program).is_absolute():
        return command
    absolute = shlex.quote(str(base / program))
    rest = command.lstrip()
    if rest.startswith(program):
        return absolute + rest[len(program) :]
    return shlex.join([str(base / program), *words[1:]])
