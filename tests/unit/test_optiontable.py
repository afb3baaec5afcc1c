"""The run option table: every RunOptions field is one row, and both front ends read it alike."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from drasim.errors import ConfigError
from drasim.optiontable import OPTIONS, add_arguments, build_run_options
from drasim.runner.options import RunOptions

INTERNAL = {"kubelet_version", "record_checkpoint_bytes"}
"""Set per run by the version matrix, not by a user."""


def test_every_run_option_is_one_row() -> None:
    fields = [f.name for f in dataclasses.fields(RunOptions)]
    rows = [option.field for option in OPTIONS]
    assert sorted(rows) == sorted(set(fields) - INTERNAL)


def test_the_cli_flags_come_from_the_table() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    flags = {flag for action in parser._actions for flag in action.option_strings} - {"-h", "--help"}
    assert flags == {option.flag for option in OPTIONS if option.cli}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("time_scale", "0", " must be a positive number, got '0'"),
        ("time_scale", "11", " must be at most 10, got '11'"),
        ("scenario_timeout", "soon", ": expected a number of seconds, got 'soon'"),
        ("kubelet_versions", "1.2", ": "),
        ("backend", "etcd", ": 'etcd' is not a valid backend"),
        (
            "kubelet",
            "go",
            ": unknown kubelet implementation 'go'; known: emulated, upstream (upstream@<release> too)",
        ),
    ],
)
def test_both_front_ends_give_one_message_naming_their_flag(field: str, value: str, message: str) -> None:
    option = next(o for o in OPTIONS if o.field == field)
    for flag in (option.flag, option.pytest_flag):
        with pytest.raises(ConfigError) as raised:
            build_run_options({field: value}, flag=lambda o, flag=flag: flag if o is option else o.flag)
        assert str(raised.value).startswith(flag + message)


def test_a_pinned_upstream_release_runs_as_its_kubelet_version() -> None:
    """``--kubelet upstream@1.35.4`` with another ``--kubelet-version``: one error naming both
    flags (before anything is built)."""
    for name in ("flag", "pytest_flag"):
        with pytest.raises(ConfigError) as raised:
            build_run_options(
                {"kubelet": "upstream@1.35.4", "kubelet_versions": "1.36"},
                flag=lambda o, name=name: getattr(o, name),
            )
        kubelet = "--kubelet" if name == "flag" else "--drasim-kubelet"
        version = "--kubelet-version" if name == "flag" else "--drasim-kubelet-version"
        assert str(raised.value) == (
            f"{kubelet} upstream@1.35.4 runs kubelet 1.35; drop {version} or make it match"
        )


def test_the_release_is_in_the_run_plan() -> None:
    """The plan holds the upstream release: a pinned one stays after a version change, a plain
    ``upstream`` follows the version; the emulated kubelet has none."""
    from drasim.runner.options import RunOptions
    from drasim.runner.plan import plan_run
    from drasim.scenario import builtin_scenario_dir, load_paths

    scenario = load_paths([builtin_scenario_dir() / "conformance" / "registration.yaml"])[0]
    pinned = plan_run(scenario, RunOptions(kubelet="upstream@1.35.4"))
    assert (pinned.kubelet, pinned.kubelet_version, pinned.kubelet_release) == ("upstream", "1.35", "1.35.4")
    assert pinned.release_at("1.37") == "1.35.4"
    plain = plan_run(scenario, RunOptions(kubelet="upstream", kubelet_version="1.36"))
    assert (plain.kubelet_release, plain.release_at("1.37")) == ("1.36.3", "1.37.2")
    assert plan_run(scenario, RunOptions()).kubelet_release is None
    old = plan_run(scenario, RunOptions(kubelet="upstream", kubelet_version="1.33"))
    assert old.kubelet_release is None
    assert old.version_skip.startswith("not comparable: --kubelet upstream: kubelet 1.33 cannot run upstream")


def test_values_become_run_options() -> None:
    options = build_run_options(
        {
            "time_scale": "0.5",
            "scenario_timeout": "0",
            "driver_cmd": "drv --node {node}",  # capabilities describe a driver command
            "capabilities": ["health,pool", "x"],
            "fsync": True,
        },
        flag=lambda o: o.flag,
    )
    assert options == RunOptions(
        time_scale=0.5,
        scenario_timeout=None,
        driver_cmd="drv --node {node}",
        capabilities=("health", "pool", "x"),
        fsync=True,
    )


def test_an_off_switch_turns_off_a_field_that_is_on_by_default() -> None:
    """``--no-proxy`` (kind ``off``): absent, ``proxy`` stays True; given, it is False."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert build_run_options(vars(parser.parse_args([])), flag=lambda o: o.flag).proxy is True
    given = vars(parser.parse_args(["--driver-cmd", "drv", "--no-proxy"]))
    assert given["proxy"] is False
    assert build_run_options(given, flag=lambda o: o.flag) == RunOptions(driver_cmd="drv", proxy=False)


def test_the_plan_proxies_a_driver_command_unless_told_not_to() -> None:
    from drasim.pytest_plugin.harness import build_scenario
    from drasim.runner.plan import plan_run

    scenario = build_scenario()
    proxied = plan_run(scenario, RunOptions(driver_cmd="drv", capabilities=("health",)))
    assert proxied.proxied
    assert proxied.driver_capabilities == ("health", "proxy")
    direct = plan_run(scenario, RunOptions(driver_cmd="drv", capabilities=("health", "proxy"), proxy=False))
    assert not direct.proxied
    assert direct.driver_capabilities == ("health",)  # declaring proxy without the proxy grants nothing
    assert not plan_run(scenario, RunOptions()).proxied


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"driver_name": "x.example.com"}, "--driver-name needs --driver-cmd"),
        (
            {"capabilities": ["health"]},
            "--capability says what the driver under test can do: it needs --driver-cmd",
        ),
        (
            {"driver_cmd": "drv", "bugs": ["non-idempotent"]},
            "--inject-bug switches a bug on in drasim's fake plugin, and with --driver-cmd no fake plugin "
            "runs: the bug would be ignored",
        ),
        (
            {"driver_cmd": "drv", "capabilities": ["Has Space"]},
            "--capability: invalid capability name 'Has Space'",
        ),
    ],
)
def test_driver_options_that_contradict_each_other(values: dict[str, object], message: str) -> None:
    """The one check of the driver options (drasim run and the pytest plugin give its messages)."""
    with pytest.raises(ConfigError) as caught:
        build_run_options(values, flag=lambda o: o.flag)
    assert str(caught.value).startswith(message)
