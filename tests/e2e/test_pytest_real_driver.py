"""The pytest plugin with ``--drasim-driver-cmd``: the suite and the fixtures against a driver process."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(autouse=True)
def _lean_inner_runs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest -p no:benchmark -p no:cacheprovider")


def test_conformance_suite_against_a_driver_process(pytester: pytest.Pytester, driver_cmd: str) -> None:
    result = pytester.runpytest(
        "-rs",
        "--drasim-suite",
        "conformance",
        "--drasim-driver-cmd",
        driver_cmd,
        "--drasim-driver-name",  # not the scenarios' gpu.example.com: $(DRIVER) follows it
        "tpu.example.com",
        "--drasim-report-dir",
        "out",
        "-k",
        "round-trip or conformance-registration or unknown-claim or batched or health-stream",
    )
    # conformance-registration counts GetInfo/NotifyRegistrationStatus as the kubelet saw them,
    # so it runs against a real driver too; unprepare-unknown-claim's plugin fault is applied
    # by drasim's proxy, on by default.
    result.assert_outcomes(passed=4, skipped=1)
    out = result.stdout.str()
    assert "lacks capability 'health'" in out
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    assert report["environment"]["backend"] == "http"
    passed = [r for r in report["results"] if r["status"] == "passed"]
    assert all("fake_plugins: tpu.example.com serving" in r["stderr"] for r in passed)
    calls = [e for r in passed for e in r["journal"] if e["kind"] == "rpc" and e.get("side") == "kubelet"]
    assert calls
    assert {e["driver"] for e in calls} == {"tpu.example.com"}
    served = [e for r in passed for e in r["journal"] if e["kind"] == "rpc" and e.get("side") == "plugin"]
    assert served
    assert {e.get("via") for e in served} == {"proxy"}


def test_without_the_proxy_plugin_faults_are_skipped(pytester: pytest.Pytester, driver_cmd: str) -> None:
    result = pytester.runpytest(
        "-rs", "--drasim-suite", "conformance", "--drasim-driver-cmd", driver_cmd,
        "--drasim-no-proxy", "-k", "unknown-claim",
    )  # fmt: skip
    result.assert_outcomes(skipped=1)
    assert "injects a plugin fault" in result.stdout.str()
    # Declaring 'proxy' would not help (only the proxy grants it), so no hint to declare it.
    assert "declare what the driver supports" not in result.stdout.str()


def test_node_fixture_drives_a_driver_process(pytester: pytest.Pytester, driver_cmd: str) -> None:
    pytester.makepyfile(
        """
        import os
        from drasim.runner.drivers import ProcessDriverHandle

        def test_lifecycle(drasim_node, drasim_factory, drasim_journal, drasim_plugin):
            assert isinstance(drasim_plugin, ProcessDriverHandle)
            first_pid = drasim_plugin.process.pid
            drasim_node.create(drasim_factory.device_class(), drasim_factory.claim("gpu"))
            drasim_node.step({"startPod": {"name": "a", "claims": ["gpu"]}})
            drasim_node.step({"killPlugin": {}})
            drasim_journal.assert_event("plugin-process", action="killed", pid=first_pid, returncode=-9)
            drasim_node.step({"startPlugin": {}})
            drasim_node.step({"restartPlugin": {}})
            assert drasim_plugin.process.pid not in (None, first_pid)
            drasim_node.step({"expectRegistered": {"instances": 1, "connected": True}})
            drasim_node.step({"deletePod": "a"})
            drasim_journal.assert_calls("NodeUnprepareResources", 1, claim="gpu")
            assert drasim_plugin.registration_socket().name == "gpu.example.com-reg.sock"
        """
    )
    result = pytester.runpytest("-q", "--drasim-driver-cmd", driver_cmd)
    result.assert_outcomes(passed=1)
