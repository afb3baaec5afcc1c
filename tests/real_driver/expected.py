"""What running drasim's scenarios against the example driver gives (docs/real-driver.md).

Failures listed here are bugs of the driver, each written up with its evidence in
docs/real-driver.md; if one starts passing, the driver was fixed: update both.
"""

from __future__ import annotations

#: Conformance scenarios the example driver passes.
CONFORMANCE_PASSED = {
    "conformance-batched-claims",
    "conformance-cdi-ids-and-specs",
    "conformance-driver-reports-claim-errors",
    "conformance-idempotent-prepare",
    "conformance-idempotent-unprepare",
    "conformance-kubelet-restart-survival",
    "conformance-parallel-pods",
    "conformance-plugin-restart-keeps-state",
    "conformance-prepare-unprepare-round-trip",
    "conformance-registration",
    "conformance-shared-claim",
    "conformance-unprepare-after-failed-prepare",
}

#: Skipped conformance scenarios -> a text their skip reason contains.
CONFORMANCE_SKIPPED = {
    "conformance-health-stream": "lacks capability 'health'",
    "conformance-unprepare-unknown-claim": "injects a plugin fault",
}

#: Scenario -> a text of the failure message, for bugs of the driver (docs/real-driver.md).
DRIVER_BUGS = {
    # dra-example-driver#263: no exclusivity check in NodePrepareResources.
    "conformance-exclusive-devices": "startPod default/b succeeded, but an error",
    # A claim found in the driver's checkpoint is returned without writing its CDI spec
    # again, so after /var/run/cdi (a tmpfs) was cleared its CDI device dangles.
    "reboot-node-re-prepares": "unresolved: pod default/a container ctr: k8s.gpu.example.com/gpu=",
    "reboot-cleared-cdi-dir-new-sandbox": "unresolved: pod default/a container ctr: k8s.gpu.example.com/gpu=",
}
