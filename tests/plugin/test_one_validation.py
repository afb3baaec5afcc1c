"""One validation for both front ends: ``drasim run`` and the pytest plugin refuse the same input
at start-up with the same message (each naming its own flags): exit 2 for the CLI, pytest's usage
error (exit 4) for the plugin, never a traceback. The rules live in the option table
(drasim/optiontable.py)."""

from __future__ import annotations

import pytest

from drasim.cli import main
from drasim.scenario import builtin_scenario_dir

CASES = [
    # (arguments in drasim run's spelling, the message in drasim run's spelling)
    (["--driver-name", "x.example.com"], "--driver-name needs --driver-cmd"),
    (
        ["--capability", "health"],
        "--capability says what the driver under test can do: it needs --driver-cmd",
    ),
    (
        ["--driver-cmd", "drv", "--capability", "Has_Space"],
        "--capability: invalid capability name 'Has_Space' (lowercase letters, digits, '-' and '.'); "
        "known capabilities: health, proxy, fake-plugin",
    ),
    (
        ["--driver-cmd", "drv {nodename}"],
        "--driver-cmd: driver command: unknown placeholder {nodename} in '{nodename}'. Valid placeholders: "
        "{node}, {kubeconfig}, {registrar_dir}, {plugins_dir}, {plugin_dir}, {cdi_dir}, {state_dir}, "
        "{driver_name}",
    ),
    (["--driver-cmd", "drv 'unclosed"], '--driver-cmd: cannot split "drv \'unclosed"'),
    (["--kubeconfig", "k.yaml"], "--kubeconfig and --context need --backend kubeconfig"),
    (["--time-scale", "0"], "--time-scale must be a positive number, got '0'"),
    (["--scenario-timeout", "soon"], "--scenario-timeout: expected a number of seconds, got 'soon'"),
    (["--backend", "etcd"], "--backend: 'etcd' is not a valid backend"),
]
IDS = [" ".join(args) for args, _ in CASES]


def pytest_spelling(text: str) -> str:
    """``--driver-cmd`` -> ``--drasim-driver-cmd`` (flags only; values have no ``--``)."""
    return text.replace("--", "--drasim-")


@pytest.mark.parametrize(("args", "message"), CASES, ids=IDS)
def test_drasim_run_refuses(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = str(builtin_scenario_dir() / "conformance" / "registration.yaml")
    assert main(["run", scenario, *args]) == 2
    err = capsys.readouterr().err
    assert f"drasim run: error: {message}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("args", "message"), CASES, ids=IDS)
def test_the_pytest_plugin_refuses(args: list[str], message: str, pytester: pytest.Pytester) -> None:
    flags = [pytest_spelling(a) if a.startswith("--") else a for a in args]
    result = pytester.runpytest(*flags)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"ERROR: {pytest_spelling(message)}" in err
    assert "Traceback" not in err


def test_capabilities_from_the_ini_file_need_a_driver_command_too(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ndrasim_capabilities =\n    health\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--drasim-capability says what the driver under test can do: it needs --drasim-driver-cmd" in (
        result.stderr.str()
    )
    pytester.makeini("[pytest]\ndrasim_capabilities =\n    health\ndrasim_driver_cmd = drv --node {node}\n")
    assert pytester.runpytest().ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_ini_and_command_line_capabilities_add_up(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ndrasim_capabilities =\n    health\ndrasim_driver_cmd = drv --node {node}\n")
    pytester.makeconftest(
        """
        def pytest_report_header(config):
            from drasim.pytest_plugin.options import settings_of

            return "declared: " + ",".join(sorted(settings_of(config).declared_capabilities))
        """
    )
    result = pytester.runpytest("--drasim-capability", "gpu-sharing,admin-access")
    result.stdout.fnmatch_lines(["declared: admin-access,gpu-sharing,health"])
