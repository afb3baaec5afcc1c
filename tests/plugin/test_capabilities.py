"""Skipping what the driver under test cannot do, with the reason (as csi-sanity does)."""

from __future__ import annotations

import json
from typing import Any

import pytest

HEALTH = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: health-report, description: a device turns unhealthy}
spec:
  driver:
    fake: {name: gpu.example.com, health: true}
  claims:
    - {name: gpu}
  steps:
    - startPod: {name: a, claims: [gpu]}
    - setDeviceHealth: {device: gpu-0, health: Unhealthy}
"""

TAGGED = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata: {name: needs-sharing, description: tagged with a custom capability, tags: ["requires:gpu-sharing"]}
spec:
  driver:
    fake: {name: gpu.example.com}
  steps:
    - expectRegistered: {}
"""

# Never started: every scenario that would use it is skipped first.
NEVER_STARTED = "/nonexistent/driver --node {node}"


def test_fake_driver_has_the_fake_capabilities(pytester: pytest.Pytester, write: Any) -> None:
    write("drasim_health.yaml", HEALTH)
    pytester.runpytest("-q").assert_outcomes(passed=1)


def test_real_driver_without_health_skips_with_reason(pytester: pytest.Pytester, write: Any) -> None:
    write("drasim_health.yaml", HEALTH)
    result = pytester.runpytest(
        "-q", "-rs", "--drasim-driver-cmd", NEVER_STARTED, "--drasim-report-dir", "out"
    )
    result.assert_outcomes(skipped=1)
    out = result.stdout.str()
    assert "real driver lacks capability 'health'" in out
    assert "setDeviceHealth at" in out
    assert "drasim_health.yaml:11:7" in out
    assert "lacks capability 'fake-plugin'" in out
    report = json.loads((pytester.path / "out" / "drasim-report.json").read_text())
    (entry,) = report["results"]
    assert entry["status"] == "skipped"
    assert "lacks capability 'health'" in entry["skipReason"]


def test_declared_capability_is_not_enough_for_fake_only_steps(pytester: pytest.Pytester, write: Any) -> None:
    write("drasim_health.yaml", HEALTH)
    result = pytester.runpytest(
        "-q", "-rs", "--drasim-driver-cmd", NEVER_STARTED, "--drasim-capability", "health,fake-plugin"
    )
    result.assert_outcomes(skipped=1)
    out = result.stdout.str()
    assert "lacks capability 'fake-plugin'" in out
    assert "lacks capability 'health'" not in out


def test_requires_tag(pytester: pytest.Pytester, write: Any) -> None:
    write("drasim_tagged.yaml", TAGGED)
    skipped = pytester.runpytest("-q", "-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(
        ["*the fake plugin lacks capability 'gpu-sharing' (tagged 'requires:gpu-sharing')*"]
    )
    # Declared for a driver command, the tag no longer skips: the scenario runs (and fails here,
    # as this driver command does not exist). Without a driver command declaring is an error
    # (tests/plugin/test_one_validation.py).
    declared = pytester.runpytest(
        "-q", "--drasim-driver-cmd", NEVER_STARTED, "--drasim-capability", "gpu-sharing"
    )
    declared.assert_outcomes(failed=1)
    assert "lacks capability" not in declared.stdout.str()
    declared.stdout.fnmatch_lines(["*cannot start driver command /nonexistent/driver*"])


def test_marker_on_python_tests(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ndrasim_capabilities =\n    health\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.drasim_requires("health")
        def test_health():
            pass

        @pytest.mark.drasim_requires("admin-access")
        def test_admin():
            pass
        """
    )
    result = pytester.runpytest("-q", "-rs", "--drasim-driver-cmd", NEVER_STARTED, "--strict-markers")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*drasim: real driver lacks capability 'admin-access'*--drasim-capability*"])


def test_requires_tag_skips_the_same_way_in_drasim_run(tmp_path: Any) -> None:
    """The CLI route skips a custom-tagged scenario against the fake plugin with the pytest
    route's reason (it used to run it: the two routes disagreed)."""
    import contextlib
    import io

    from drasim.cli import main

    path = tmp_path / "tagged.yaml"
    path.write_text(TAGGED, encoding="utf-8")
    report = tmp_path / "r.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(["run", str(path), "--json", str(report)])
    assert code == 0, out.getvalue()
    (result,) = json.loads(report.read_text())["results"]
    assert result["status"] == "skipped", result
    assert (
        result["skipReason"]
        == "the fake plugin lacks capability 'gpu-sharing' (tagged 'requires:gpu-sharing')"
    )
