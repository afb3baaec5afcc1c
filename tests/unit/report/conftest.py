"""A realistic run, built by hand: what the runner will hand the renderers."""

from __future__ import annotations

import pytest

from drasim.clock import VirtualClock
from drasim.journal import Journal
from drasim.report import FailureInfo, RunEnvironment, RunReport, ScenarioResult
from drasim.values import ClaimRef

V1 = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
DRIVER = "gpu.example.com"
SOCKET = "/var/lib/kubelet/plugins/gpu.example.com/dra.sock"
EVIL = "<script>alert(1)</script>"


def rpc(journal: Journal, clock: VirtualClock, method: str, claims: list[ClaimRef], **kw) -> None:
    clock.advance(0.002)
    response = kw.pop("response", {"claims": {c.uid: {"devices": [], "error": ""} for c in claims}})
    journal.record(
        "rpc",
        side="kubelet",
        driver=DRIVER,
        endpoint=SOCKET,
        method=V1 + method,
        request={"claims": claims},
        response=response,
        code=kw.pop("code", "OK"),
        error=kw.pop("error", ""),
        duration=0.0015,
    )


def prepare_journal(claim_name: str = "gpu", fail_unprepare: bool = False) -> Journal:
    clock = VirtualClock()
    journal = Journal(clock)
    claim = ClaimRef(namespace="default", uid="uid-gpu", name=claim_name)
    journal.record("plugin-process", action="started", driver=DRIVER, pid=4242)
    journal.record(
        "registration",
        driver=DRIVER,
        endpoint=SOCKET,
        socket="/var/lib/kubelet/plugins_registry/gpu.sock",
        service="v1.DRAPlugin",
        outcome="registered",
        error="",
    )
    journal.record("step", index=1, name="start_pod", text="start_pod p1")
    journal.record(
        "api",
        client="kubelet",
        verb="GET",
        resource="resourceclaims",
        namespace="default",
        name=claim_name,
        code=200,
        duration=0.001,
    )
    rpc(journal, clock, "NodePrepareResources", [claim])
    journal.record("checkpoint", path="/tmp/x/dra_manager_state", entries=[{"ClaimUID": "uid-gpu"}], size=412)
    journal.record(
        "kubelet", operation="PrepareResources", pod="default/p1", pod_uid="pod-1", error="", duration=0.004
    )
    journal.record("step", index=2, name="delete_pod", text="delete_pod p1")
    if fail_unprepare:
        journal.record(
            "fault", where="rpc", driver=DRIVER, description="NodeUnprepareResources -> Unavailable"
        )
        rpc(
            journal,
            clock,
            "NodeUnprepareResources",
            [claim],
            code="Unavailable",
            error="rpc error: code = Unavailable desc = injected",
            response=None,
        )
        journal.record(
            "kubelet",
            operation="UnprepareResources",
            pod="default/p1",
            pod_uid="pod-1",
            error="NodeUnprepareResources failed",
        )
    else:
        rpc(journal, clock, "NodeUnprepareResources", [claim])
        journal.record("checkpoint", path="/tmp/x/dra_manager_state", entries=[], size=98)
    return journal


@pytest.fixture
def report() -> RunReport:
    passed = ScenarioResult(
        name="prepare-unprepare-round-trip",
        status="passed",
        file="scenarios/conformance/round-trip.yaml",
        line=1,
        description="a claim is prepared once and unprepared once",
        tags=["conformance"],
        duration=0.123,
        journal=prepare_journal().events(),
        artifacts={"journal": "/tmp/drasim/round-trip/journal.jsonl"},
    )
    failed_journal = prepare_journal(fail_unprepare=True)
    failure = FailureInfo.build(
        "expected 1 NodeUnprepareResources call to gpu.example.com for claim default/gpu after step 2 "
        "(delete_pod p1); found 0 that succeeded.",
        step_index=2,
        step_text="delete_pod p1",
        expected={"NodeUnprepareResources": {"calls": 1, "code": "OK"}},
        actual={"NodeUnprepareResources": {"calls": 1, "code": "Unavailable"}},
        similar_events=failed_journal.events("rpc", method=V1 + "NodeUnprepareResources"),
        journal_tail=failed_journal.tail(3),
        reproduce="drasim run scenarios/kubelet/unprepare-retry.yaml -k unprepare-is-retried",
    )
    failed = ScenarioResult(
        name="unprepare-is-retried",
        status="failed",
        file="scenarios/kubelet/unprepare-retry.yaml",
        line=3,
        tags=["kubelet", "faults"],
        duration=0.5,
        failure=failure,
        journal=failed_journal.events(),
        stderr="E1202 plugin: unprepare failed\n",
    )
    errored = ScenarioResult(
        name="driver-crash",
        status="error",
        file="scenarios/kubelet/crash.yaml",
        line=1,
        duration=0.05,
        failure=FailureInfo.build("driver process exited with code 2 before registering"),
        stdout="starting\n",
        stderr="panic: boom\x1b[31m\n",
    )
    skipped = ScenarioResult(
        name="health-stream",
        status="skipped",
        file="scenarios/conformance/health.yaml",
        line=1,
        skip_reason="driver does not advertise the health service",
    )
    evil = ScenarioResult(
        name=f"evil {EVIL}",
        status="passed",
        file="scenarios/examples/evil.yaml",
        line=7,
        description=EVIL,
        duration=0.01,
        journal=prepare_journal(claim_name=EVIL).events(),
    )
    return RunReport(
        results=[passed, failed, errored, skipped, evil],
        started_at="2026-12-02T13:00:00Z",
        duration=1.25,
        drasim_version="0.1.0",
        environment=RunEnvironment(driver="fake:gpu.example.com", backend="memory", time_scale=0.01),
    )
