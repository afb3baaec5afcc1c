"""Random pod lifecycles with driver failures and restarts keep the manager's invariants."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasim.errors import KubeletError, RpcError

PODS = {f"uid-{i}": claims for i, claims in enumerate([("a",), ("a", "b"), ("b", "c"), ("c",)])}
CLAIMS = ("a", "b", "c")

step = st.one_of(
    st.tuples(st.just("prepare"), st.sampled_from(sorted(PODS))),
    st.tuples(st.just("unprepare"), st.sampled_from(sorted(PODS))),
    st.tuples(st.just("fail-next"), st.sampled_from(["prepare", "unprepare"])),
    st.tuples(st.just("restart"), st.none()),
    st.tuples(st.just("reconcile"), st.sampled_from(sorted(PODS))),
)


def check_invariants(harness, *, synced: bool) -> None:
    states = harness.manager.claim_infos()
    for state in states:
        if harness.manager.is_prepared(state.namespace, state.claim_name):
            assert state.pod_uids, "a prepared claim has users"
        for uid in state.pod_uids:
            assert state.claim_name in PODS[uid], "only pods that use a claim reference it"
    if synced:
        assert harness.checkpoint.entries == states, "a successful call ends with the cache checkpointed"


def inject(harness, which: str) -> None:
    error = RpcError("Unavailable", "injected")
    if which == "prepare":
        harness.driver.prepare_script = error
    else:
        harness.driver.unprepare_script = error


def run_step(harness, kit, pods, action: str, arg) -> bool:
    """Run one step; True when the cache must now equal the checkpoint."""
    if action == "prepare":
        harness.manager.prepare_resources(pods[arg])
        for claim in PODS[arg]:
            assert harness.manager.is_prepared(kit.NAMESPACE, claim)
    elif action == "unprepare":
        harness.manager.unprepare_resources(pods[arg])
        assert not harness.manager.pod_might_need_to_unprepare_resources(arg)
    elif action == "restart":
        harness.restart()
    else:
        return all(error is None for error in harness.manager.reconcile([arg]).values())
    return True


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(step, max_size=25))
def test_random_lifecycles(kit, steps) -> None:
    harness = kit.Harness()
    for claim in CLAIMS:
        harness.claims.add(kit.claim(claim, reserved_for=tuple(PODS)))
    pods = {uid: kit.pod(f"pod-{uid}", uid, claims=claims) for uid, claims in PODS.items()}
    for action, arg in steps:
        if action == "fail-next":
            inject(harness, arg)
            continue
        try:
            synced = run_step(harness, kit, pods, action, arg)
        except KubeletError:
            synced = False
        harness.driver.prepare_script = harness.driver.unprepare_script = None
        check_invariants(harness, synced=synced)
    # Tearing everything down always converges to an empty cache and checkpoint.
    harness.driver.prepare_script = harness.driver.unprepare_script = None
    for uid in PODS:
        harness.manager.unprepare_resources(pods[uid])
    assert harness.manager.claim_infos() == []
    assert harness.checkpoint.entries == []


@pytest.mark.parametrize("uid", sorted(PODS))
def test_unprepare_of_never_prepared_pod_is_harmless(kit, uid) -> None:
    harness = kit.Harness()
    harness.manager.unprepare_resources(kit.pod(f"pod-{uid}", uid, claims=PODS[uid]))
    assert harness.unprepare_count() == 0
