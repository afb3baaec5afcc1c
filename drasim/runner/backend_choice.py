"""Which API-server backend a scenario runs on, and why a scenario cannot run on one.

See :mod:`drasim.runner.backends` and docs/backends.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drasim.scenario.schema import Scenario

BACKENDS = ("memory", "http", "kubeconfig")


def default_kubeconfig() -> Path | None:
    """Where kubectl would look: the first file of ``$KUBECONFIG``, else ``~/.kube/config`` (if present)."""
    env = os.environ.get("KUBECONFIG", "")
    for item in env.split(os.pathsep):
        if item:
            return Path(item).expanduser()
    home = Path("~/.kube/config").expanduser()
    return home if home.is_file() else None


def chosen_backend(scenario: Scenario, requested: str | None) -> str:
    """The backend a scenario runs on: the run's explicit choice, else its pin, else memory."""
    return requested or scenario.spec.backend or "memory"


def backend_skip_reason(scenario: Scenario, requested: str | None, kubelet_version: str = "") -> str:
    """Why ``scenario`` cannot run on the backend the run asked for ('' when it can).

    A scenario pinned to another backend is skipped; on a real cluster (``kubeconfig``) so is
    every scenario that needs drasim's own API server: API-server fault rules, a choice of
    served resource.k8s.io versions, or a claim reserved without an allocation.
    """
    pinned = scenario.spec.backend
    if requested and pinned and pinned != requested:
        return f"the scenario pins backend {pinned!r} (spec.backend); this run uses --backend {requested}"
    if chosen_backend(scenario, requested) != "kubeconfig":
        return ""
    needs = _fake_server_needs(scenario)
    if kubelet_version:
        from drasim.profiles import profile as version_profile

        api = version_profile(kubelet_version).resource_api_version
        if api == "v1alpha3":  # the others (v1beta1, v1beta2, v1) a current cluster may serve
            needs.append(
                f"its kubelet {kubelet_version} reads ResourceClaims through resource.k8s.io/{api}, "
                "which only a 1.31 cluster serves"
            )
    if not needs:
        return ""
    return (
        f"needs drasim's own API server, which a real cluster is not ({'; '.join(needs)}); "
        "run it with --backend http or memory"
    )


def _fake_server_needs(scenario: Scenario) -> list[str]:
    from drasim.scenario.registry import walk_steps
    from drasim.scenario.schema import ApiServerSpec

    api = scenario.spec.api_server
    needs: list[str] = []
    if api.faults:
        needs.append("API-server fault rules in spec.apiServer.faults")
    if list(api.resource_api_versions) != list(ApiServerSpec().resource_api_versions):
        served = ", ".join(api.resource_api_versions)
        needs.append(f"serves only resource.k8s.io {served} (spec.apiServer.resourceApiVersions)")
    for step in walk_steps(scenario.spec.steps):
        where = f" at {step.location}" if step.file else ""
        if step.name == "fault" and getattr(step.args, "api_server", None) is not None:
            needs.append(f"injects an API-server fault{where}")
        if (
            step.name == "startPod"
            and getattr(step.args, "allocate", True) is False
            and getattr(step.args, "reserve", True) is True
        ):
            # A real server refuses the write: "status.reservedFor: Forbidden: may not be
            # specified when `allocated` is not set" (ResourceClaim status validation).
            needs.append(
                f"reserves a claim it leaves unallocated (startPod allocate: false{where}), "
                "which a real API server's validation refuses"
            )
    return needs
