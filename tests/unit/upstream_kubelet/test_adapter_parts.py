"""The pure parts of --kubelet upstream: the choice, metrics text, CDI grouping, Go claim states."""

from __future__ import annotations

import pytest

from drasim.errors import ConfigError
from drasim.upstream_kubelet.adapter import group_by_device, states_from_go
from drasim.upstream_kubelet.choice import parse_kubelet_choice, release_for
from drasim.upstream_kubelet.metrics import TextMetrics
from drasim.upstream_kubelet.process import LaunchConfig


def test_kubelet_choice() -> None:
    assert str(parse_kubelet_choice(None)) == "emulated"
    assert not parse_kubelet_choice("emulated").upstream
    plain = parse_kubelet_choice("upstream")
    assert plain.upstream
    assert plain.release is None
    assert release_for(plain, "1.36") == "1.36.3"
    pinned = parse_kubelet_choice("upstream@1.35")
    assert (pinned.release, pinned.minor_version, str(pinned)) == ("1.35.4", "1.35", "upstream@1.35.4")
    assert release_for(pinned, "1.37") == "1.35.4"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("real", "expected emulated, upstream"),
        ("upstream@1.20", "1.34 and newer"),
        ("upstream@x", "expected a Kubernetes"),
    ],
)
def test_kubelet_choice_refuses(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        parse_kubelet_choice(text)


def test_release_for_an_old_kubelet_names_the_limit() -> None:
    with pytest.raises(ConfigError, match=r"kubelet 1\.33 cannot run upstream"):
        release_for(parse_kubelet_choice("upstream"), "1.33")


def test_text_metrics() -> None:
    text = "\n".join(
        [
            "# HELP dra_operations_duration_seconds x",
            "# TYPE dra_operations_duration_seconds histogram",
            'dra_operations_duration_seconds_bucket{is_error="true",operation_name="PrepareResources",'
            'le="0.1"} 1',
            'dra_operations_duration_seconds_sum{is_error="true",operation_name="PrepareResources"} 0.01',
            'dra_operations_duration_seconds_count{is_error="true",operation_name="PrepareResources"} 1',
            "# TYPE dra_resource_claims_in_use gauge",
            'dra_resource_claims_in_use{driver_name="<any>"} 2',
        ]
    )
    metrics = TextMetrics(text)
    assert (
        metrics.histogram_count(
            "dra_operations_duration_seconds", operation_name="PrepareResources", is_error="true"
        )
        == 1
    )
    assert (
        metrics.histogram_count("dra_operations_duration_seconds", operation_name="Other", is_error="true")
        == 0
    )
    assert metrics.gauge("dra_resource_claims_in_use", driver_name="<any>") == 2.0
    assert metrics.gauge("dra_resource_claims_in_use", driver_name="gpu") is None
    assert metrics.series("dra_resource_claims_in_use") == {(("driver_name", "<any>"),): 2.0}


def _go_state(devices: list[dict[str, object]]) -> dict[str, object]:
    return {
        "ClaimUID": "u",
        "ClaimName": "gpu",
        "Namespace": "default",
        "PodUIDs": {"p": {}},
        "DriverState": {"d": {"Devices": devices}},
    }


def test_states_from_go_and_grouping() -> None:
    states = states_from_go(
        [
            _go_state(
                [
                    {
                        "PoolName": "n",
                        "DeviceName": "a",
                        "RequestNames": ["r"],
                        "CDIDeviceIDs": ["d/x=a", "d/x=common"],
                    },
                    {"PoolName": "n", "DeviceName": "b", "RequestNames": ["r"], "CDIDeviceIDs": ["d/x=b"]},
                ]
            )
        ]
    )
    assert states[0].key == "default/gpu"
    assert states[0].pod_uids == {"p"}
    assert group_by_device(["d/x=a", "d/x=common", "d/x=b", "d/x=stray"], states) == [
        ("d/x=a", "d/x=common"),
        ("d/x=b",),
        ("d/x=stray",),
    ]


def test_launch_arguments(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = LaunchConfig(
        binary=tmp_path / "kubelet",
        state_dir=tmp_path / "state",
        registry_dir=tmp_path / "reg",
        kubeconfig=tmp_path / "kubeconfig",
        node_name="node-1",
        log_path=tmp_path / "log",
        call_timeout=0.45,
        wiping_delay=30.0,
    )
    args = config.args()
    assert "--call-timeout=450ms" in args
    assert "--wiping-delay=30000ms" in args
    assert "--node-name=node-1" in args
