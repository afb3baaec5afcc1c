"""Load scenario files: YAML -> :class:`~drasim.scenario.schema.Scenario`, with every problem reported.

Public entry points: :func:`load_text`, :func:`load_file`, :func:`load_paths` and
:func:`discover`. All of them raise :class:`drasim.errors.ScenarioError` holding every
problem as ``file:line:col: path: message``; none lets another exception escape for bad
input.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from drasim.errors import ScenarioError
from drasim.fsutil import read_regular_file
from drasim.limits import MAX_FILE_BYTES
from drasim.scenario.common import API_VERSION, KIND
from drasim.scenario.decoder import INVALID, Decoder, Problem, suggest
from drasim.scenario.schema import ClaimShorthand, Scenario
from drasim.scenario.validation import ScenarioChecker
from drasim.scenario.yamlsrc import Loc, parse_documents, yaml_error_loc

SCENARIO_SUFFIXES = (".yaml", ".yml")
_KIND_LINE = re.compile(r"^kind:\s*['\"]?Scenario['\"]?\s*(#.*)?$", re.MULTILINE)


def load_text(text: str, file: str = "<string>", *, base_dir: Path | None = None) -> list[Scenario]:
    """Every Scenario document in ``text``; raises ScenarioError with all problems."""
    scenarios, problems = _load_text(text, file, base_dir)
    if problems:
        raise ScenarioError([str(p) for p in sorted(problems)])
    return scenarios


def load_file(path: str | Path) -> list[Scenario]:
    """Every Scenario document in one file; raises ScenarioError with all problems."""
    return load_paths([path])


def load_paths(paths: Sequence[str | Path]) -> list[Scenario]:
    """Scenarios from files and directories (searched recursively, see :func:`discover`).

    Problems of all files are collected, plus duplicate scenario names across them.
    """
    problems: list[Problem] = []
    files = discover(paths, problems)
    scenarios: list[Scenario] = []
    for file in files:
        found, file_problems = _load_file(file)
        scenarios.extend(found)
        problems.extend(file_problems)
    problems.extend(_duplicate_names(scenarios))
    if problems:
        raise ScenarioError([str(p) for p in _ordered(problems)])
    return scenarios


def discover(paths: Iterable[str | Path], problems: list[Problem] | None = None) -> list[Path]:
    """Scenario files: named files as given; in directories, ``*.yaml``/``*.yml`` with ``kind: Scenario``.

    Files below a directory that hold no Scenario document (shared manifests, charts) are
    skipped. A path that does not exist is a problem.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if (
                    candidate.suffix in SCENARIO_SUFFIXES
                    and candidate.is_file()
                    and _mentions_scenario(candidate)
                ):
                    found.append(candidate)
        elif path.exists():
            found.append(path)
        elif problems is not None:
            problems.append(Problem(Loc(str(path), 1, 1), "", "cannot read file: no such file or directory"))
        else:
            raise ScenarioError([f"{path}:1:1: cannot read file: no such file or directory"])
    return found


def _mentions_scenario(path: Path) -> bool:
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except OSError:
        return True  # let the loader report why it cannot be read
    return bool(_KIND_LINE.search(data.decode("utf-8", errors="replace")))


def read_scenario_text(path: Path) -> str:
    """A scenario (or manifest) file's text: a regular file of at most ``MAX_FILE_BYTES``, UTF-8.

    Raises OSError (its ``strerror``, or ``str()`` for a file of the wrong kind or size)
    or UnicodeDecodeError.
    """
    return read_regular_file(path, MAX_FILE_BYTES).decode("utf-8")


def _load_file(path: Path) -> tuple[list[Scenario], list[Problem]]:
    try:
        text = read_scenario_text(path)
    except (OSError, UnicodeDecodeError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        return [], [Problem(Loc(str(path), 1, 1), "", f"cannot read file: {reason}")]
    return _load_text(text, str(path), path.parent)


def _load_text(text: str, file: str, base_dir: Path | None) -> tuple[list[Scenario], list[Problem]]:
    try:
        documents, duplicates = parse_documents(text, file)
    except yaml.YAMLError as err:
        loc, message = yaml_error_loc(err, file)
        return [], [Problem(loc, "", message)]
    except RecursionError:
        return [], [Problem(Loc(file, 1, 1), "", "YAML nesting is too deep")]
    decoder = Decoder(file, base_dir)
    for loc, key in duplicates:
        decoder.problem(loc, "", f"duplicate key {key!r} (the later value would silently win)")
    scenarios: list[Scenario] = []
    for index, document in enumerate(documents):
        if document.data is None:
            continue
        try:
            scenario = _decode_document(decoder, document.data, document.loc, index, len(documents))
        except RecursionError:
            decoder.problem(document.loc, "", "YAML nesting is too deep")
            continue
        if scenario is not None:
            scenarios.append(scenario)
    if not scenarios and not decoder.problems and not any(d.data is not None for d in documents):
        decoder.problem(Loc(file, 1, 1), "", "the file holds no YAML document")
    return scenarios, decoder.problems


def _decode_document(decoder: Decoder, data: Any, loc: Loc, index: int, count: int) -> Scenario | None:
    prefix = f"document[{index}]" if count > 1 else ""
    if not isinstance(data, dict):
        decoder.problem(loc, prefix, f"a scenario document must be a mapping, got {type(data).__name__}")
        return None
    kind, api = data.get("kind"), data.get("apiVersion")
    kind_loc = getattr(data, "value_locs", {}).get("kind", loc)
    if kind != KIND:
        hint = suggest(str(kind), [KIND]) if isinstance(kind, str) else ""
        shown = "missing" if kind is None else repr(kind)
        decoder.problem(
            kind_loc,
            f"{prefix}.kind" if prefix else "kind",
            f"unknown kind ({shown}). Expected 'Scenario'.{hint}",
        )
        return None
    if api != API_VERSION:
        api_loc = getattr(data, "value_locs", {}).get("apiVersion", loc)
        shown = "missing" if api is None else repr(api)
        decoder.problem(api_loc, "apiVersion", f"unsupported apiVersion ({shown}). Expected {API_VERSION!r}")
        return None
    before = len(decoder.problems)
    scenario = decoder.decode_dataclass(data, Scenario, "", loc)
    if scenario is INVALID or len(decoder.problems) > before:
        return None
    assert isinstance(scenario, Scenario)
    scenario = dataclasses.replace(scenario, file=decoder.file, line=loc.line)
    decoder.locations[id(scenario)] = (loc, "")
    ScenarioChecker(decoder, scenario).run()
    if len(decoder.problems) > before:
        return None
    return _expand_claims(scenario)


def _expand_claims(scenario: Scenario) -> Scenario:
    """Append the manifests of ``spec.claims`` (and their DeviceClasses) to ``spec.objects``."""
    spec = scenario.spec
    if not spec.claims:
        return scenario
    objects = list(spec.objects)
    classes = {(o.get("kind"), o.get("metadata", {}).get("name")) for o in objects}
    for claim in spec.claims:
        driver = claim.driver or "$(DRIVER)"
        if ("DeviceClass", driver) not in classes:
            classes.add(("DeviceClass", driver))
            objects.append(device_class_manifest(driver))
        objects.append(claim_manifest(claim, driver))
    return dataclasses.replace(scenario, spec=dataclasses.replace(spec, objects=objects))


def device_class_manifest(driver: str) -> dict[str, Any]:
    """A DeviceClass named after a driver that selects all of its devices."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": driver},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def claim_manifest(claim: ClaimShorthand, driver: str) -> dict[str, Any]:
    """The ResourceClaim a :class:`ClaimShorthand` stands for."""
    requests = [
        {
            "name": name,
            "exactly": {"deviceClassName": driver, "allocationMode": "ExactCount", "count": claim.count},
        }
        for name in claim.requests
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": claim.name, "namespace": claim.namespace},
        "spec": {"devices": {"requests": requests}},
    }


def _duplicate_names(scenarios: list[Scenario]) -> list[Problem]:
    first: dict[str, Scenario] = {}
    problems: list[Problem] = []
    for scenario in scenarios:
        other = first.setdefault(scenario.name, scenario)
        if other is not scenario:
            problems.append(
                Problem(
                    Loc(scenario.file, scenario.line, 1),
                    "metadata.name",
                    f"duplicate scenario name {scenario.name!r} (first defined at {other.file}:{other.line})",
                )
            )
    return problems


def _ordered(problems: list[Problem]) -> list[Problem]:
    """Sorted by file then position, duplicates removed."""
    return sorted(set(problems), key=lambda p: (p.loc.file, p.loc.line, p.loc.column, p.path, p.message))
