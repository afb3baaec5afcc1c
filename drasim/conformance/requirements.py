"""What a scenario needs from the driver under test, and why a scenario is skipped.

drasim's fake plugin can do things no real driver can be asked to do (inject faults,
switch bugs on, report a device unhealthy on command, journal the calls it serves).
A scenario that relies on one of them cannot run against a real driver binary; a
scenario that exercises an optional DRA feature (the health service) can only run
against a driver that implements it. Like csi-sanity's capability checks, such
scenarios are skipped with a reason that names the capability and where the
scenario needs it, instead of failing.

Capabilities:

``health``
    The driver serves ``v1alpha1.DRAResourceHealth`` (KEP-4680 device health).
``proxy``
    Plugin fault rules (``fault`` steps, a fake driver's ``faults``, ``unblock``) and a journal of
    the calls the driver serves. The fake plugin does both; for a driver command drasim's proxy
    (:mod:`drasim.proxy`) does them on the wire, and the runner grants it whenever the proxy is
    on (``--no-proxy`` takes it away).
``fake-plugin``
    drasim's fake plugin's insides: bugs, ``setDeviceHealth`` (the health a driver reports is
    its own), fake-only driver settings (its devices by name, services, socket layout).
    Never available when a driver command runs in place of the fake plugin.

A scenario may also name capabilities itself with tags ``requires:<capability>``
(for example ``requires:health`` or ``requires:admin-access``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

from drasim.faults import PROXY_CAPABILITY
from drasim.scenario.common import DEFAULT_SERVICES
from drasim.scenario.registry import STEP_TYPES, Step, walk_steps
from drasim.scenario.schema import FakeDriverSpec, Scenario

HEALTH = "health"
FAKE_PLUGIN = "fake-plugin"
PROXY = PROXY_CAPABILITY
KNOWN_CAPABILITIES: dict[str, str] = {
    HEALTH: "the driver serves the v1alpha1.DRAResourceHealth service (NodeWatchResources)",
    PROXY: "plugin fault rules and a journal of the calls the driver serves (fake plugin or drasim's proxy)",
    FAKE_PLUGIN: "drasim's built-in fake plugin (fault injection, bugs, call journal); never a real driver",
}
REQUIRES_TAG = "requires:"
CAPABILITY_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
# Calls only the fake plugin's own journal can count: none any more. The kubelet side journals
# GetInfo and NotifyRegistrationStatus (drasim.plugins.registration) and the NodeWatchResources
# streams it opens (drasim.plugins.health), so those are counted with any driver.
_PLUGIN_SIDE_METHODS: dict[str, str] = {}
_HEALTH_METHODS = {"node_watch_resources": "NodeWatchResources"}


@dataclass(frozen=True)
class Requirement:
    """One capability a scenario needs, and where/why (``uses setDeviceHealth at f.yaml:12``)."""

    capability: str
    reason: str


def scenario_requirements(scenario: Scenario) -> list[Requirement]:
    """Every capability ``scenario`` needs from its (first) driver, in order, without duplicates."""
    found: list[Requirement] = []
    for tag in scenario.metadata.tags:
        if tag.startswith(REQUIRES_TAG):
            cap = tag[len(REQUIRES_TAG) :].strip()
            found.append(Requirement(cap, f"tagged {tag!r}"))
    drivers = scenario.spec.all_drivers()
    first = drivers[0] if drivers else None
    first_name = first.name if first is not None else ""
    if first is not None and first.fake is not None:
        found += _fake_spec_requirements(first.fake)
    for step in walk_steps(scenario.spec.steps):
        found += _step_requirements(step, first_name)
        if step.name == "expectResourceSlices" and first is not None and first.fake is not None:
            found += _device_count_requirements(first.fake, step)
    unique: dict[str, Requirement] = {}
    for req in found:
        unique.setdefault(req.capability, req)
    return list(unique.values())


def missing_requirements(scenario: Scenario, capabilities: Iterable[str]) -> list[Requirement]:
    """The requirements of ``scenario`` that ``capabilities`` do not cover."""
    have = set(capabilities)
    return [req for req in scenario_requirements(scenario) if req.capability not in have]


def skip_reason(missing: list[Requirement], driver: str = "the driver") -> str:
    """``driver lacks capability 'health' (uses setDeviceHealth at f.yaml:12); ...``."""
    parts = [f"{driver} lacks capability {req.capability!r} ({req.reason})" for req in missing]
    return "; ".join(parts)


def real_driver_skip_reason(
    scenario: Scenario, capabilities: Iterable[str] = (), *, fake: bool = False
) -> str:
    """Why ``scenario`` cannot run against a real driver with ``capabilities`` ('' when it can).

    ``fake-plugin`` is never granted, whatever ``capabilities`` says. Meant for a runner
    that replaces the fake plugin with ``--driver-cmd``; it adds ``proxy`` when its proxy is on.
    With ``fake``, the driver is drasim's fake plugin: it has every capability drasim knows
    (:data:`KNOWN_CAPABILITIES`) and no other, so only a scenario's own ``requires:<name>`` tags
    can skip it (as the pytest plugin skips it).
    """
    if fake:
        missing = missing_requirements(scenario, KNOWN_CAPABILITIES)
        return skip_reason(missing, "the fake plugin") if missing else ""
    caps = {c for c in capabilities if c != FAKE_PLUGIN}
    missing = missing_requirements(scenario, caps)
    return skip_reason(missing, "real driver") if missing else ""


def check_capability_names(names: Iterable[str]) -> list[str]:
    """Names that are not valid capability names (lowercase letters, digits, '-' and '.')."""
    return [name for name in names if not CAPABILITY_NAME.match(name)]


def _fake_spec_requirements(fake: FakeDriverSpec) -> list[Requirement]:
    found: list[Requirement] = []
    # What the kubelet sees of the driver on the wire: the proxy presents it.
    wire = [
        ("plugin fault rules (faults)", bool(fake.faults)),
        ("advertised services", list(fake.services) != list(DEFAULT_SERVICES)),
        ("DRA socket next to its registration socket (commonSocket)", fake.common_socket),
        ("rolling-update socket names (rollingUpdateUID)", bool(fake.rolling_update_uid)),
    ]
    for label, used in wire:
        if used:
            found.append(Requirement(PROXY, f"gives the driver {label}"))
    # The driver's insides: no proxy can make a real driver do these.
    settings = [
        ("bugs", bool(fake.bugs)),
        ("behaviour", bool(fake.behaviour)),
        ("devices (a list of names)", isinstance(fake.devices, list)),
    ]
    for label, used in settings:
        if used:
            found.append(Requirement(FAKE_PLUGIN, f"configures the fake plugin's {label}"))
    if fake.health:
        reason = "the scenario needs a driver that serves the DRAResourceHealth service (health: true)"
        found.append(Requirement(HEALTH, reason))
    return found


def _device_count_requirements(fake: FakeDriverSpec, step: Step) -> list[Requirement]:
    """A fake driver's own device count, counted in its slices: a real driver has its own."""
    default = next(f.default for f in dataclasses.fields(FakeDriverSpec) if f.name == "devices")
    if (
        not isinstance(fake.devices, int)
        or fake.devices == default
        or not getattr(step.args, "devices", None)
    ):
        return []
    where = f"{step.name} at {step.location}" if step.file else step.name
    reason = f"counts the {fake.devices} devices of the fake plugin; a real driver has its own ({where})"
    return [Requirement(FAKE_PLUGIN, reason)]


def _step_requirements(step: Step, first_driver: str) -> list[Requirement]:
    where = f"{step.name} at {step.location}" if step.file else step.name
    args = step.args
    found: list[Requirement] = []

    def targets_first(driver: str) -> bool:
        return not driver or driver == first_driver

    if targets_first(getattr(args, "driver", "")):  # the step's declared needs (@step(needs=...))
        found += [Requirement(cap, reason.format(where=where)) for cap, reason in STEP_TYPES[step.name].needs]
    if step.name == "fault":
        plugin = getattr(args, "plugin", None)
        if plugin is not None and targets_first(plugin.driver):
            found.append(Requirement(PROXY, f"injects a plugin fault ({where})"))
    elif step.name == "allocate" and getattr(args, "devices", None):
        names = ", ".join(str(getattr(d, "device", d)) for d in args.devices)  # type: ignore[attr-defined]
        reason = f"allocates the fake plugin's devices by name: {names} ({where})"
        found.append(Requirement(FAKE_PLUGIN, reason))
    elif step.name == "expectCalls":
        found += _call_count_requirements(args, where)
    return found


def _call_count_requirements(args: object, where: str) -> list[Requirement]:
    methods = [label for attr, label in _PLUGIN_SIDE_METHODS.items() if getattr(args, attr, None) is not None]
    for call in getattr(args, "calls", None) or []:
        method = str(getattr(call, "method", ""))
        if method in _PLUGIN_SIDE_METHODS.values() and method not in methods:
            methods.append(method)
    found: list[Requirement] = []
    if methods:
        shown = ", ".join(methods)
        found.append(
            Requirement(PROXY, f"counts {shown} calls, which the fake plugin or the proxy journals ({where})")
        )
    calls = getattr(args, "calls", None) or []
    expects_streams = any(getattr(args, attr, None) is not None for attr in _HEALTH_METHODS) or any(
        str(getattr(call, "method", "")) in _HEALTH_METHODS.values() for call in calls
    )
    if expects_streams:
        found.append(Requirement(HEALTH, f"expects NodeWatchResources calls ({where})"))
    return found
