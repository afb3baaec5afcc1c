"""The one table of plugin API versions (drasim/apiversions.py) is what every consumer reads.

Adding a version must be one row plus its generated modules; each test here fails if a
consumer keeps its own list again.
"""

from __future__ import annotations

import typing

import pytest

from drasim import apiversions
from drasim.apiversions import DRA_APIS, HEALTH_APIS, dra_api, health_api


@pytest.mark.parametrize("api", DRA_APIS + HEALTH_APIS, ids=lambda a: a.service)
def test_each_row_names_its_generated_modules(api: apiversions.PluginApi) -> None:
    assert api.messages.DESCRIPTOR.package == api.proto_package
    assert api.grpc_service in api.messages.DESCRIPTOR.services_by_name
    assert hasattr(api.stubs, f"{api.grpc_service}Stub")
    # share_id is the one message difference the table records.
    if api.kind == "dra":
        assert ("share_id" in api.messages.Device.DESCRIPTOR.fields_by_name) == api.share_id


def test_lookups_separate_dra_and_health() -> None:
    assert dra_api("v1.DRAPlugin").path == "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin"
    assert dra_api("v1alpha3.NodeService").path == "/v1alpha3.Node"
    assert health_api("v1alpha1.DRAResourceHealth").path == "/v1alpha1.DRAResourceHealth"
    with pytest.raises(KeyError):
        dra_api("v1.DRAResourceHealth")
    with pytest.raises(KeyError):
        health_api("v1.DRAPlugin")


def test_consumers_derive_from_the_table() -> None:
    from drasim.plugins import conversion, health, manager
    from drasim.pytest_plugin.profile import NAMED_PROFILES
    from drasim.scenario.common import DEFAULT_SERVICES, KubeletService
    from fake_plugins import config
    from fake_plugins.servicers import DRA_PATHS

    services = tuple(a.service for a in DRA_APIS)
    defaults = tuple(a.service for a in DRA_APIS if a.default)
    assert typing.get_args(KubeletService) == services  # the scenario vocabulary (and JSON Schema)
    assert defaults == DEFAULT_SERVICES
    assert set(conversion.SERVICE_PATHS) == set(services)
    assert set(conversion.SERVICE_PACKAGES) == set(services)
    assert defaults == manager.SERVICES_SUPPORTED_BY_KUBELET
    assert services == config.KNOWN_DRA_SERVICES
    assert defaults == config.DRA_SERVICES
    assert tuple(a.service for a in HEALTH_APIS) == config.HEALTH_SERVICES
    assert set(DRA_PATHS.values()) == {a.path for a in DRA_APIS}
    assert health.pick_health_service([a.service for a in HEALTH_APIS]) == HEALTH_APIS[0].service
    for api in DRA_APIS:
        if api.default:
            assert NAMED_PROFILES[f"{api.version}-only"] == {"services": [api.service]}


def test_every_profile_names_only_known_services() -> None:
    from drasim.profiles import PROFILES

    for profile in PROFILES:
        assert set(profile.dra_services) <= set(apiversions.DRA_SERVICES), profile.version
        assert set(profile.health_services) <= set(apiversions.HEALTH_SERVICES), profile.version


def test_the_table_imports_no_wire_code() -> None:
    """The kubelet core and the scenario layer read the table; it must not pull in grpc."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    modules = "drasim.apiversions, drasim.profiles, drasim.scenario.common"
    code = f"import sys, {modules}; print('grpc' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": root}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    out = run.stdout
    assert out.strip() == "False"
