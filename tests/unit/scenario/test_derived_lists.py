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
