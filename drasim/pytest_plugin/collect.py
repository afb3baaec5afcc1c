"""Scenario files as pytest collectors: one item per ``kind: Scenario`` document.

A file is collected when it matches one of the ``drasim_scenario_globs`` (relative
to ``drasim_root``; a glob without ``/`` matches the file name at any depth) or lies
in the directory of the ``--drasim-suite``. Documents of other kinds in the same
file (manifests kept next to a scenario) are ignored, not reported. Items are named
after the scenario (``file.yaml::scenario-name``), point at the document's line, and
carry a ``drasim_requires`` marker with the capabilities the scenario needs. With
``--drasim-kubelet-version`` each scenario gives one item per version
(``file.yaml::scenario-name[kubelet-1.34]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from drasim.conformance import scenario_requirements
from drasim.errors import ScenarioError
from drasim.pytest_plugin.options import Settings, settings_of
from drasim.report.model import ScenarioResult
from drasim.report.terminal import failure_lines, printable
from drasim.scenario.loader import load_text
from drasim.scenario.schema import Scenario

SUFFIXES = (".yaml", ".yml")
_KIND_LINE = re.compile(r"^kind:\s*['\"]?Scenario['\"]?\s*(#.*)?$", re.MULTILINE)
RESULT_ATTRIBUTE = "drasim_result"
"""The attribute of a scenario item's test report that carries its result (JSON form).

Not a ``user_property``: pytest's ``--junitxml`` writes every user property into the
user's XML (a ~17 KB dump per scenario). pytest-xdist serializes a report's extra
attributes, so the result still reaches the controller.
"""


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a path glob: ``**/`` spans directories, ``*`` and ``?`` stay within one."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: Path, settings: Settings) -> bool:
    """Whether ``path`` is a scenario file by the configured globs or the suite directories."""
    if path.suffix not in SUFFIXES:
        return False
    resolved = path.resolve()
    if any(resolved.is_relative_to(d) for d in settings.suite_dirs):
        return True
    try:
        relative: str | None = resolved.relative_to(settings.root).as_posix()
    except ValueError:
        relative = None
    for pattern in settings.globs:
        if "/" not in pattern:
            if glob_regex(pattern).match(path.name):
                return True
        elif relative is not None and glob_regex(pattern).match(relative):
            return True
    return False


def scenario_documents_only(text: str) -> str | None:
    """``text`` with every non-Scenario document blanked (lines kept, so positions stay right).

    Returns None when no document is a Scenario; returns ``text`` unchanged when YAML
    cannot be parsed (the scenario loader then reports where and why).
    """
    if not _KIND_LINE.search(text):
        return None
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return text
    lines = text.splitlines(keepends=True)
    found = False
    for node in nodes:
        if _kind_of(node) == "Scenario":
            found = True
            continue
        if node is None:
            continue
        end = node.end_mark.line + (1 if node.end_mark.column > 0 else 0)
        for index in range(node.start_mark.line, min(end, len(lines))):
            lines[index] = "\n"
    return "".join(lines) if found else None


def _kind_of(node: Any) -> str | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "kind" and isinstance(value, yaml.ScalarNode):
            return str(value.value)
    return None


class ScenarioFile(pytest.File):
    """A YAML file holding one or more scenarios."""

    def collect(self) -> Iterable[ScenarioItem]:
        """One :class:`ScenarioItem` per Scenario document."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise self.CollectError(f"{self.path}: cannot read scenario file: {err}") from None
        filtered = scenario_documents_only(text)
        if filtered is None:
            return []
        try:
            scenarios = load_text(filtered, str(self.path), base_dir=self.path.parent)
        except ScenarioError as err:
            raise self.CollectError(str(err)) from None
        return list(self._items(scenarios))

    def _items(self, scenarios: list[Scenario]) -> Iterator[ScenarioItem]:
        from drasim.runner.versions import matrix_name

        versions = settings_of(self.config).kubelet_versions
        for scenario in scenarios:
            if not versions:
                yield ScenarioItem.from_parent(self, name=scenario.name, scenario=scenario)
            for version in versions:
                name = matrix_name(scenario.name, version)
                yield ScenarioItem.from_parent(self, name=name, scenario=scenario, kubelet_version=version)


class ScenarioFailedError(Exception):
    """A scenario did not pass; carries the runner's result for :meth:`ScenarioItem.repr_failure`."""

    def __init__(self, result: ScenarioResult) -> None:
        super().__init__(result.failure.message if result.failure else result.status)
        self.result = result


class ScenarioItem(pytest.Item):
    """One scenario, run in a fresh simulated node by :func:`drasim.runner.run.run_scenario`."""

    def __init__(self, *, scenario: Scenario, kubelet_version: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.kubelet_version = kubelet_version
        self.result: ScenarioResult | None = None
        self._attached: ScenarioResult | None = None
        requirements = scenario_requirements(scenario)
        if requirements:
            self.add_marker(pytest.mark.drasim_requires(*[r.capability for r in requirements]))
        self.drasim_requirements = requirements
        self.extra_keyword_matches.update(scenario.metadata.tags)

    def runtest(self) -> None:
        """Run the scenario; a failure or error raises :class:`ScenarioFailedError`."""
        from drasim.conformance import real_driver_skip_reason
        from drasim.report.model import RESULTS
        from drasim.runner.run import run_scenario

        settings = settings_of(self.config)
        result = run_scenario(
            settings.prepare(self.scenario),
            settings.run_options(self.kubelet_version),
            results=RESULTS,
            real_driver_skip=real_driver_skip_reason,
        )
        self.record(result)
        self.add_output_sections(result)
        if result.status == "skipped":
            pytest.skip(result.skip_reason or "skipped by the runner")
        if result.status in ("failed", "error"):
            raise ScenarioFailedError(result)

    def record(self, result: ScenarioResult) -> None:
        """Keep ``result`` for the report directory (:func:`attach_result` sends it with the test report)."""
        self.result = result

    def attach_result(self, report: pytest.TestReport) -> None:
        """Put the result recorded since the last report on ``report`` (once per result)."""
        if self.result is not None and self.result is not self._attached:
            setattr(report, RESULT_ATTRIBUTE, self.result.to_dict())
            self._attached = self.result

    def add_output_sections(self, result: ScenarioResult) -> None:
        """With ``-o junit_logging=...``, pytest's JUnit gets the journal and the driver's output.

        They become the item's captured stdout (the journal, one line per event, then the
        driver's stdout) and stderr (the driver's stderr), which pytest's ``--junitxml``
        writes as ``<system-out>`` / ``<system-err>``. Without ``junit_logging`` nothing is
        added, so a failure's terminal output stays the scenario's own text.
        """
        if str(self.config.getini("junit_logging")) in ("", "no"):
            return
        from drasim.report.junit import case_output

        out, err = case_output(result)
        if out:
            self.add_report_section("call", "stdout", out)
        if err:
            self.add_report_section("call", "stderr", err)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The failing step, the message, expected vs actual, journal and driver output; no traceback."""
        if isinstance(excinfo.value, ScenarioFailedError):
            lines = failure_lines(excinfo.value.result)
            return "\n".join(printable(line) for line in lines[1:])
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        """``file:line`` of the scenario document."""
        return self.path, max(self.scenario.line - 1, 0), f"scenario: {self.scenario.name}"
