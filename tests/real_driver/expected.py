"""What running drasim's scenarios against each real driver gives (docs/real-driver.md).

Failures listed here are bugs of the driver, each written up with its evidence in
docs/real-driver.md. The tests pin each as a strict expected failure with that reason: if one
starts passing, the driver was fixed and the test fails (XPASS(strict)); update both.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Bug:
    """A scenario a driver fails because of a bug of the driver."""

    message: str
    """A text of the failure message."""
    reason: str
    """The bug, as the expected failure's reason (docs/real-driver.md has the evidence)."""


@dataclass(frozen=True)
class Expected:
    """One driver's results."""

    capabilities: tuple[str, ...]
    """What it is declared to support (--capability)."""
    conformance_passed: frozenset[str]
    conformance_skipped: dict[str, str]
    """Skipped conformance scenario -> a text of its skip reason."""
    bugs: dict[str, Bug] = field(default_factory=dict)
    proxy: bool = True
    """Measured behind drasim's proxy (the default); False: measured with ``--no-proxy``."""

    def conformance_bugs(self) -> dict[str, Bug]:
        return {n: b for n, b in self.bugs.items() if n.startswith("conformance-")}


_COMMON_PASSED = {
    "conformance-batched-claims",
    "conformance-cdi-ids-and-specs",
    "conformance-driver-reports-claim-errors",
    "conformance-idempotent-prepare",
    "conformance-idempotent-unprepare",
    "conformance-kubelet-restart-survival",
    "conformance-parallel-pods",
    "conformance-prepare-unprepare-round-trip",
    "conformance-registration",
    "conformance-shared-claim",
    "conformance-unprepare-after-failed-prepare",
}
_PLUGIN_FAULT = {"conformance-unprepare-unknown-claim": "injects a plugin fault"}

#: Kubernetes' own DRA test driver (test/e2e/dra/test-driver), built by drasim's Go module;
#: behind drasim's proxy (the default), so the plugin-fault scenarios run too.
TEST_DRIVER = Expected(
    capabilities=("health",),
    conformance_passed=frozenset(
        _COMMON_PASSED | {"conformance-health-stream", "conformance-unprepare-unknown-claim"}
    ),
    conformance_skipped={},
    bugs={
        "conformance-exclusive-devices": Bug(
            "startPod default/b succeeded, but an error",
            "test driver bug 1: no exclusivity check, a device allocated to two claims is prepared twice",
        ),
        "conformance-plugin-restart-keeps-state": Bug(
            "expected 0 spec files for claims; found 1",
            "test driver bug 2: prepared claims are kept in memory only; after a restart the unprepare "
            "of a claim prepared before it succeeds without removing the claim's CDI spec",
        ),
        "reboot-cleared-cdi-dir-new-sandbox": Bug(
            "unresolved: pod default/a container ctr: gpu.example.com/test=claim-",
            "test driver bug 3: a repeated prepare answers from memory without writing the CDI spec "
            "again, so a cleared CDI directory leaves the container's CDI device dangling",
        ),
    },
)

#: kubernetes-sigs/dra-example-driver's dra-example-kubeletplugin (DRASIM_EXAMPLE_DRIVER).
#: Measured with ``--no-proxy`` before drasim had its proxy, and not available here to measure
#: again behind it, so its tests run it with ``--no-proxy``.
EXAMPLE_DRIVER = Expected(
    capabilities=(),
    conformance_passed=frozenset(_COMMON_PASSED | {"conformance-plugin-restart-keeps-state"}),
    conformance_skipped={"conformance-health-stream": "lacks capability 'health'", **_PLUGIN_FAULT},
    bugs={
        "conformance-exclusive-devices": Bug(
            "startPod default/b succeeded, but an error",
            "example driver bug 1 (dra-example-driver#263): no exclusivity check in NodePrepareResources",
        ),
        "reboot-node-re-prepares": Bug(
            "unresolved: pod default/a container ctr: k8s.gpu.example.com/gpu=",
            "example driver bug 2: a claim found in the checkpoint is returned without writing its "
            "CDI spec again (the CDI directory is a tmpfs)",
        ),
        "reboot-cleared-cdi-dir-new-sandbox": Bug(
            "unresolved: pod default/a container ctr: k8s.gpu.example.com/gpu=",
            "example driver bug 2: a claim found in the checkpoint is returned without writing its "
            "CDI spec again (the CDI directory is a tmpfs)",
        ),
    },
    proxy=False,
)
