"""Kubelet version profiles: the table, the service choice of each release, the manager's switches."""

from __future__ import annotations

import pytest

from drasim.profiles import (
    DEFAULT_VERSION,
    VERSIONS,
    VersionError,
    allowed_versions,
    check_constraint,
    parse_version_list,
    profile,
)


def test_default_is_the_newest_profile() -> None:
    assert VERSIONS == ("1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
    assert DEFAULT_VERSION == "1.37"
    assert profile() is profile("1.37") is profile("v1.37.2")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1.34", ("1.34",)),
        ("1.35, v1.31,1.35", ("1.31", "1.35")),
        ("all", VERSIONS),
    ],
)
def test_parse_version_list(value: str, expected: tuple[str, ...]) -> None:
    assert parse_version_list(value) == expected


@pytest.mark.parametrize("value", ["1.30", "2.0", "latest", ",", "1.34,1.38"])
def test_unknown_versions_are_refused_with_the_known_ones(value: str) -> None:
    with pytest.raises(VersionError, match=r"known versions: 1\.31, 1\.32"):
        parse_version_list(value)


@pytest.mark.parametrize(
    ("constraints", "expected"),
    [
        ([], VERSIONS),
        ([">=1.34"], ("1.34", "1.35", "1.36", "1.37")),
        (["<1.34"], ("1.31", "1.32", "1.33")),
        ([">=1.32", "<=1.34"], ("1.32", "1.33", "1.34")),
        (["1.32", "1.36"], ("1.32", "1.36")),
        (["1.33", ">1.33"], ()),
    ],
)
def test_allowed_versions(constraints: list[str], expected: tuple[str, ...]) -> None:
    assert allowed_versions(constraints) == expected


def test_bad_constraint() -> None:
    with pytest.raises(VersionError, match="invalid kubelet version constraint"):
        check_constraint("=> 1.34 please")


@pytest.mark.parametrize(
    ("version", "advertised", "chosen"),
    [
        ("1.31", ["1.0.0"], "v1alpha3.NodeService"),
        ("1.31", ["v1beta1.DRAPlugin", "1.0.0"], "v1alpha3.NodeService"),
        ("1.32", ["v1.DRAPlugin", "v1beta1.DRAPlugin"], "v1beta1.DRAPlugin"),
        ("1.33", ["v1alpha3.NodeService", "v1beta1.DRAPlugin"], "v1beta1.DRAPlugin"),  # "two-services"
        ("1.33", ["1.0.0"], "v1alpha3.NodeService"),  # "version"
        ("1.33", ["v1alpha3.NodeService"], "v1alpha3.NodeService"),  # "old-service"
        ("1.34", ["v1beta1.DRAPlugin", "v1.DRAPlugin"], "v1beta1.DRAPlugin"),  # the plugin's order
        ("1.37", ["v1.DRAPlugin", "v1beta1.DRAPlugin"], "v1.DRAPlugin"),
    ],
)
def test_service_choice(version: str, advertised: list[str], chosen: str) -> None:
    assert profile(version).choose_service(advertised) == chosen


@pytest.mark.parametrize(
    ("version", "advertised", "message"),
    [
        (
            "1.31",
            ["v1.DRAPlugin", "v1beta1.DRAPlugin"],
            "could not find a highest supported version from versions ([v1.DRAPlugin v1beta1.DRAPlugin]) "
            'reported by this plugin: could not parse "v1.DRAPlugin" as version',
        ),
        ("1.31", [], "empty array for supported versions"),
        ("1.33", [], "empty list of supported gRPC services"),
        ("1.34", ["1.0.0"], 'none of services supported by the plugin (["1.0.0"]) are supported'),
    ],
)
def test_service_choice_errors(version: str, advertised: list[str], message: str) -> None:
    with pytest.raises(ValueError) as err:  # noqa: PT011 - the message is checked below
        profile(version).choose_service(advertised)
    assert message in str(err.value)


def test_profile_boundaries() -> None:
    merges = {v: profile(v).device_merge for v in VERSIONS}
    # resetDevices (#140274) is in 1.37 only: no served 1.34-1.36 patch has the cherry-picks.
    assert [v for v, m in merges.items() if m == "append"] == ["1.31", "1.32", "1.33", "1.34", "1.35", "1.36"]
    assert [v for v in VERSIONS if profile(v).checkpoint_share_id] == ["1.35", "1.36", "1.37"]
    assert [v for v in VERSIONS if profile(v).unprepare_names_from_cache] == ["1.37"]
    assert [v for v in VERSIONS if profile(v).operation_is_error_inverted] == ["1.34", "1.35"]
    assert [v for v in VERSIONS if profile(v).health_services] == ["1.34", "1.35", "1.36", "1.37"]
    assert {profile(v).resource_api_version for v in VERSIONS} == {"v1alpha3", "v1beta1", "v1"}


def test_unprepare_names_come_from_the_pod_before_1_37(harness, kit) -> None:
    """Before #139845 a pod whose resourceClaimStatuses was lost cannot be unprepared (#139772)."""
    harness.manager.version = profile("1.36")
    harness.add_info(kit.claim_info(pod_uids=[kit.POD_UID], prepared=True))
    with pytest.raises(Exception, match="ResourceClaim not created yet"):
        harness.manager.unprepare_resources(kit.pod(template=True))
    assert harness.unprepare_count() == 0
    harness.manager.version = profile("1.37")
    harness.manager.unprepare_resources(kit.pod(template=True))
    assert harness.unprepare_count() == 1


@pytest.mark.parametrize("version", ["1.33", "1.36"])
def test_retried_prepare_appends_devices_before_1_37(harness, kit, version: str) -> None:
    harness.manager.version = profile(version)
    harness.claims.add(kit.claim())
    pod = kit.pod()
    harness.manager.prepare_resources(pod)
    harness.restart().version = profile(version)
    harness.manager.prepare_resources(pod)
    (state,) = harness.manager.claim_infos()
    assert len(state.driver_state["test-driver"].devices) == 2
