"""Which files and documents become items, their names and locations."""

from __future__ import annotations

from typing import Any

import pytest

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: b}
"""


def test_one_item_per_scenario_named_after_it(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    write("drasim_pair.yaml", scenario_text("first") + "---\n" + scenario_text("second"))
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["drasim_pair.yaml::first", "drasim_pair.yaml::second", "2 tests collected*"])


def test_only_scenario_documents_are_collected(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    write("drasim_mixed.yaml", CONFIGMAP + "---\n" + scenario_text("mixed") + "---\n" + CONFIGMAP)
    write("drasim_manifest.yaml", CONFIGMAP)
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["drasim_mixed.yaml::mixed", "1 test collected*"])
    assert "drasim_manifest" not in result.stdout.str()
    assert result.ret == 0


def test_item_points_at_the_document_line(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    write("drasim_lines.yaml", CONFIGMAP + "---\n" + scenario_text("second-doc"))
    items, _ = pytester.inline_genitems()
    assert [i.name for i in items] == ["second-doc"]
    path, line, label = items[0].reportinfo()
    assert str(path).endswith("drasim_lines.yaml")
    assert line == CONFIGMAP.count("\n") + 1  # 0-based line of the document after '---'
    assert "second-doc" in label
    assert items[0].location[1] == line


def test_default_globs(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    write("scenarios/deep/inner/a.yaml", scenario_text("under-scenarios"))
    write("sub/drasim_b.yaml", scenario_text("named-drasim"))
    write("sub/scenarios/c.yaml", scenario_text("not-at-root"))
    write("other.yaml", scenario_text("other-name"))
    result = pytester.runpytest("--collect-only", "-q")
    out = result.stdout.str()
    assert "::under-scenarios" in out
    assert "::named-drasim" in out
    assert "not-at-root" not in out
    assert "other-name" not in out


def test_ini_globs_and_root(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    pytester.makeini("[pytest]\ndrasim_root = suite\ndrasim_scenario_globs =\n    checks/*.yaml\n")
    write("suite/checks/a.yaml", scenario_text("in-checks"))
    write("checks/b.yaml", scenario_text("outside-root"))
    write("drasim_c.yaml", scenario_text("default-glob-off"))
    result = pytester.runpytest("--collect-only", "-q")
    out = result.stdout.str()
    assert "::in-checks" in out
    assert "outside-root" not in out
    assert "default-glob-off" not in out


def test_invalid_scenario_is_a_located_collection_error(
    pytester: pytest.Pytester, write, scenario_text
) -> None:  # type: ignore[no-untyped-def]
    write("drasim_bad.yaml", scenario_text("bad").replace("startPod:", "startPd:"))
    result = pytester.runpytest("-q")
    result.stdout.fnmatch_lines(["*drasim_bad.yaml:13:*unknown step 'startPd'*Did you mean 'startPod'*"])
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_tags_are_keywords(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    write("drasim_tags.yaml", scenario_text("tagged", tags="prepare") + "---\n" + scenario_text("untagged"))
    result = pytester.runpytest("--collect-only", "-q", "-k", "prepare")
    result.stdout.fnmatch_lines(["drasim_tags.yaml::tagged", "1/2 tests collected*"])


def test_suite_collects_the_builtin_conformance_scenarios(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--collect-only", "-q", "--drasim-suite", "conformance")
    out = result.stdout.str()
    names = [line.rsplit("::", 1)[1] for line in out.splitlines() if "::" in line]
    assert len(names) == 15
    assert all(name.startswith("conformance-") for name in names)
    assert "conformance-prepare-unprepare-round-trip" in names


def test_suite_comes_next_to_the_ini_files_testpaths(
    pytester: pytest.Pytester, write: Any, scenario_text: Any
) -> None:
    """``testpaths`` are given paths: the repository's scenarios/ and the suite (drasim init)."""
    pytester.makeini("[pytest]\ntestpaths = scenarios\ndrasim_suite = conformance\n")
    write("scenarios/own.yaml", scenario_text("own-scenario"))
    result = pytester.runpytest("--collect-only", "-q")
    names = [line.rsplit("::", 1)[1] for line in result.stdout.str().splitlines() if "::" in line]
    assert "own-scenario" in names
    assert len(names) == 16
