"""The JSON Schema and the generated docs stay in step with the dataclasses."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import textwrap

import pytest

from drasim.scenario import STEP_TYPES, Step, load_text
from drasim.scenario.docs import DOC_PATH, splice
from drasim.scenario.jsonschema import SCHEMA_PATH, scenario_json_schema
from drasim.scenario.typeinfo import fields_of


def test_committed_json_schema_is_current():
    committed = json.loads(SCHEMA_PATH.read_text())
    assert committed == scenario_json_schema(), (
        "regenerate: python -m drasim.scenario.schema > drasim/scenario/scenario.schema.json"
    )


def test_schema_module_prints_the_schema():
    out = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-m", "drasim.scenario.schema"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert json.loads(out.stdout) == scenario_json_schema()
    assert out.stderr == ""


def test_generated_docs_are_current():
    text = DOC_PATH.read_text()
    assert splice(text) == text, "regenerate: python -m drasim.scenario.docs --write"


def _all_classes():
    seen = {}

    def visit(cls):
        if cls.__name__ in seen:
            return
        seen[cls.__name__] = cls
        for info in fields_of(cls):
            for candidate in [info.tp, *getattr(info.tp, "__args__", ())]:
                for inner in [candidate, *getattr(candidate, "__args__", ())]:
                    if dataclasses.is_dataclass(inner) and inner is not Step:
                        visit(inner)

    from drasim.scenario.schema import Scenario

    visit(Scenario)
    for st in STEP_TYPES.values():
        visit(st.cls)
    return list(seen.values())


def test_every_field_and_step_is_described():
    for cls in _all_classes():
        assert (cls.__doc__ or "").strip(), cls.__name__
        for info in fields_of(cls):
            assert info.description.strip(), f"{cls.__name__}.{info.attr} has no description"
            assert info.description.rstrip().endswith((".", ")")), f"{cls.__name__}.{info.attr}"


def test_step_names_are_camel_case_verbs_and_expectations_start_with_expect():
    for name, st in STEP_TYPES.items():
        assert re.fullmatch(r"[a-z][A-Za-z]+", name), name
        assert (st.kind == "expectation") == name.startswith("expect")


def _doc_examples():
    blocks = re.findall(r"```yaml\n(.*?)```", DOC_PATH.read_text(), flags=re.DOTALL)
    return [b for b in blocks if "kind: Scenario" in b]


@pytest.mark.parametrize("example", _doc_examples())
def test_examples_in_the_docs_validate(example):
    assert load_text(textwrap.dedent(example), "docs/scenarios.md")
