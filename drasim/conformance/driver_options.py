"""One check of the driver-under-test options for both front ends (``drasim run`` and pytest).

Each front end passes its own spelling of the flags (``flag("driver-cmd")`` is ``--driver-cmd``
for the CLI, ``--drasim-driver-cmd`` for pytest), so the two give the same message for the same
mistake, before anything runs, and both exit 2.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

from drasim.conformance.requirements import KNOWN_CAPABILITIES, check_capability_names
from drasim.errors import ConfigError


def driver_command_problem(command: str, flag: Callable[[str], str]) -> str | None:
    """Why ``command`` cannot be a driver command template (unknown placeholder, bad quoting), or None."""
    from drasim.runner.process import PLACEHOLDERS, render_command

    try:
        render_command(command, {name: f"<{name}>" for name in PLACEHOLDERS})
    except ConfigError as err:
        return f"{flag('driver-cmd')}: {err}"
    except ValueError as err:  # shlex: unbalanced quotes
        return f"{flag('driver-cmd')}: cannot split {command!r}: {err}"
    return None


def driver_options_problem(
    *,
    driver_cmd: str | None,
    driver_name: str | None,
    capabilities: Sequence[str],
    bugs: Sequence[str],
    flag: Callable[[str], str],
    capabilities_need_driver: bool,
) -> str | None:
    """The first mistake in the driver options, or None.

    ``capabilities_need_driver``: the front end gives capabilities a meaning only for a real
    driver (the CLI), so declaring them without one is a mistake rather than silently ignored.
    """
    if driver_cmd is not None:
        problem = driver_command_problem(driver_cmd, flag)
        if problem:
            return problem
        if bugs:
            return (
                f"{flag('inject-bug')} switches a bug on in drasim's fake plugin, and with "
                f"{flag('driver-cmd')} no fake plugin runs: the bug would be ignored"
            )
    elif driver_name is not None:
        return f"{flag('driver-name')} needs {flag('driver-cmd')}"
    elif capabilities and capabilities_need_driver:
        return f"{flag('capability')} says what the driver under test can do: it needs {flag('driver-cmd')}"
    bad = check_capability_names(capabilities)
    if bad:
        return (
            f"{flag('capability')}: invalid capability name {bad[0]!r} "
            "(lowercase letters, digits, '-' and '.'); "
            f"known capabilities: {', '.join(KNOWN_CAPABILITIES)}"
        )
    return None


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
