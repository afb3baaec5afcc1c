"""The JSON report: ``{"reportVersion": 1, ...}`` with everything in the model.

Keys are camelCase and sorted, so two runs diff cleanly. :func:`load_json_report`
reads one back into a :class:`RunReport`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from drasim.errors import ConfigError
from drasim.journal.convert import to_jsonable
from drasim.report.files import atomic_write_text
from drasim.report.model import RunReport

REPORT_VERSION = 1


def report_to_dict(report: RunReport) -> dict[str, Any]:
    """The JSON document as a dict."""
    data: dict[str, Any] = to_jsonable(report.to_dict())
    data["reportVersion"] = REPORT_VERSION
    return data


def render_json(report: RunReport) -> str:
    """The JSON report text (indented, sorted keys, trailing newline)."""
    return json.dumps(report_to_dict(report), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json(report: RunReport, path: str | os.PathLike[str]) -> None:
    """Write :func:`render_json` to ``path`` atomically."""
    atomic_write_text(Path(path), render_json(report))


def load_json_report(text: str, source: str = "<json report>") -> RunReport:
    """Parse a JSON report; raises :class:`ConfigError` naming ``source`` when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        msg = f"{source}:{err.lineno}: not valid JSON ({err.msg})"
        raise ConfigError(msg) from err
    if not isinstance(data, dict) or data.get("reportVersion") != REPORT_VERSION:
        found = data.get("reportVersion") if isinstance(data, dict) else type(data).__name__
        msg = f"{source}: reportVersion: expected {REPORT_VERSION}, found {found!r}"
        raise ConfigError(msg)
    try:
        return RunReport.from_dict(data)
    except (KeyError, TypeError, ValueError) as err:
        msg = f"{source}: not a drasim report: {err}"
        raise ConfigError(msg) from err
