"""The built-in scenario library: every file validates and the library covers what the issue asks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from drasim.scenario import builtin_scenario_dir, discover, load_paths
from drasim.scenario.common import BugName
from drasim.scenario.jsonschema import scenario_json_schema

REPO = Path(__file__).resolve().parents[3]
LIBRARY = REPO / "scenarios"


@pytest.fixture(scope="module")
def library():
    return load_paths([LIBRARY])


def test_builtin_dir_is_the_checkout_library():
    assert builtin_scenario_dir() == LIBRARY


def test_builtin_dir_can_be_overridden(monkeypatch, tmp_path):
    monkeypatch.setenv("DRASIM_SCENARIOS", str(tmp_path))
    assert builtin_scenario_dir() == tmp_path


def test_every_library_scenario_validates(library):
    files = discover([LIBRARY])
    assert len(library) >= 40
    assert len({s.file for s in library}) == len(files)


def test_every_scenario_says_what_it_proves_and_where_from(library):
    for scenario in library:
        meta = scenario.metadata
        assert meta.description.endswith("."), scenario.file
        assert meta.source, f"{scenario.file}: metadata.source is empty"
        assert meta.tags, f"{scenario.file}: no tags"
        top = Path(scenario.file).relative_to(LIBRARY).parts[0]
        assert top in meta.tags, f"{scenario.file}: tag it {top!r}"


def test_file_names_match_scenario_names(library):
    for scenario in library:
        assert scenario.name.endswith(Path(scenario.file).stem), scenario.file


def test_conformance_covers_the_required_topics(library):
    tags = Counter(t for s in library if "conformance" in s.metadata.tags for t in s.metadata.tags)
    for topic in ("registration", "prepare", "unprepare", "idempotency", "batching", "shared-claim",
                  "plugin-restart", "cdi", "health", "kubelet-restart"):  # fmt: skip
        assert tags[topic], f"no conformance scenario tagged {topic!r}"


def test_kubelet_fidelity_covers_every_area(library):
    areas = {
        Path(s.file).relative_to(LIBRARY / "kubelet").parts[0]
        for s in library
        if "kubelet" in s.metadata.tags
    }
    assert areas >= {"registration", "faults", "restart", "plugin", "reboot", "pods", "metrics", "slices"}


def test_every_fake_bug_is_caught_by_some_scenario(library):
    caught = {bug for s in library for bug in s.metadata.catches}
    assert caught == set(BugName.__args__)  # type: ignore[attr-defined]


def test_bug_names_match_the_fake_plugin():
    behaviour = pytest.importorskip("fake_plugins.behaviour")
    assert set(BugName.__args__) == set(behaviour.BUGS)  # type: ignore[attr-defined]


def test_library_files_satisfy_the_json_schema():
    import jsonschema  # in the test extra: this test must run, not skip

    validator = jsonschema.Draft202012Validator(scenario_json_schema())
    for path in discover([LIBRARY]):
        for document in yaml.safe_load_all(path.read_text()):
            errors = [e.message for e in validator.iter_errors(document)]
            assert not errors, f"{path}: {errors[:3]}"
