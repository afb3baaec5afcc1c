"""Every count, size and duration in the scenario language has a maximum, enforced when loading.

The maximum is declared on the field (``doc(..., maximum=..., max_items=...)``); the decoder
reports a value above it as ``file:line:col: path: must be at most N``, the JSON Schema
carries it and docs/scenarios.md prints it next to the field.
"""

from __future__ import annotations

import dataclasses
import time
import typing
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from drasim import limits
from drasim.scenario import STEP_TYPES, decoder
from drasim.scenario import typeinfo as ti
from drasim.scenario.docs import render_reference
from drasim.scenario.jsonschema import scenario_json_schema
from drasim.scenario.registry import Step
from drasim.scenario.schema import Scenario

# Numbers that are not a count, size or duration: any value is cheap to compare.
UNBOUNDED = {("ExpectMetric", "value")}


def _dataclasses() -> Iterator[type]:
    seen: set[type] = set()
    todo: list[Any] = [Scenario, *(st.cls for st in STEP_TYPES.values())]
    while todo:
        tp = todo.pop()
        if dataclasses.is_dataclass(tp) and isinstance(tp, type) and tp is not Step:
            if tp in seen:
                continue
            seen.add(tp)
            yield tp
            todo.extend(info.tp for info in ti.fields_of(tp))
        todo.extend(typing.get_args(tp))


def _numeric(tp: Any) -> bool:
    args = ti.union_args(tp) if ti.is_union(tp) else (tp,)
    return any(a in (int, float) for a in args)


def _fields() -> list[tuple[str, ti.FieldInfo]]:
    return [(cls.__name__, info) for cls in _dataclasses() for info in ti.fields_of(cls)]


def test_every_number_field_declares_a_maximum() -> None:
    missing = [
        f"{owner}.{info.key}"
        for owner, info in _fields()
        if _numeric(info.tp) and info.maximum is None and (owner, info.key) not in UNBOUNDED
    ]
    assert missing == [], (
        "declare a maximum where the field is declared: doc(..., maximum=<a constant of "
        "drasim.limits>) (and max_items=... for lists that multiply work)"
    )


def test_the_json_schema_and_the_reference_carry_every_bound() -> None:
    schema = scenario_json_schema()["$defs"]
    reference = render_reference()
    for owner, info in _fields():
        if info.maximum is None and info.max_items is None:
            continue
        prop = (schema.get(owner) or scenario_json_schema())["properties"][info.key]
        if info.maximum is not None:
            assert prop["maximum"] == info.maximum, f"{owner}.{info.key}"
        if info.max_items is not None:
            assert prop["maxItems"] == info.max_items, f"{owner}.{info.key}"
    assert "*Range: 0 to 4096. At most 4096 items.*" in reference  # FakeDriverSpec.devices
    assert "Nominal seconds to advance. *Range: 0 to 86400.*" in reference
    assert "The actions to run at the same time. *At most 64 items.*" in reference


def _driver(devices: str) -> str:
    return f"""\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {{name: t, description: d}}
        spec:
          driver:
            fake: {{name: gpu.example.com, devices: {devices}}}
          steps: [{{reconcile: {{}}}}]
        """


def test_a_million_devices_is_refused_with_the_line_and_the_limit(
    problems: Callable[[str], list[str]],
) -> None:
    assert problems(_driver("1000000")) == [
        "s.yaml:6:44: spec.driver.fake.devices: must be at most 4096, got 1000000"
    ]


def test_the_largest_device_count_loads(load_ok: Callable[[str], Any]) -> None:
    (scenario,) = load_ok(_driver(str(limits.MAX_NODE_DEVICES)))
    assert scenario.spec.driver.fake.devices == 4096


def test_a_device_list_is_bounded_too(problems: Callable[[str], list[str]]) -> None:
    names = "[" + ", ".join(f"d{i}" for i in range(4097)) + "]"
    assert problems(_driver(names)) == [
        "s.yaml:6:44: spec.driver.fake.devices: at most 4096 items are allowed, got 4097"
    ]


def test_the_devices_of_all_fake_drivers_are_bounded_together(problems: Callable[[str], list[str]]) -> None:
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: t, description: d}
        spec:
          drivers:
            - fake: {name: gpu.example.com, devices: 4000}
            - fake: {name: nic.example.com, devices: 97}
          steps: [{reconcile: {}}]
        """
    assert problems(text) == [
        "s.yaml:7:46: spec.drivers[1].fake.devices: the fake drivers publish 4097 devices together; "
        "a node may have at most 4096"
    ]


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (
            "- advanceClock: 86401\n",
            "s.yaml:12:21: spec.steps[0].advanceClock.seconds: must be at most 86400, got 86401",
        ),
        (
            "- advanceClock: .nan\n",
            "s.yaml:12:21: spec.steps[0].advanceClock.seconds: expected a finite number, got nan",
        ),
        (
            "- advanceClock: .inf\n",
            "s.yaml:12:21: spec.steps[0].advanceClock.seconds: expected a finite number, got inf",
        ),
        (
            "- advanceClock: " + "9" * 400 + "\n",
            "s.yaml:12:21: spec.steps[0].advanceClock.seconds: expected a finite number, "
            "got an integer of 400 digits",
        ),
        (
            "- restartKubelet: {downtime: 1.0e+9}\n",
            "s.yaml:12:34: spec.steps[0].restartKubelet.downtime: must be at most 86400, got 1000000000",
        ),
        (
            "- fault: {plugin: {rpc: GetInfo, code: UNAVAILABLE, times: 1000001}}\n",
            "s.yaml:12:64: spec.steps[0].fault.plugin.times: must be at most 1000000, got 1000001",
        ),
        (
            "- fault: {apiServer: {code: 600}}\n",
            "s.yaml:12:33: spec.steps[0].fault.apiServer.code: must be at most 599, got 600",
        ),
        (
            "- expectCalls: {NodePrepareResources: " + "1" * 40 + "}\n",
            "s.yaml:12:43: spec.steps[0].expectCalls.NodePrepareResources: must be at most 1000000, "
            "got an integer of 40 digits",
        ),
    ],
)
def test_numbers_above_their_maximum_or_not_finite(
    steps_problems: Callable[[str], list[str]], step: str, expected: str
) -> None:
    assert steps_problems(step) == [expected]


def test_parallel_steps_are_bounded_and_not_nested(steps_problems: Callable[[str], list[str]]) -> None:
    many = "- parallel: [" + ", ".join(["{reconcile: {}}"] * 65) + "]\n"
    assert steps_problems(many) == [
        "s.yaml:12:17: spec.steps[0].parallel.steps: at most 64 items are allowed, got 65"
    ]
    assert steps_problems("- parallel: [{parallel: [{reconcile: {}}]}]\n") == [
        "s.yaml:12:19: spec.steps[0].parallel.steps[0]: a parallel step cannot contain another: "
        "list its actions directly"
    ]


def test_claim_shorthand_follows_upstream_claim_limits(problems: Callable[[str], list[str]]) -> None:
    requests = "[" + ", ".join(f"r{i}" for i in range(33)) + "]"
    text = f"""\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {{name: t, description: d}}
        spec:
          driver: {{fake: {{name: gpu.example.com}}}}
          claims:
            - {{name: a, count: 33}}
            - {{name: b, requests: {requests}}}
          steps: [{{reconcile: {{}}}}]
        """
    assert problems(text) == [
        "s.yaml:7:24: spec.claims[0].count: must be at most 32, got 33",
        "s.yaml:8:27: spec.claims[1].requests: at most 32 items are allowed, got 33",
    ]


def test_timer_periods_must_be_at_least_a_second(problems: Callable[[str], list[str]]) -> None:
    text = """\
        apiVersion: drasim.dev/v1alpha1
        kind: Scenario
        metadata: {name: t, description: d}
        spec:
          driver: {fake: {name: gpu.example.com}}
          kubelet: {timeScale: 11, timers: {reconcilePeriod: 0, backoffPeriod: 0.5}}
          steps: [{reconcile: {}}]
        """
    assert problems(text) == [
        "s.yaml:6:24: spec.kubelet.timeScale: must be at most 10, got 11",
        "s.yaml:6:54: spec.kubelet.timers.reconcilePeriod: must be at least 1, got 0",
        "s.yaml:6:72: spec.kubelet.timers.backoffPeriod: must be at least 1, got 0.5",
    ]


def _nested_parallel_bomb(depth: int, width: int) -> str:
    lines = ["- parallel: &l0 [" + ", ".join(["{reconcile: {}}"] * width) + "]"]
    for level in range(1, depth):
        items = ", ".join([f"{{parallel: *l{level - 1}}}"] * width)
        lines.append(f"- parallel: &l{level} [{items}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_of_typed_steps_stops_at_the_size_budget(
    steps_problems: Callable[[str], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 10**8 nested steps once expanded: the decoder must stop at its budget (made small here
    # to keep the test fast), not walk them all.
    monkeypatch.setattr(decoder, "MAX_NODES", 5000)
    started = time.monotonic()
    found = steps_problems(_nested_parallel_bomb(depth=8, width=10))
    assert time.monotonic() - started < 5
    too_big = [p for p in found if "the file is too large" in p]
    assert len(too_big) == 1
    assert too_big[0].startswith("s.yaml:12:")
    assert too_big[0].endswith("more than 5000 values once YAML aliases are expanded")


def test_the_size_budget_is_far_above_the_library() -> None:
    assert decoder.MAX_NODES == limits.MAX_DECODED_VALUES == 100_000


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("{}", "the fault does nothing: give code, delay or dropWatches"),
        ("{verb: get, dropWatches: true}", "fault dropWatch: only applies to verb 'watch', not 'get'"),
        ("{code: 418}", "fault code: 418 is not supported; valid codes: [400, 401, 403, 404,"),
        ("{resource: widgets, code: 500}", "fault resource: 'widgets' is not served; valid resources: pods,"),
    ],
)
def test_api_server_faults_the_run_would_refuse_are_refused_when_loading(
    steps_problems: Callable[[str], list[str]], rule: str, expected: str
) -> None:
    (problem,) = steps_problems(f"- fault: {{apiServer: {rule}}}\n")
    assert problem.startswith(f"s.yaml:12:26: spec.steps[0].fault.apiServer: {expected}")
