"""JUnit XML, the format CI systems (Jenkins, GitLab, GitHub test reporters) read.

One ``<testsuite name="drasim">`` inside ``<testsuites>``; a ``<testcase>`` per
scenario with ``classname`` = the scenario's folder (dotted) and ``name`` = the
scenario name; ``<failure>``, ``<error>`` or ``<skipped>`` with a short
``message`` and the detailed text; ``<system-out>`` with the journal summary (one line per
event) and the driver's stdout, ``<system-err>`` with the driver's stderr. Characters XML 1.0 cannot carry are
written as ``\\xNN`` so the file always parses.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from drasim.journal import describe_event
from drasim.report.model import RunReport, ScenarioResult
from drasim.report.terminal import failure_lines

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with characters that XML 1.0 forbids replaced by ``\\xNN`` / ``\\uNNNN``."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _INVALID_XML.sub(escape, text)


def _sub(parent: ET.Element, tag: str, text: str = "", **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text:
        element.text = xml_text(text)
    return element


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _testcase(suite: ET.Element, result: ScenarioResult) -> None:
    attrs = {"classname": result.folder, "name": result.name, "time": f"{result.duration:.3f}"}
    if result.file:
        attrs["file"] = result.file
    if result.line:
        attrs["line"] = str(result.line)
    case = _sub(suite, "testcase", **attrs)
    if result.status == "skipped":
        _sub(case, "skipped", message=result.skip_reason)
    elif result.status in ("failed", "error"):
        tag = "failure" if result.status == "failed" else "error"
        message = _first_line(result.failure.message) if result.failure else result.status
        details = "\n".join(failure_lines(result)[1:])
        _sub(case, tag, details, message=message, type="AssertionError" if tag == "failure" else "Error")
    out, err = case_output(result)
    if out:
        _sub(case, "system-out", out)
    if err:
        _sub(case, "system-err", err)


def case_output(result: ScenarioResult) -> tuple[str, str]:
    """A scenario's (system-out, system-err): the journal, one line per event, then the
    driver's stdout; the driver's stderr. Either is '' when there is nothing to show."""
    out = [describe_event(e) + "\n" for e in result.journal]
    if result.stdout.strip():
        out.append("driver stdout:\n" + _ensure_newline(result.stdout))
    err = _ensure_newline(result.stderr) if result.stderr.strip() else ""
    return "".join(out), err


def _ensure_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def render_junit(report: RunReport) -> str:
    """The report as a JUnit XML document (text, with an XML declaration)."""
    counts = report.counts
    root = ET.Element("testsuites")
    suite_attrs = {
        "name": "drasim",
        "tests": str(counts["total"]),
        "failures": str(counts["failed"]),
        "errors": str(counts["error"]),
        "skipped": str(counts["skipped"]),
        "time": f"{report.duration:.3f}",
        "timestamp": report.started_at,
    }
    root.attrib.update(
        {k: suite_attrs[k] for k in ("name", "tests", "failures", "errors", "skipped", "time")}
    )
    suite = _sub(root, "testsuite", **suite_attrs)
    properties = _sub(suite, "properties")
    env = report.environment
    props = {
        "drasim.version": report.drasim_version,
        "driver": env.driver,
        "backend": env.backend,
        "timeScale": f"{env.time_scale:g}",
        **env.extra,
    }
    for name, value in props.items():
        _sub(properties, "property", name=name, value=value)
    for result in report.results:
        _testcase(suite, result)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: RunReport, path: str | os.PathLike[str]) -> None:
    """Write :func:`render_junit` to ``path`` atomically."""
    from drasim.report.files import atomic_write_text

    atomic_write_text(Path(path), render_junit(report))
