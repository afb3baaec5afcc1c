"""What a ``drasim run`` report header says the scenarios ran against: the driver and the backend,
from the options and from the scenarios themselves (a pinned ``spec.backend``, a scenario's own
``command`` driver), so the header does not name a backend or driver the run did not use; and
the details the HTML header adds: the name a driver command registers and whether drasim's
proxy is in front of it, the kubeconfig file and context of a real cluster, and the kubelet in
the node's slot (with the upstream releases an ``upstream`` kubelet runs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drasim.runner.options import RunOptions
    from drasim.scenario.schema import Scenario


def driver_and_backend(scenarios: Sequence[Scenario], options: RunOptions) -> tuple[str, str]:
    """``(driver, backend)`` for the header; several backends are listed, comma-separated."""
    if options.driver_cmd:
        driver = options.driver_cmd
    else:
        kinds = {
            "command (scenario)" if d.command is not None else "fake"
            for s in scenarios
            for d in s.spec.all_drivers()
        }
        driver = " + ".join(sorted(kinds, key=lambda k: k != "fake")) or "fake"
    backends = {options.backend or s.spec.backend or _default_backend(s, options) for s in scenarios}
    return driver, ", ".join(sorted(backends)) or (options.backend or "memory")


def _default_backend(scenario: Scenario, options: RunOptions) -> str:
    """A real driver reads the API server over HTTP (``apiServer.mode: auto``), the fake in memory."""
    real = options.driver_cmd or any(d.command is not None for d in scenario.spec.all_drivers())
    return "http" if real else "memory"


def driver_detail(options: RunOptions, scenarios: Sequence[Scenario] = ()) -> str:
    """The ``--driver-cmd`` driver's name, whether drasim's proxy serves its sockets, and that the
    other drivers of multi-driver scenarios stay fake ('' for fakes)."""
    if not options.driver_cmd:
        return ""
    several = sum(len(s.spec.all_drivers()) > 1 for s in scenarios)
    others = f"the other drivers of {several} multi-driver scenarios stay fake" if several else ""
    name = f"registers {options.driver_name}" if options.driver_name else "the scenario's driver name"
    proxy = "behind drasim's proxy" if options.proxy else "--no-proxy: the kubelet reaches it directly"
    caps = f"capabilities {', '.join(options.capabilities)}" if options.capabilities else ""
    return ", ".join(p for p in (name, proxy, caps, others) if p)


def backend_detail(options: RunOptions) -> str:
    """The kubeconfig file and context of the ``kubeconfig`` backend ('' for drasim's own servers)."""
    if options.backend != "kubeconfig":
        return ""
    context = f"context {options.context}" if options.context else "its current context"
    return f"kubeconfig {options.kubeconfig}, {context}"


def kubelet_description(options: RunOptions, scenarios: Sequence[Scenario]) -> str:
    """``emulated (drasim's DRA manager)``, or ``upstream@1.35.4 (k8s.io/kubernetes v1.35.4, ...)``
    with the releases the kubelet versions the scenarios run as map to."""
    from drasim.errors import ConfigError

    if not options.kubelet.startswith("upstream"):
        return f"{options.kubelet} (drasim's DRA manager)"
    from drasim.runner.versions import matrix, resolve_version
    from drasim.upstream_kubelet.choice import parse_kubelet_choice, release_for

    choice = parse_kubelet_choice(options.kubelet)
    versions = sorted(
        {resolve_version(s, o)[0] for s, o in matrix(list(scenarios), options)},
        key=lambda v: int(v.split(".")[1]),
    )
    releases: list[str] = []
    for version in versions:
        try:
            releases.append(f"v{release_for(choice, version)}")
        except ConfigError:  # too old for upstream's program: those rows are skipped
            continue
    shown = ", ".join(dict.fromkeys(releases)) or "no release"
    return f"{choice} (k8s.io/kubernetes {shown}, upstream's DRA manager)"
