"""The plan of one run: every decision taken once, from the run's options and the scenario.

:func:`plan_run` resolves what the options and the scenario leave open (the kubelet version
and implementation, the effective time scale, the backend, the resource.k8s.io versions to
serve, the drivers, whether drasim's proxy stands in front of a ``--driver-cmd`` process)
into a frozen :class:`RunPlan`. The world, the result, the reports and the reproduce line
read the plan; nothing resolves these again.

Public API::

    plan_run(scenario, options) -> RunPlan
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from drasim.errors import ConfigError
from drasim.faults import PROXY_CAPABILITY
from drasim.profiles import KubeletVersion
from drasim.profiles import profile as version_profile
from drasim.runner.backend_choice import chosen_backend
from drasim.runner.kubelets import KUBELET_IMPLEMENTATIONS, UPSTREAM
from drasim.runner.options import RunOptions
from drasim.runner.versions import for_kubelet_era, matrix_name, resolve_version
from drasim.scenario.registry import walk_steps
from drasim.scenario.schema import ApiServerSpec, CommandDriverSpec, DriverSpec, Scenario
from drasim.timescale import effective_time_scale

__all__ = ["RunPlan", "plan_run"]


@dataclass(frozen=True)
class RunPlan:
    """What one run of one scenario does, decided before anything starts."""

    scenario: Scenario
    """The scenario as it runs: in a version matrix, its fake drivers advertise what a driver of
    the row's kubelet era would (:func:`~drasim.runner.versions.for_kubelet_era`)."""
    options: RunOptions
    name: str
    """The result's name: the scenario's, ``<scenario>[kubelet-<version>]`` in a version matrix."""
    kubelet_version: str
    """The kubelet version the run starts as (``restartKubelet: {version: ...}`` may change it later)."""
    version_skip: str
    """Why the scenario's ``kubeletVersions`` rule this version out ('' when it runs)."""
    kubelet: str
    """The kubelet implementation in the world's kubelet slot (a key of ``KUBELET_IMPLEMENTATIONS``)."""
    kubelet_release: str | None
    """The upstream release the ``upstream`` kubelet starts as (``upstream@1.35.4``'s, else the
    newest patch of :attr:`kubelet_version`); None for the emulated kubelet."""
    time_scale: float
    """Real seconds per nominal second: ``--time-scale``, else the scenario's ``timeScale``; may be 0."""
    backend: str
    """``memory``, ``http`` or ``kubeconfig``: ``--backend``, else the scenario's pin, else memory."""
    resource_versions: tuple[str, ...]
    """The resource.k8s.io versions drasim's API server serves."""
    drivers: tuple[DriverSpec, ...]
    """The scenario's drivers (the world keys them by these names)."""
    replacement: CommandDriverSpec | None
    """The ``--driver-cmd`` process that runs instead of the first driver (under ``--driver-name``)."""
    first_driver: str
    """What ``$(DRIVER)`` stands for ('' when the scenario has no driver)."""
    proxied: bool
    """The replacement process runs behind drasim's proxy (:mod:`drasim.proxy`): ``--driver-cmd``
    without ``--no-proxy``."""
    driver_capabilities: tuple[str, ...]
    """What the replacement can do, for skipping scenarios: the declared ``--capability`` names,
    and ``proxy`` when :attr:`proxied` (declaring ``proxy`` without the proxy grants nothing)."""
    proxy_splice: bool = True
    """The proxy may splice the DRA socket's bytes (:mod:`drasim.proxy.splice`): the scenario
    sets no plugin fault rule, from the start or by a ``fault`` step, which only the proxy's
    grpcio path applies."""

    @property
    def version(self) -> KubeletVersion:
        """The profile of :attr:`kubelet_version`."""
        return version_profile(self.kubelet_version)

    @property
    def timer_scale(self) -> float:
        """The scale timers and clocks run at: :attr:`time_scale`, or 1 when that is 0 (no delays
        at all: fault delays vanish, while the kubelet's timers still need a positive scale)."""
        return self.time_scale if self.time_scale > 0 else 1.0

    def release_at(self, version: str) -> str | None:
        """The upstream release a kubelet start as ``version`` runs (a pinned one stays)."""
        if self.kubelet_release is None or "@" in self.options.kubelet:
            return self.kubelet_release
        return _upstream_release(self.options.kubelet, version)

    def driver_specs(self) -> list[DriverSpec]:
        """The drivers to start; a :class:`~drasim.errors.ConfigError` when there is none."""
        if not self.drivers:
            msg = f"scenario {self.scenario.name}: no driver is configured"
            raise ConfigError(msg)
        return list(self.drivers)


def plan_run(scenario: Scenario, options: RunOptions | None = None) -> RunPlan:
    """The plan of one run of ``scenario`` with ``options``.

    An unknown ``--kubelet-version`` or kubelet implementation raises
    :class:`~drasim.errors.ConfigError`; a version the scenario excludes gives a plan whose
    :attr:`RunPlan.version_skip` says so.
    """
    options = options or RunOptions()
    kubelet, _, pinned = options.kubelet.partition("@")
    if kubelet not in KUBELET_IMPLEMENTATIONS:
        known = ", ".join(KUBELET_IMPLEMENTATIONS)
        raise ConfigError(f"kubelet implementation: unknown {kubelet!r} (known: {known})")
    if pinned and options.kubelet_version is None:
        # upstream@1.35.4 runs as kubelet 1.35 (the emulated profile beside it)
        options = dataclasses.replace(options, kubelet_version=".".join(pinned.split(".")[:2]))
    version, skip = resolve_version(scenario, options)
    if options.kubelet_version:  # a version matrix row: fake drivers of that kubelet's era
        scenario = for_kubelet_era(scenario, version)
    release = None
    if kubelet == UPSTREAM:
        try:
            release = _upstream_release(options.kubelet, version)
        except ConfigError as err:  # a kubelet version upstream's program is not written for
            skip = skip or f"not comparable: {err}"
    drivers = list(scenario.spec.all_drivers())
    replacement = None
    if drivers and options.driver_cmd:
        name = options.driver_name or drivers[0].name
        replacement = CommandDriverSpec(name=name, args=options.driver_cmd)
    return RunPlan(
        scenario=scenario,
        options=options,
        name=matrix_name(scenario.name, version) if options.kubelet_version else scenario.name,
        kubelet_version=version,
        version_skip=skip,
        kubelet=kubelet,
        kubelet_release=release,
        time_scale=effective_time_scale(scenario.spec.kubelet.time_scale, options.time_scale),
        backend=chosen_backend(scenario, options.backend),
        resource_versions=tuple(_served_resource_versions(scenario, version_profile(version))),
        drivers=tuple(drivers),
        replacement=replacement,
        first_driver=replacement.name if replacement else drivers[0].name if drivers else "",
        proxied=replacement is not None and options.proxy,
        driver_capabilities=_driver_capabilities(options),
        proxy_splice=not _sets_plugin_faults(scenario),
    )


def _upstream_release(choice: str, version: str) -> str:
    """``upstream`` or ``upstream@<release>`` -> the release a start as ``version`` runs."""
    from drasim.upstream_kubelet.choice import parse_kubelet_choice, release_for

    return release_for(parse_kubelet_choice(choice), version)


def _sets_plugin_faults(scenario: Scenario) -> bool:
    """Whether a driver of ``scenario`` gets plugin fault rules (from the start or by a step)."""
    if any(spec.fake is not None and spec.fake.faults for spec in scenario.spec.all_drivers()):
        return True
    return any(
        step.name == "fault" and getattr(step.args, "plugin", None) is not None
        for step in walk_steps(scenario.spec.steps)
    )


def _driver_capabilities(options: RunOptions) -> tuple[str, ...]:
    declared = tuple(c for c in options.capabilities if c != PROXY_CAPABILITY)
    return (*declared, PROXY_CAPABILITY) if options.driver_cmd and options.proxy else declared


def _served_resource_versions(scenario: Scenario, version: KubeletVersion) -> list[str]:
    """resource.k8s.io versions to serve: the scenario's, plus (when it kept the default) the
    versions its kubelets read claims through, as a cluster of that release serves them."""
    versions: list[str] = list(scenario.spec.api_server.resource_api_versions)
    if versions != ApiServerSpec().resource_api_versions:
        return versions
    needed = [version.resource_api_version]
    needed += [version_profile(v).resource_api_version for v in _restart_versions(scenario)]
    return versions + [v for v in dict.fromkeys(needed) if v not in versions]


def _restart_versions(scenario: Scenario) -> list[str]:
    """Every ``version`` of a restartKubelet/startKubelet step (also nested ones), in order."""
    versions = (getattr(step.args, "version", None) for step in walk_steps(scenario.spec.steps))
    return [v for v in versions if isinstance(v, str) and v]
