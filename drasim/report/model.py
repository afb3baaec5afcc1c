"""The result model: what the runner fills in and every renderer reads.

Plain dataclasses of JSON-ready values. The runner fills in one
:class:`ScenarioResult` per scenario (with a :class:`FailureInfo` when it did not
pass), built by :data:`RESULTS`, which its callers hand it; they wrap the results in
one :class:`RunReport` for the whole run and hand it to the renderers in
:mod:`drasim.report`. ``to_dict``/``from_dict`` give the JSON form
(camelCase keys) used by the JSON report.
"""

from __future__ import annotations

import datetime
import os
import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from drasim import __version__
from drasim.report.diff import unified_diff

if TYPE_CHECKING:
    from drasim.scenario.schema import Scenario

Status = Literal["passed", "failed", "error", "skipped"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "skipped")


def stable_folder(file: str, cwd: str | None = None) -> str:
    """The dotted folder of scenario ``file``, independent of where drasim or the checkout lives.

    - a built-in library scenario: ``scenarios.`` + its folder in the library
      (``scenarios.kubelet.restart``), wherever drasim is installed;
    - a relative path: its folder as given (``tests/drasim`` -> ``tests.drasim``);
    - an absolute path under the working directory (``cwd``, default ``os.getcwd()``):
      its folder relative to it, as pytest names tests relative to its root;
    - any other absolute path: the name of its folder alone.

    ``drasim`` when nothing is left (a file in the working directory, or no file).
    """
    path = file.replace("\\", "/")
    parent = posixpath.dirname(path)
    if posixpath.isabs(parent):
        from drasim.scenario.library import builtin_scenario_dir

        parent = os.path.realpath(parent)
        library = os.path.realpath(builtin_scenario_dir())
        base = posixpath.normpath(cwd if cwd is not None else os.getcwd())
        if _is_within(parent, library):
            parent = posixpath.join("scenarios", posixpath.relpath(parent, library))
        elif _is_within(parent, base):
            parent = posixpath.relpath(parent, base)
        else:
            parent = posixpath.basename(parent)
    parts = [p for p in parent.split("/") if p not in ("", ".", "..")]
    return ".".join(parts) or "drasim"


def _is_within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


@dataclass
class FailureInfo:
    """Why a scenario failed (an expectation did not hold) or errored (something broke).

    ``similar_events`` and ``journal_tail`` are journal events (dicts); renderers
    print them with :func:`drasim.journal.describe_event`. ``diff`` is a unified
    diff of ``expected`` vs ``actual``; :meth:`build` fills it in.
    """

    message: str
    step_index: int | None = None
    step_text: str = ""
    expected: Any = None
    actual: Any = None
    diff: str = ""
    similar_events: list[dict[str, Any]] = field(default_factory=list)
    journal_tail: list[dict[str, Any]] = field(default_factory=list)
    reproduce: str = ""

    @classmethod
    def build(
        cls,
        message: str,
        *,
        step_index: int | None = None,
        step_text: str = "",
        expected: Any = None,
        actual: Any = None,
        similar_events: list[dict[str, Any]] | None = None,
        journal_tail: list[dict[str, Any]] | None = None,
        reproduce: str = "",
    ) -> FailureInfo:
        """A FailureInfo whose ``diff`` is computed when ``expected`` or ``actual`` is given."""
        has_values = expected is not None or actual is not None
        return cls(
            message=message,
            step_index=step_index,
            step_text=step_text,
            expected=expected,
            actual=actual,
            diff=unified_diff(expected, actual) if has_values else "",
            similar_events=list(similar_events or []),
            journal_tail=list(journal_tail or []),
            reproduce=reproduce,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "message": self.message,
            "stepIndex": self.step_index,
            "stepText": self.step_text,
            "expected": self.expected,
            "actual": self.actual,
            "diff": self.diff,
            "similarEvents": self.similar_events,
            "journalTail": self.journal_tail,
            "reproduce": self.reproduce,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FailureInfo:
        """Inverse of :meth:`to_dict`."""
        return cls(
            message=str(data.get("message", "")),
            step_index=data.get("stepIndex"),
            step_text=str(data.get("stepText", "")),
            expected=data.get("expected"),
            actual=data.get("actual"),
            diff=str(data.get("diff", "")),
            similar_events=list(data.get("similarEvents") or []),
            journal_tail=list(data.get("journalTail") or []),
            reproduce=str(data.get("reproduce", "")),
        )


@dataclass
class ScenarioResult:
    """The outcome of one scenario.

    ``file`` is the scenario file path as the user gave it and ``line`` the line its
    document starts on. ``journal`` holds the scenario's journal events;
    ``stdout``/``stderr`` the output of a driver process (if one was started);
    ``artifacts`` maps a label to a file path kept after the run.
    """

    name: str
    status: Status
    file: str = ""
    line: int = 0
    description: str = ""
    tags: list[str] = field(default_factory=list)
    duration: float = 0.0
    skip_reason: str = ""
    failure: FailureInfo | None = None
    journal: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    artifacts: dict[str, str] = field(default_factory=dict)
    kubelet_version: str = ""
    """The kubelet version the scenario ran as (``"1.34"``; empty in reports of older drasim)."""
    time_scale: float | None = None
    """The scenario's own ``timeScale`` (``None`` in reports of older drasim); a run's override,
    when given, is the report's ``environment.timeScale`` (see :mod:`drasim.timescale`)."""
    bugs: list[str] = field(default_factory=list)
    """Fake-plugin bugs the scenario itself switches on (its fake drivers' ``bugs``); a run's
    ``--inject-bug`` is the report's ``environment.extra["injectedBugs"]``."""

    @classmethod
    def of(cls, scenario: Scenario, status: Status, *, skip_reason: str = "") -> ScenarioResult:
        """A result for ``scenario`` carrying its name, location, description and tags."""
        return cls(
            name=scenario.name,
            status=status,
            file=scenario.file,
            line=scenario.line,
            description=scenario.metadata.description,
            tags=list(scenario.metadata.tags),
            skip_reason=skip_reason,
            time_scale=scenario.spec.kubelet.time_scale,
            bugs=list(
                dict.fromkeys(str(b) for d in scenario.spec.all_drivers() if d.fake for b in d.fake.bugs)
            ),
        )

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            msg = f"scenario status must be one of {', '.join(STATUSES)}; got {self.status!r}"
            raise ValueError(msg)

    @property
    def location(self) -> str:
        """``file:line`` (or just the file, or ``""``)."""
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file

    @property
    def folder(self) -> str:
        """The scenario's folder as a dotted name (``scenarios/conformance`` -> ``scenarios.conformance``).

        The same on every machine (it is JUnit's ``classname``, which CI history keys on):
        see :func:`stable_folder`.
        """
        return stable_folder(self.file)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "status": self.status,
            "file": self.file,
            "line": self.line,
            "description": self.description,
            "tags": list(self.tags),
            "duration": self.duration,
            "skipReason": self.skip_reason,
            "failure": self.failure.to_dict() if self.failure else None,
            "journal": self.journal,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "artifacts": dict(self.artifacts),
            "kubeletVersion": self.kubelet_version,
            "timeScale": self.time_scale,
            **({"bugs": list(self.bugs)} if self.bugs else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScenarioResult:
        """Inverse of :meth:`to_dict`."""
        failure = data.get("failure")
        return cls(
            name=str(data["name"]),
            status=cast("Status", data["status"]),
            file=str(data.get("file", "")),
            line=int(data.get("line") or 0),
            description=str(data.get("description", "")),
            tags=[str(t) for t in data.get("tags") or []],
            duration=float(data.get("duration") or 0.0),
            skip_reason=str(data.get("skipReason", "")),
            failure=FailureInfo.from_dict(failure) if isinstance(failure, dict) else None,
            journal=list(data.get("journal") or []),
            stdout=str(data.get("stdout", "")),
            stderr=str(data.get("stderr", "")),
            artifacts={str(k): str(v) for k, v in (data.get("artifacts") or {}).items()},
            kubelet_version=str(data.get("kubeletVersion", "")),
            time_scale=float(data["timeScale"]) if data.get("timeScale") is not None else None,
            bugs=[str(b) for b in data.get("bugs") or []],
        )


@dataclass
class RunEnvironment:
    """What the scenarios ran against."""

    driver: str = "fake"
    backend: str = "memory"
    time_scale: float = 1.0
    extra: dict[str, str] = field(default_factory=dict)
    kubelet: str = ""
    """The kubelet in the node's slot, described (``emulated``, ``upstream (k8s.io/kubernetes v1.37.2)``);
    empty when the front end did not say (the HTML header then leaves it out)."""
    driver_detail: str = ""
    """More about ``driver``: the name a driver command registers, whether drasim's proxy is in front."""
    backend_detail: str = ""
    """More about ``backend``: the kubeconfig file and context of a real cluster."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the optional descriptions only when set)."""
        optional = {
            "kubelet": self.kubelet,
            "driverDetail": self.driver_detail,
            "backendDetail": self.backend_detail,
        }
        return {
            "driver": self.driver,
            "backend": self.backend,
            "timeScale": self.time_scale,
            "extra": self.extra,
            **{key: value for key, value in optional.items() if value},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunEnvironment:
        """Inverse of :meth:`to_dict`."""
        return cls(
            driver=str(data.get("driver", "")),
            backend=str(data.get("backend", "")),
            time_scale=float(data.get("timeScale", 1.0)),
            extra={str(k): str(v) for k, v in (data.get("extra") or {}).items()},
            kubelet=str(data.get("kubelet", "")),
            driver_detail=str(data.get("driverDetail", "")),
            backend_detail=str(data.get("backendDetail", "")),
        )

    @property
    def injected_bugs(self) -> list[str]:
        """The fake-plugin bugs the run switched on in every fake driver (``--inject-bug``)."""
        return [b for b in self.extra.get("injectedBugs", "").split(",") if b]


def utc_now_iso() -> str:
    """The current UTC time, ISO-8601 with seconds (``2026-12-02T13:11:02Z``)."""
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    return now.isoformat().replace("+00:00", "Z")


@dataclass
class RunReport:
    """A whole run: the results in the order they should be shown, plus where and when."""

    results: list[ScenarioResult] = field(default_factory=list)
    started_at: str = field(default_factory=utc_now_iso)
    duration: float = 0.0
    drasim_version: str = __version__
    environment: RunEnvironment = field(default_factory=RunEnvironment)

    def count(self, status: Status) -> int:
        """How many results have ``status``."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def counts(self) -> dict[str, int]:
        """``{"passed": n, "failed": n, "error": n, "skipped": n, "total": n}``."""
        counts: dict[str, int] = {s: self.count(s) for s in STATUSES}
        counts["total"] = len(self.results)
        return counts

    @property
    def ok(self) -> bool:
        """No scenario failed or errored (the CLI exits 0)."""
        return self.count("failed") == 0 and self.count("error") == 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form (without ``reportVersion``; see :mod:`drasim.report.json_report`)."""
        return {
            "drasimVersion": self.drasim_version,
            "startedAt": self.started_at,
            "duration": self.duration,
            "environment": self.environment.to_dict(),
            "summary": self.counts,
            "results": [r.to_dict() for r in self.results],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunReport:
        """Inverse of :meth:`to_dict` (``summary`` is recomputed, not read)."""
        return cls(
            results=[ScenarioResult.from_dict(r) for r in data.get("results") or []],
            started_at=str(data.get("startedAt", "")),
            duration=float(data.get("duration") or 0.0),
            drasim_version=str(data.get("drasimVersion", "")),
            environment=RunEnvironment.from_dict(data.get("environment") or {}),
        )


class ResultBuilder:
    """Builds this model's results for the runner: callers pass :data:`RESULTS` as ``results=``
    to :func:`drasim.runner.run.run_scenario` / ``run_scenarios`` (the runner does not import
    the report; it fills in what this gives it)."""

    scenario = staticmethod(ScenarioResult.of)
    failure = staticmethod(FailureInfo.build)


RESULTS = ResultBuilder()
"""The runner's result builder for this model."""
