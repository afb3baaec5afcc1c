"""Which kubelet version a scenario runs as, and the (scenario, version) matrix.

Without ``--kubelet-version`` every scenario runs once, as the newest version its
``kubeletVersions`` allows (the newest profile when it has no restriction), and keeps its
plain name. With ``--kubelet-version 1.33,1.35`` (or ``all``) every scenario runs once per
listed version and each run is named ``<scenario>[kubelet-<version>]``; a version the
scenario's ``kubeletVersions`` excludes gives a skipped row that says so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from drasim.errors import ConfigError
from drasim.profiles import VERSIONS, VersionError, allowed_versions, profile

if TYPE_CHECKING:
    from drasim.runner.options import RunOptions
    from drasim.scenario.schema import Scenario

__all__ = ["matrix", "matrix_name", "resolve_version"]


def matrix_name(name: str, version: str) -> str:
    """``name[kubelet-1.34]``: a scenario's row in a version matrix."""
    return f"{name}[kubelet-{version}]"


def allowed(scenario: Scenario) -> tuple[str, ...]:
    """The versions the scenario's ``kubeletVersions`` allows (every version when unrestricted)."""
    constraints = scenario.spec.kubelet_versions
    return allowed_versions(constraints) if constraints else VERSIONS


def resolve_version(scenario: Scenario, options: RunOptions) -> tuple[str, str]:
    """``(version, skip reason)`` for one run: the requested or the newest allowed version.

    An unknown requested version raises :class:`~drasim.errors.ConfigError`.

    The reason is empty when the scenario runs; otherwise the scenario's ``kubeletVersions``
    excludes the requested version (or allows none).
    """
    versions = allowed(scenario)
    requested = options.kubelet_version
    if requested is not None:
        try:
            requested = profile(requested).version
        except VersionError as err:
            raise ConfigError(f"kubelet version: {err}") from None
    if requested is None:
        if not versions:
            return VERSIONS[-1], f"kubeletVersions {scenario.spec.kubelet_versions} allows no known version"
        return versions[-1], ""
    if requested not in versions:
        shown = ", ".join(versions) or "none"
        return requested, (
            f"kubelet {requested} is outside this scenario's kubeletVersions "
            f"{list(scenario.spec.kubelet_versions)} (allowed: {shown})"
        )
    return requested, ""


def matrix(scenarios: list[Scenario], options: RunOptions) -> list[tuple[Scenario, RunOptions]]:
    """One (scenario, options) pair per run: per requested kubelet version, or once each."""
    if not options.kubelet_versions:
        return [(scenario, options) for scenario in scenarios]
    return [
        (scenario, replace(options, kubelet_version=version))
        for scenario in scenarios
        for version in options.kubelet_versions
    ]
