"""The fixtures for tests written in Python."""

from __future__ import annotations

import pytest


def test_node_factory_and_journal(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import json, urllib.request
        import pytest
        from drasim.pytest_plugin.harness import StepAssertionError

        @pytest.mark.drasim_node(driver={"fake": {"name": "gpu.example.com", "devices": 2}})
        def test_prepare(drasim_node, drasim_factory, drasim_journal, drasim_plugin):
            claim = drasim_factory.claim()
            name = claim["metadata"]["name"]
            drasim_node.create(drasim_factory.device_class(), claim)
            mark = drasim_journal.mark()
            drasim_node.step(drasim_factory.pod_step([name], name="p"))
            drasim_journal.assert_calls("NodePrepareResources", 1, claim=name, since=mark)
            drasim_journal.assert_event("registration", driver="gpu.example.com", outcome="registered")
            drasim_node.step({"expectPod": {"pod": "p", "phase": "Running"}})
            assert drasim_plugin.name == "gpu.example.com"
            with pytest.raises(StepAssertionError) as info:
                drasim_node.step({"expectCalls": {"NodePrepareResources": 3}})
            assert "-NodePrepareResources: 3" in str(info.value)
            assert "+NodePrepareResources: 1" in str(info.value)
            with pytest.raises(AssertionError, match="expected 2 NodeUnprepareResources calls, found 0"):
                drasim_journal.assert_calls("NodeUnprepareResources", 2)

        def test_bad_step_names_the_problem(drasim_node):
            with pytest.raises(ValueError, match="unknown step 'startPd'. Did you mean 'startPod'"):
                drasim_node.step({"startPd": {"name": "a"}})

        def test_api_server(drasim_api_server):
            client = drasim_api_server.client("runner")
            client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
            assert drasim_api_server.kubeconfig().is_file()
            with urllib.request.urlopen(drasim_api_server.url + "/api/v1/nodes") as reply:
                body = json.load(reply)
            assert [item["metadata"]["name"] for item in body["items"]] == ["n1"]

        def test_scenario_and_run(drasim_scenario, drasim_run):
            scenario = drasim_scenario(
                "from-python", claims=["gpu"],
                steps=[
                    {"startPod": {"name": "a", "claims": ["gpu"]}},
                    {"expectCalls": {"NodePrepareResources": 1}},
                ],
            )
            result = drasim_run(scenario)
            assert result.status == "passed", result.failure
        """
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=4)


def test_factory_is_reproducible() -> None:
    from drasim.pytest_plugin.factory import PodClaimFactory

    first = [PodClaimFactory(seed="t1").pod_name() for _ in range(2)]
    again = PodClaimFactory(seed="t1")
    assert first[0] == again.pod_name()
    other = PodClaimFactory(seed="t2")
    names = {other.claim_name() for _ in range(50)}
    assert len(names) == 50  # never the same name twice
    claim = PodClaimFactory(seed=1).claim("gpu", count=2)
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"


def test_node_marker_rejects_unknown_keys(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.drasim_node(drvier={})
        def test_typo(drasim_node):
            pass
        """
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*drasim_node marker: takes keyword arguments*got drvier*"])
