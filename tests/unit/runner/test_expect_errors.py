"""expectError and expectNoError against hand-journaled kubelet and registration events."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from drasim.runner import expectations
from drasim.runner.context import StepFailure
from drasim.scenario.expectations import ExpectError, ExpectNoError

W: Any = sys.modules["drasim_test_checks_world"]  # loaded by tests/conftest.py


@pytest.fixture
def world(tmp_path: Path) -> Any:
    w = W.FakeWorld(tmp_path)
    w.add_pod("a", ["gpu"], phase="Pending")
    return w


def fails(world: Any, args: object, name: str = "expectError", **marks: int) -> StepFailure:
    with pytest.raises(StepFailure) as info:
        expectations.run_check(world, args, W.context(name, **marks))
    return info.value


def test_error_matches_operation_pod_and_text(world: Any) -> None:
    world.kubelet_op("PrepareResources", None, pod="default/a", pod_uid="uid-a")
    world.kubelet_op(
        "PrepareResources",
        "prepare dynamic resources: NodePrepareResources: rpc error: code = Unavailable",
        pod="default/a",
        pod_uid="uid-a",
    )
    args = ExpectError(contains="code = Unavailable", operation="prepare", pod="a", since="start")
    expectations.run_check(world, args, W.context("expectError"))
    expectations.run_check(world, ExpectError(matches=r"code = \w+", since="start"), W.context("expectError"))


def test_reconcile_errors_match_by_pod_uid(world: Any) -> None:
    world.kubelet_op("ReconcileUnprepare", "unprepare failed", pod_uid="uid-a")
    world.kubelet_op("reconcile", "uid-a: unprepare failed")  # the runner's summary: not counted again
    failure = fails(world, ExpectNoError(operation="reconcile"), "expectNoError")
    assert failure.message == (
        "expected no kubelet reconcile error since the start; found 1, first: #1 ReconcileUnprepare "
        "pod=default/a: unprepare failed"
    )
    expectations.run_check(
        world, ExpectError(operation="reconcile", pod="a", since="start"), W.context("expectError")
    )
    failure = fails(world, ExpectError(operation="unprepare", since="start"))
    assert failure.message == "expected a kubelet unprepare error since the start; found none"


def test_error_window_previous(world: Any) -> None:
    # previous expectError step started at seq 8: errors before it are out of the window
    for _ in range(8):
        world.kubelet_op("PrepareResources", "old failure", pod="default/a")
    failure = fails(world, ExpectError(contains="old"))
    assert failure.message == (
        "expected a kubelet error containing 'old' since step 5 (the previous expectError); found none"
    )


def test_error_that_does_not_match(world: Any) -> None:
    world.kubelet_op("PrepareResources", "prepare dynamic resources: claim not allocated", pod="default/a")
    world.kubelet_op("start", None)
    failure = fails(world, ExpectError(contains="Unavailable", pod="a", operation="prepare", since="start"))
    assert failure.message == (
        "expected a kubelet prepare error for pod default/a containing 'Unavailable' since the start; "
        "found 1 error, none matching: prepare dynamic resources: claim not allocated"
    )
    assert failure.actual == [
        {"seq": 1, "operation": "PrepareResources", "pod": "default/a",
         "error": "prepare dynamic resources: claim not allocated"}
    ]  # fmt: skip
    assert [e["seq"] for e in failure.similar] == [1]


def test_registration_and_start_errors(world: Any) -> None:
    world.journal.record(
        "registration", driver=None, socket="/x/reg.sock", outcome="failed", error="RegisterPlugin error -- x"
    )
    world.kubelet_op("start", "could not initialize checkpoint manager")
    expectations.run_check(
        world, ExpectError(operation="registration", contains="RegisterPlugin", since="start"), W.context("e")
    )
    expectations.run_check(
        world, ExpectError(operation="start", matches="(?i)CHECKPOINT", since="start"), W.context("e")
    )
    failure = fails(world, ExpectError(operation="registration", pod="a", since="start"))
    assert (
        failure.message
        == "expected a kubelet registration error for pod default/a since the start; found none"
    )


def test_get_resources_errors_count_for_any(world: Any) -> None:
    world.kubelet_op("GetResources", "unable to get claim info", pod="default/a")
    expectations.run_check(world, ExpectError(contains="claim info", pod="a", since="start"), W.context("e"))
    expectations.run_check(world, ExpectNoError(operation="prepare"), W.context("expectNoError"))


def test_housekeeping_errors_are_not_kubelet_operation_errors(world: Any) -> None:
    world.journal.record("kubelet", operation="health-stream-ended", driver=W.GPU, code="Canceled", error="x")
    world.journal.record("registration", driver=W.GPU, outcome="registered", error=None)
    expectations.run_check(world, ExpectNoError(), W.context("expectNoError"))


def test_no_error_fails_with_the_first_error(world: Any) -> None:
    world.kubelet_op("PrepareResources", None, pod="default/a")
    mark = world.journal.mark()
    world.kubelet_op("UnprepareResources", "unprepare dynamic resources: boom", pod="default/a")
    expectations.run_check(world, ExpectNoError(operation="prepare"), W.context("expectNoError"))
    failure = fails(world, ExpectNoError(since="m"), "expectNoError", m=mark - 1)
    assert failure.message == (
        "expected no kubelet error after mark 'm'; found 1, first: "
        "#2 UnprepareResources pod=default/a: unprepare dynamic resources: boom"
    )
    assert failure.expected == []
    assert failure.actual[0]["error"] == "unprepare dynamic resources: boom"
