"""Hand-written lists in the scenario language agree with the tables they repeat."""

from __future__ import annotations

from typing import get_args

from drasim.profiles import VERSIONS
from drasim.runner.backend_choice import BACKENDS
from drasim.scenario.common import BackendName, KubeletVersionName


def test_kubelet_version_names_are_the_profiles() -> None:
    """A new kubelet version is one profile row: the scenario language derives its names from them."""
    assert get_args(KubeletVersionName) == VERSIONS


def test_backend_names_are_the_runners_backends() -> None:
    assert tuple(name for name in get_args(BackendName) if name) == tuple(BACKENDS)


def test_resource_api_versions_are_one_table() -> None:
    """The scenario language, the default served versions, the slice reads, the fake plugin and the
    API server's kinds all use the resource.k8s.io versions of drasim.apiversions."""
    from drasim.apiserver.kinds import RESOURCE_VERSIONS as SERVABLE
    from drasim.apiversions import DEFAULT_RESOURCE_API_VERSIONS, RESOURCE_API_VERSIONS
    from drasim.runner.apiside import SLICE_VERSIONS
    from drasim.scenario.common import ResourceApiVersion
    from drasim.scenario.schema import ApiServerSpec
    from fake_plugins.claims import RESOURCE_VERSIONS as FAKE_READS

    assert get_args(ResourceApiVersion) == RESOURCE_API_VERSIONS == SERVABLE
    assert tuple(ApiServerSpec().resource_api_versions) == DEFAULT_RESOURCE_API_VERSIONS
    assert SLICE_VERSIONS == FAKE_READS == DEFAULT_RESOURCE_API_VERSIONS


def test_step_needs_name_known_capabilities() -> None:
    """``@step(needs=...)`` is what conformance skips scenarios by: only capabilities it knows."""
    from drasim.conformance import KNOWN_CAPABILITIES
    from drasim.scenario.registry import STEP_TYPES

    needs = {name: dict(t.needs) for name, t in STEP_TYPES.items() if t.needs}
    assert set(needs) >= {"setDeviceHealth", "unblock", "expectHealth"}
    assert all(cap in KNOWN_CAPABILITIES for caps in needs.values() for cap in caps)
    assert all("{where}" in reason for caps in needs.values() for reason in caps.values())
