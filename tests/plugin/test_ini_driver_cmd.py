"""A relative program in ``drasim_driver_cmd`` is found from the ini file's directory, wherever
pytest is started (as the docs say of every relative path in the ini file)."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable

import pytest

ARGS = (
    " --driver-name {driver_name} --node-name {node} --kubeconfig {kubeconfig} --publish-slices"
    " --registry-dir {registrar_dir} --plugin-dir {plugin_dir} --cdi-dir {cdi_dir} --state-dir {state_dir}"
)


def test_relative_driver_program_in_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, scenario_text: Callable[..., str]
) -> None:
    repo = pytester.mkdir("driver-repo")
    (repo / "bin").mkdir()
    driver = repo / "bin" / "driver"
    driver.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m fake_plugins "$@"\n')
    driver.chmod(0o755)
    (repo / "pytest.ini").write_text(f"[pytest]\ndrasim_driver_cmd = ./bin/driver{ARGS}\n")
    (repo / "drasim_round_trip.yaml").write_text(scenario_text("round-trip"))
    elsewhere = pytester.mkdir("elsewhere")
    monkeypatch.chdir(elsewhere)  # not the ini file's directory
    result = pytester.runpytest("-c", str(repo / "pytest.ini"), "--rootdir", str(repo), str(repo), "-rs")
    result.assert_outcomes(passed=1)
    assert os.getcwd() == str(elsewhere)
