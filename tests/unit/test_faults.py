"""The one fault vocabulary (drasim.faults): scenario validation, the API server's injector and
the fake plugin take the same typed rules and check them with the same functions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drasim.apiserver.faults import FaultInjector, decode_fault
from drasim.apiserver.kinds import ALL_VERBS, RESOURCE_TYPES
from drasim.apiserver.status import REASONS
from drasim.errors import ConfigError, ScenarioError
from drasim.faults import (
    API_FAULT_CODES,
    API_RESOURCE_KINDS,
    API_VERBS,
    UNKNOWN_UID,
    ApiFault,
    PluginFault,
    api_fault_problem,
    describe,
    scaled,
)
from drasim.runner.drivers import fake_plugin_rule
from drasim.scenario.loader import load_text
from fake_plugins import Behaviour, FakeDriverConfig
from fake_plugins import decode_fault as decode_plugin_fault
from fake_plugins.cli import build_parser, config_from_args

# ----------------------------------------------------------------------------- one vocabulary


def test_the_vocabulary_is_what_the_api_server_serves() -> None:
    assert API_VERBS == ALL_VERBS
    assert {t.resource: t.kind for t in RESOURCE_TYPES} == API_RESOURCE_KINDS
    assert [t.resource for t in RESOURCE_TYPES] == list(API_RESOURCE_KINDS)
    assert all(t.singular == t.kind.lower() for t in RESOURCE_TYPES)
    assert tuple(sorted(c for c in REASONS if c >= 400)) == API_FAULT_CODES


API_RULES = [
    ApiFault(code=503),
    ApiFault(verb="watch", drop_watches=True),
    ApiFault(resource="ResourceClaim", code=500, client="kubelet", times=2, after=1),
    ApiFault(delay=0.5),
    ApiFault(resource="widgets", code=500),
    ApiFault(code=418),
    ApiFault(verb="get", drop_watches=True),
    ApiFault(verb="fetch", code=500),  # type: ignore[arg-type]
    ApiFault(client="someone", code=500),  # type: ignore[arg-type]
    ApiFault(),
]


@pytest.mark.parametrize("rule", API_RULES, ids=describe)
def test_the_injector_accepts_exactly_what_validation_accepts(rule: ApiFault) -> None:
    problem = api_fault_problem(rule)
    if problem is None:
        installed = FaultInjector().add(rule)
        assert installed.resource in ("", "resourceclaims")
    else:
        with pytest.raises(ConfigError) as err:
            FaultInjector().add(rule)
        assert str(err.value) == problem


SCENARIO = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {{name: s, description: one fault step.}}
spec:
  driver: {{fake: {{name: gpu.example.com}}}}
  steps:
    - fault: {{apiServer: {rule}}}
"""


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("{resource: widgets, code: 500}", api_fault_problem(ApiFault(resource="widgets", code=500))),
        ("{code: 418}", api_fault_problem(ApiFault(code=418))),
        ("{verb: get, dropWatches: true}", api_fault_problem(ApiFault(verb="get", drop_watches=True))),
    ],
)
def test_scenario_validation_reports_the_injectors_reason_at_file_and_line(rule: str, problem: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load_text(SCENARIO.format(rule=rule), "s.yaml")
    assert f"s.yaml:7:26: spec.steps[0].fault.apiServer: {problem}" in str(err.value)


def test_a_scenario_rule_reaches_the_injector_as_the_same_value() -> None:
    (scenario,) = load_text(SCENARIO.format(rule="{resource: ResourceClaim, verb: get, code: 503, delay: 2}"))
    rule = scenario.spec.steps[0].args.api_server
    installed = FaultInjector().add(scaled(rule, 0.5))
    assert installed == ApiFault(resource="resourceclaims", verb="get", code=503, delay=1.0)


# ----------------------------------------------------------------------------- API server wire format


def test_admin_json_decodes_straight_to_the_typed_rule() -> None:
    wire = {"resource": "resourceslices", "verb": "watch", "dropWatch": True, "afterEvents": 2}
    assert decode_fault(wire) == ApiFault(
        resource="resourceslices", verb="watch", drop_watches=True, after_events=2, times=1
    )
    assert decode_fault({"verb": "get", "latency": 0.2, "always": True}) == ApiFault(verb="get", delay=0.2)
    assert decode_fault({"code": 500, "times": None}).times == 0  # null: always
    assert decode_fault({"code": 500, "times": 3, "once": True}).times == 1


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({"code": 500, "latncy": 1}, "fault: unknown field(s) ['latncy']; valid fields: resource, verb,"),
        ({"code": 500, "times": 0}, "fault times: must be >= 1, got 0"),
        ({"code": 500, "name": 3}, "fault name: expected a string, got 3"),
        ({"latency": "1s"}, "fault latency: expected a number of seconds, got '1s'"),
        ({"verb": "get"}, "fault: needs at least one of code, latency or dropWatch"),
    ],
)
def test_bad_admin_json_is_a_clear_error(wire: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        decode_fault(wire)
    assert str(err.value).startswith(message)


# ----------------------------------------------------------------------------- fake plugin


def test_a_scenario_rule_reaches_the_fake_plugin_as_the_same_value() -> None:
    rule = PluginFault(
        rpc="NodePrepareResources", claim="gpu", missing_claim=True, delay=30.0, times=2, after=1
    )
    assert fake_plugin_rule(rule, 0.01) == PluginFault(
        rpc="NodePrepareResources", claim="default/gpu", missing_claim=True, delay=0.3, times=2, after=1
    )
    unchanged = PluginFault(rpc="GetInfo", code="UNAVAILABLE")
    assert fake_plugin_rule(unchanged, 0.01) is unchanged


def test_behaviour_file_keys_decode_straight_to_the_typed_rule() -> None:
    behaviour = Behaviour.from_dict(
        {
            "faults": [
                {"rpc": "NodePrepareResources", "claim": "default/a", "omit": True, "skip": 1, "once": True},
                {"extraUid": "stranger", "code": "Unavailable", "times": None},
                {"rpc": "NodeUnprepareResources", "nil_entry": True, "crash": "after", "delay": 1},
            ]
        }
    )
    assert behaviour.faults == [
        PluginFault(rpc="NodePrepareResources", claim="default/a", missing_claim=True, after=1, times=1),
        PluginFault(rpc="*", unknown_uid=True, extra_uid="stranger", code="UNAVAILABLE"),
        PluginFault(rpc="NodeUnprepareResources", nil_entry=True, crash="after", delay=1.0),
    ]
    assert behaviour.faults[1].added_uid == "stranger"
    assert PluginFault(rpc="NodePrepareResources", unknown_uid=True).added_uid == UNKNOWN_UID
    assert PluginFault(rpc="NodePrepareResources").added_uid == ""


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ({"skpi": 1}, "behaviour.faults[0].skpi: unknown field. Did you mean 'skip'?"),
        (
            {"times": 0},
            "behaviour.faults[0].times: must be >= 1 (null or left out: every matching call), got 0",
        ),
        ({"skip": -1}, "behaviour.faults[0].skip: must be >= 0, got -1"),
        ({"delay": -1}, "behaviour.faults[0].delay: must be >= 0, got -1.0"),
        ({"rpc": "NodePrepare"}, "behaviour.faults[0].rpc: unknown RPC 'NodePrepare'. Did you mean"),
        ({"omit": "yes"}, "behaviour.faults[0].omit: expected true or false, got str 'yes'"),
    ],
)
def test_bad_behaviour_fault_names_the_key_as_written(fault: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        Behaviour.from_dict({"faults": [fault]})
    assert str(err.value).startswith(message)


def test_typed_rules_given_in_python_are_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"faults\[0\]\.code: 'Unavailable' is not a gRPC status code"):
        decode_plugin_fault(PluginFault(rpc="GetInfo", code="Unavailable"), "faults[0]")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"behaviour\.faults\[0\]\.skip: must be >= 0"):
        Behaviour(faults=[PluginFault(rpc="GetInfo", code="INTERNAL", after=-1)]).validate()


def test_the_process_config_file_keeps_its_json_keys(tmp_path: Path) -> None:
    config = tmp_path / "driver.json"
    wire = {"rpc": "NodePrepareResources", "error": "busy", "omit": False, "skip": 2, "times": 3}
    config.write_text(json.dumps({"driverName": "gpu.example.com", "behaviour": {"faults": [wire]}}))
    args = build_parser().parse_args(["--config", str(config)])
    decoded = config_from_args(args)
    assert decoded.behaviour.faults == [
        PluginFault(rpc="NodePrepareResources", error="busy", after=2, times=3)
    ]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"behaviour": {"faults": [{"rpc": "NodePrepareResources", "once": "x"}]}}))
    with pytest.raises(ConfigError) as err:
        config_from_args(build_parser().parse_args(["--config", str(bad)]))
    assert str(err.value).startswith(f"{bad}.behaviour.faults[0].once: expected true or false")
    assert (
        FakeDriverConfig.from_dict({"behaviour": {"faults": [wire]}}).behaviour.faults
        == decoded.behaviour.faults
    )
