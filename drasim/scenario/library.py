"""Where the built-in scenario library lives, in a source checkout or an installed wheel."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "DRASIM_SCENARIOS"


def builtin_scenario_dir() -> Path:
    """The ``scenarios/`` directory shipped with drasim.

    Looked up in order: ``$DRASIM_SCENARIOS``; ``drasim/_data/scenarios`` (a wheel carries the
    library there as package data, see setup.py); ``scenarios/`` next to the ``drasim`` package
    (a source checkout or editable install), which is also the answer when neither exists, so
    the error names a sensible place.
    """
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    package = Path(__file__).resolve().parent.parent
    packaged = package / "_data" / "scenarios"
    if (packaged / "conformance").is_dir():
        return packaged
    return package.parent / "scenarios"
