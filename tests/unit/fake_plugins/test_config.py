"""Config and behaviour decoding: keys, types, names, and the messages on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from drasim.errors import ConfigError, DrasimError
from drasim.values import ClaimRef
from fake_plugins import BUGS, Behaviour, FakeDriverConfig, HealthSpec, PluginFault, load_behaviour_file
from fake_plugins.behaviour import FaultPlan
from fake_plugins.cli import build_parser, config_from_args


def test_config_defaults_follow_the_helper_layout():
    config = FakeDriverConfig()
    assert str(config.plugin_path) == "/var/lib/kubelet/plugins/gpu.example.com/dra.sock"
    assert str(config.registration_path) == "/var/lib/kubelet/plugins_registry/gpu.example.com-reg.sock"
    assert str(config.state_directory) == "/var/lib/kubelet/plugins/gpu.example.com"
    assert config.supported_versions == ["v1.DRAPlugin", "v1beta1.DRAPlugin"]
    assert config.cdi_kind == "gpu.example.com/gpu"
    assert config.device_names() == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    assert config.serialize


def test_config_from_camel_and_snake_keys():
    config = FakeDriverConfig.from_dict(
        {
            "driverName": "net.example.org",
            "plugin_dir": "/p",
            "devices": 2,
            "services": ["v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth", "1.0.0"],
            "behaviour": {"bugs": ["no-cdi-spec"], "faults": [{"rpc": "GetInfo", "code": "unavailable"}]},
        }
    )
    assert config.device_names() == ["net-0", "net-1"]
    assert config.served_dra == ["v1beta1.DRAPlugin"]
    assert config.served_health == ["v1alpha1.DRAResourceHealth"]
    assert config.supported_versions == ["v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth", "1.0.0"]
    assert config.behaviour.faults[0].code == "UNAVAILABLE"
    assert config.behaviour.has_bug("no-cdi-spec")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"driverNme": "x"}, "driver.driverNme: unknown field. Did you mean 'driverName'?"),
        ({"devices": "four"}, "driver.devices: expected an integer, got str 'four'"),
        ({"services": "v1.DRAPlugin"}, "driver.services: expected a list, got str"),
        ({"behaviour": {"faults": [{"rpc": "NodePrepare"}]}}, "driver.behaviour.faults[0].rpc: unknown RPC"),
        ({"behaviour": {"faults": [{"code": "UNAVAILBLE"}]}}, "Did you mean 'UNAVAILABLE'?"),
        ({"behaviour": {"faults": [{"crash": True}]}}, "driver.behaviour.faults[0].crash: expected a string"),
        ({"behaviour": {"faults": [{"crash": "during"}]}}, "expected 'before' or 'after'"),
        ({"behaviour": {"faults": [{"delay": "1s"}]}}, "faults[0].delay: expected a number of seconds"),
        (
            {"behaviour": {"bugs": ["drop-claim"]}},
            "bugs[0]: unknown bug 'drop-claim'. Did you mean 'drops-claim'?",
        ),
        (
            {"behaviour": {"health": [{"device": "gpu-0", "health": "sick"}]}},
            "health[0].health: expected one of",
        ),
        (
            {"behaviour": {"health": [{"device": "gpu-0", "timeoutSeconds": "10s"}]}},
            "driver.behaviour.health[0].timeoutSeconds: expected an integer, got str '10s'",
        ),
        (
            {"behaviour": {"health": [{"device": "gpu-0", "timeoutSeconds": -1}]}},
            "driver.behaviour.health[0].timeoutSeconds: expected 0 to 9223372036854775807 "
            "(0 = the kubelet's default), got -1",
        ),
        (
            {"behaviour": {"health": [{"device": "gpu-0", "timeoutSeconds": 2**63}]}},
            "driver.behaviour.health[0].timeoutSeconds: expected 0 to 9223372036854775807",
        ),
        ({"driverName": ""}, "driver.driverName: required"),
    ],
)
def test_bad_config_names_the_field(data, message):
    with pytest.raises(ConfigError) as err:
        FakeDriverConfig.from_dict(data)
    assert message in str(err.value)


def test_fault_plan_times_skip_and_claim_selection():
    a = ClaimRef("default", "uid-a", "a")
    b = ClaimRef("default", "uid-b", "b")
    faults = [
        PluginFault(rpc="NodePrepareResources", code="UNAVAILABLE", times=2),
        PluginFault(rpc="*", claim="default/b", error="x", after=1, times=1),
    ]
    Behaviour(faults=faults).validate()
    plan = FaultPlan(faults)
    picks = [
        plan.select("NodePrepareResources", [a]),
        plan.select("NodePrepareResources", [b]),
        plan.select("NodeUnprepareResources", [b]),
        plan.select("NodePrepareResources", [a, b]),
    ]
    # First match only: rule 1 is not consulted while rule 0 takes the call, so its skip
    # counts only the third call, and it fires on the fourth.
    assert [[faults.index(f) for f in pick] for pick in picks] == [[0], [0], [], [1]]
    assert plan.fired() == [2, 1]
    assert plan.select("GetInfo") == []


def test_fault_plan_first_matching_rule_wins_and_extend_keeps_counters():
    a = ClaimRef("default", "uid-a", "a")
    first = PluginFault(rpc="NodePrepareResources", code="ABORTED", times=1)
    second = PluginFault(rpc="NodePrepareResources", code="UNAVAILABLE")
    plan = FaultPlan([first])
    assert plan.select("NodePrepareResources", [a]) == [first]
    plan.extend([second])
    assert plan.select("NodePrepareResources", [a]) == [second]  # first stays used up
    assert plan.fired() == [1, 1]
    plan.extend([PluginFault(rpc="NodePrepareResources", code="INTERNAL")])
    assert plan.select("NodePrepareResources", [a]) == [second]  # second still matches first
    assert plan.fired() == [1, 2, 0]


def test_every_bug_is_described():
    assert all(BUGS.values())
    assert len(BUGS) == 7


def test_behaviour_file_yaml_and_json(tmp_path: Path):
    yaml_file = tmp_path / "b.yaml"
    yaml_file.write_text(
        "faults:\n  - rpc: NodePrepareResources\n    extraUid: stranger\nbugs: [drops-claim]\n"
    )
    assert load_behaviour_file(yaml_file).faults[0].extra_uid == "stranger"
    json_file = tmp_path / "b.json"
    json_file.write_text('{"bugs": ["double-allocates"]}')
    assert load_behaviour_file(json_file).bugs == ["double-allocates"]


def test_behaviour_file_carries_a_health_timeout(tmp_path: Path):
    path = tmp_path / "b.yaml"
    path.write_text("health:\n  - {device: gpu-0, health: unhealthy, message: ecc, timeoutSeconds: 10}\n")
    (spec,) = load_behaviour_file(path).health
    assert (spec.device, spec.health, spec.message, spec.timeout_seconds) == ("gpu-0", "UNHEALTHY", "ecc", 10)


def test_health_timeout_is_checked_when_set_from_python():
    """FakeDriver.set_health validates a HealthSpec built from Python values, not decoded ones."""
    with pytest.raises(
        ConfigError, match=r"health\[0\]\.timeoutSeconds: expected an integer, got float 1\.5"
    ):
        Behaviour(health=[HealthSpec(device="gpu-0", timeout_seconds=1.5)]).validate("health")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"health\[0\]\.timeoutSeconds: expected 0 to"):
        Behaviour(health=[HealthSpec(device="gpu-0", timeout_seconds=-5)]).validate("health")


def test_behaviour_file_errors_name_the_file_and_line(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("faults:\n  - rpc: [unclosed\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+:\d+: not valid YAML"):
        load_behaviour_file(bad)
    with pytest.raises(ConfigError, match="cannot read behaviour file"):
        load_behaviour_file(tmp_path / "missing.yaml")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("faults: 3\n")
    with pytest.raises(ConfigError, match=r"wrong\.yaml\.faults: expected a list"):
        load_behaviour_file(wrong)


def test_cli_flags_build_the_config(tmp_path: Path):
    args = build_parser().parse_args(
        [
            "--driver-name",
            "gpu.example.com",
            "--registry-dir",
            str(tmp_path / "reg"),
            "--plugin-dir",
            str(tmp_path / "plug"),
            "--cdi-dir",
            str(tmp_path / "cdi"),
            "--node-name",
            "n7",
            "--devices",
            "2",
            "--services",
            "v1.DRAPlugin",
            "--health",
            "--no-serialize",
            "--advertise",
            "1.0.0",
        ]
    )
    config = config_from_args(args)
    assert config.node_name == "n7"
    assert config.devices == 2
    assert config.services == ["v1.DRAPlugin", "v1alpha1.DRAResourceHealth"]
    assert config.supported_versions == ["1.0.0"]
    assert not config.serialize
    assert config.registration_path == tmp_path / "reg" / "gpu.example.com-reg.sock"


def test_devices_may_be_named():
    config = FakeDriverConfig.from_dict({"driverName": "gpu.example.com", "devices": ["gpu-a", "big-1"]})
    assert config.device_names() == ["gpu-a", "big-1"]
    assert FakeDriverConfig.from_dict({"devices": 2}).device_names() == ["gpu-0", "gpu-1"]
    with pytest.raises(ConfigError, match=r"driver\.devices\[1\]: 'GPU_B' is not a valid device name"):
        FakeDriverConfig.from_dict({"devices": ["gpu-a", "GPU_B"]})
    with pytest.raises(ConfigError, match=r"driver\.devices\[1\]: device name 'gpu-a' is given twice"):
        FakeDriverConfig.from_dict({"devices": ["gpu-a", "gpu-a"]})


def test_cli_devices_take_a_count_or_names():
    assert config_from_args(build_parser().parse_args(["--devices", "3"])).devices == 3
    names = config_from_args(build_parser().parse_args(["--devices", "gpu-a, gpu-b"]))
    assert names.device_names() == ["gpu-a", "gpu-b"]


def test_bug_flag_adds_to_the_behaviour_file(tmp_path: Path):
    path = tmp_path / "b.yaml"
    path.write_text("bugs: [drops-claim]\n")
    args = build_parser().parse_args(
        ["--behaviour", str(path), "--bug", "non-idempotent", "--bug", "drops-claim"]
    )
    assert config_from_args(args).behaviour.bugs == ["drops-claim", "non-idempotent"]
    assert config_from_args(build_parser().parse_args(["--bug", "forgets-state"])).behaviour.bugs == [
        "forgets-state"
    ]


def test_bug_flag_with_an_unknown_name():
    with pytest.raises(DrasimError, match=r"--bug: unknown bug 'nope'; valid bugs: non-idempotent, "):
        config_from_args(build_parser().parse_args(["--bug", "nope"]))


def test_run_help_lists_the_bug_names(capsys: pytest.CaptureFixture[str]):
    from drasim.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(bug in help_text for bug in BUGS)


def test_the_fake_plugin_process_help_lists_the_bug_names() -> None:
    """``python -m fake_plugins --help``, run as a program."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "fake_plugins", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    help_text = " ".join(result.stdout.split())
    assert "--bug NAME" in help_text
    assert all(bug in help_text for bug in BUGS)
