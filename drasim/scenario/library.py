"""Where the built-in scenario library lives, in a source checkout or an installed wheel."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

ENV_VAR = "DRASIM_SCENARIOS"
_SHARE = Path("share") / "drasim" / "scenarios"


def builtin_scenario_dir() -> Path:
    """The ``scenarios/`` directory shipped with drasim.

    Looked up in order: ``$DRASIM_SCENARIOS``; ``scenarios/`` next to the ``drasim`` package
    (a source checkout or editable install); ``<prefix>/share/drasim/scenarios`` (a wheel
    installs it there as data files). Falls back to the checkout path even if missing, so
    the error names a sensible place.
    """
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    checkout = Path(__file__).resolve().parent.parent.parent / "scenarios"
    candidates = [checkout]
    data = sysconfig.get_path("data")
    if data:
        candidates.append(Path(data) / _SHARE)
    candidates += [Path(sys.prefix) / _SHARE, Path(sys.base_prefix) / _SHARE]
    user_base = sysconfig.get_config_var("userbase")
    if user_base:
        candidates.append(Path(user_base) / _SHARE)
    for candidate in candidates:
        if (candidate / "conformance").is_dir():
            return candidate
    return checkout
