"""Kubelet version profiles: what the DRA manager of each kubelet minor does differently.

PURE: plain data, no I/O. One frozen :class:`KubeletVersion` per minor release, 1.31 to
1.37, describing the newest patch release of that minor. The kubelet core, the checkpoint
store, the plugin manager and the runner read the profile they are given; nothing else
switches on a version number. The default (:data:`DEFAULT_VERSION`) is the newest profile,
which is what drasim emulated before profiles existed, so runs without a version behave
exactly as before.

Each field names the upstream change that introduced the difference; docs/kubelet-fidelity.md
("Kubelet versions") lists the same table with links. Service names are the strings a plugin
advertises in ``PluginInfo.supported_versions``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

# Service names come from the one table of plugin API versions.
from drasim.apiversions import DRA_V1, DRA_V1ALPHA4, DRA_V1BETA1, HEALTH_V1, HEALTH_V1ALPHA1

__all__ = [
    "DEFAULT_VERSION",
    "PROFILES",
    "VERSIONS",
    "KubeletVersion",
    "VersionError",
    "allowed_versions",
    "check_constraint",
    "parse_version_list",
    "profile",
]


ServiceChoice = Literal["semver", "kubelet-preference", "plugin-order"]
DeviceMerge = Literal["append", "replace"]
SliceWiping = Literal["on-deregistration", "after-last-deregistration", "after-last-disconnect"]


class VersionError(ValueError):
    """A kubelet version or version constraint that drasim does not know."""


@dataclass(frozen=True)
class KubeletVersion:
    """The behaviours of one kubelet minor release that a DRA driver can observe."""

    version: str
    """``"1.34"``: the minor release (its newest patch)."""
    dra_services: tuple[str, ...]
    """DRA plugin services the kubelet can call, in the kubelet's preference order.
    1.31: v1alpha4 only (kubernetes/kubernetes#125488 "DRA for 1.31", which also removed v1alpha2 with
    #124316); 1.32: v1beta1 added, v1alpha4 kept (#127511, #128646); 1.34: v1 added (#132700) and
    v1alpha4 removed (#132574)."""
    service_choice: ServiceChoice
    """How registration picks one service from the plugin's list. ``semver`` (1.31): the list holds
    version strings and the highest one with major version 1 means v1alpha4. ``kubelet-preference``
    (1.32-1.33, plugin/registration.go): the first of the kubelet's services the plugin lists; a list
    naming none of them (e.g. the legacy ``"1.0.0"``) falls back to v1alpha4; only an empty list fails.
    ``plugin-order`` (1.34+, dra_plugin_manager.go ``validateSupportedServices``): the first entry of
    the plugin's list the kubelet supports; none is an error."""
    health_services: tuple[str, ...]
    """Device-health services the kubelet opens a ``NodeWatchResources`` stream on, preferred
    first; empty before 1.34 (KEP-4680, kubernetes/kubernetes#130606 added v1alpha1 in 1.34; the 1.37
    kubelet prefers dra-health v1, #139477). The ``ResourceHealthStatus`` gate was alpha (off by
    default) in 1.34-1.35 and beta (on) from 1.36; the 1.34 and 1.35 profiles assume it is enabled."""
    health_needs_advertisement: bool
    """1.37 (#139477) opens the health stream only for plugins that advertise a health service and
    stops on ``Unimplemented``; 1.34-1.36 open v1alpha1 for every registered plugin and retry every
    5 s whatever the answer."""
    per_device_health_timeout: bool
    """``DeviceHealth.health_check_timeout_seconds`` is honoured (1.35, #135147); before, every
    report goes stale after the default 30 s."""
    health_message: bool
    """``DeviceHealth.message`` is kept and shown (1.36, #135196, gate ResourceHealthStatusMessage)."""
    device_merge: DeviceMerge
    """What a successful NodePrepareResources reply does to the claim's devices of that driver:
    ``append`` (up to 1.36) or ``replace`` (kubernetes/kubernetes#140274 ``resetDevices``, 1.37).
    The cherry-picks #140953 (1.34), #140954 (1.35) and #140955 (1.36) are in none of the newest
    patches the module proxy serves: v1.34.4, v1.35.4 and v1.36.3 pkg/kubelet/cm/dra/manager.go
    append each reply's devices with ``info.addDevice`` and have no ``resetDevices`` (measured with
    ``drasim diff --release 1.34 --release 1.35 --release 1.36``, docs/kubelet-fidelity.md)."""
    checkpoint_share_id: bool
    """``dra_manager_state`` devices carry the ``ShareID`` key (1.35, consumable capacity, KEP-5075).
    Older kubelets write no such key and drop it when they read a newer file."""
    operation_is_error_inverted: bool
    """``dra_operations_duration_seconds`` labels a success ``is_error="true"`` and a failure
    ``"false"``: v1.34.4 and v1.35.4 pkg/kubelet/cm/dra/manager.go PrepareResources and
    UnprepareResources pass ``strconv.FormatBool(err == nil)``; v1.36.3 passes ``isError``
    (``err != nil``). Measured with ``drasim diff``; 1.31-1.33 are not served, so unverified
    (drasim keeps the intended labels there)."""
    unprepare_names_from_cache: bool
    """UnprepareResources takes claim names from the claim-info cache first (1.37,
    kubernetes/kubernetes#139845 for #139772); older kubelets derive them from the pod only."""
    resource_api_version: str
    """The ``resource.k8s.io`` version the kubelet GETs ResourceClaims through: v1alpha3 (1.31),
    v1beta1 (1.32-1.33), v1 (1.34+, DRA GA)."""
    slice_wiping: SliceWiping
    """When the kubelet deletes a driver's ResourceSlices of this node: at once when the plugin
    deregisters (1.31, plugin/plugin.go), ``wipingDelay`` after the last instance deregistered
    (1.32-1.33, plugin/registration.go), or ``wipingDelay`` after the last instance lost its
    connection (1.34+, ``DRAPluginManager`` with connection tracking)."""

    @property
    def minor(self) -> int:
        """The minor number (34 for ``"1.34"``)."""
        return int(self.version.split(".")[1])

    def supports_service(self, service: str) -> bool:
        """Whether the kubelet can call this DRA service."""
        return service in self.dra_services

    def choose_service(self, advertised: Sequence[str], allowed: Sequence[str] | None = None) -> str:
        """The service this kubelet uses for a plugin advertising ``advertised`` (raises ValueError).

        ``allowed`` narrows the kubelet's own services (a scenario's ``kubelet.services``).
        Error texts follow upstream where known; see docs/kubelet-fidelity.md.
        """
        kubelet = [s for s in self.dra_services if allowed is None or s in allowed]
        if self.service_choice == "semver":
            return _semver_choice(advertised, kubelet)
        if not advertised:
            raise ValueError("empty list of supported gRPC services (aka supported versions)")
        if self.service_choice == "plugin-order":  # the plugin's order decides
            chosen = next((s for s in advertised if s in kubelet), None)
        else:  # the kubelet's order decides; nothing known falls back to v1alpha4
            fallback = DRA_V1ALPHA4 if DRA_V1ALPHA4 in kubelet else None
            chosen = next((s for s in kubelet if s in advertised), fallback)
        if chosen is None:
            raise ValueError(
                f"none of services supported by the plugin ({_go_quote(advertised)}) "
                f"are supported by the kubelet ({_go_quote(kubelet)})"
            )
        return chosen


def _go_quote(items: Sequence[str]) -> str:
    return "[" + " ".join('"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"' for s in items) + "]"


_GENERIC = re.compile(r"^\s*v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?")


def _semver_choice(advertised: Sequence[str], kubelet: Sequence[str]) -> str:
    """1.31 ``highestSupportedVersion`` (plugin/plugin.go): the highest 1.x of the version strings.

    Entries that do not parse as generic versions (``ParseGeneric``: two or more numeric fields)
    and versions above 1.x are skipped; with none left registration fails. Any 1.x means v1alpha4.
    """
    if not advertised:
        raise ValueError("empty array for supported versions")
    best: tuple[int, int, int] | None = None
    last_error = "<nil>"
    for item in reversed(advertised):
        match = _GENERIC.match(item)
        if match is None:
            last_error = f'could not parse "{item}" as version'
            continue
        parsed = (int(match[1]), int(match[2]), int(match[3] or 0))
        if parsed[0] > 1:
            continue
        if best is None or parsed > best:
            best = parsed
    if best is None:
        raise ValueError(
            "could not find a highest supported version from versions "
            f"([{' '.join(advertised)}]) reported by this plugin: {last_error}"
        )
    if best[0] != 1:
        raise ValueError(
            f"highest supported version reported by plugin is {best[0]}.{best[1]}.{best[2]}, must be v1.x"
        )
    if DRA_V1ALPHA4 not in kubelet:
        raise ValueError(f"the kubelet's services ({_go_quote(kubelet)}) do not include v1alpha4")
    return DRA_V1ALPHA4


def _v(
    version: str,
    *,
    services: tuple[str, ...],
    choice: ServiceChoice,
    health: tuple[str, ...],
    merge: DeviceMerge,
    api: str,
    wiping: SliceWiping,
) -> KubeletVersion:
    minor = int(version.split(".")[1])
    return KubeletVersion(
        version=version,
        dra_services=services,
        service_choice=choice,
        health_services=health,
        health_needs_advertisement=minor >= 37,
        per_device_health_timeout=minor >= 35,
        health_message=minor >= 36,
        device_merge=merge,
        checkpoint_share_id=minor >= 35,
        operation_is_error_inverted=minor in (34, 35),
        unprepare_names_from_cache=minor >= 37,
        resource_api_version=api,
        slice_wiping=wiping,
    )


_ALPHA4_ONLY = (DRA_V1ALPHA4,)
_BETA = (DRA_V1BETA1, DRA_V1ALPHA4)
_GA = (DRA_V1, DRA_V1BETA1)
_H1 = (HEALTH_V1ALPHA1,)

#: Every profile, oldest first.
PROFILES: tuple[KubeletVersion, ...] = (
    _v("1.31", services=_ALPHA4_ONLY, choice="semver", health=(), merge="append", api="v1alpha3",
       wiping="on-deregistration"),
    _v("1.32", services=_BETA, choice="kubelet-preference", health=(), merge="append", api="v1beta1",
       wiping="after-last-deregistration"),
    _v("1.33", services=_BETA, choice="kubelet-preference", health=(), merge="append", api="v1beta1",
       wiping="after-last-deregistration"),
    _v("1.34", services=_GA, choice="plugin-order", health=_H1, merge="append", api="v1",
       wiping="after-last-disconnect"),
    _v("1.35", services=_GA, choice="plugin-order", health=_H1, merge="append", api="v1",
       wiping="after-last-disconnect"),
    _v("1.36", services=_GA, choice="plugin-order", health=_H1, merge="append", api="v1",
       wiping="after-last-disconnect"),
    _v("1.37", services=_GA, choice="plugin-order", health=(HEALTH_V1, HEALTH_V1ALPHA1), merge="replace",
       api="v1", wiping="after-last-disconnect"),
)  # fmt: skip

VERSIONS: tuple[str, ...] = tuple(p.version for p in PROFILES)
DEFAULT_VERSION = VERSIONS[-1]
_BY_VERSION = {p.version: p for p in PROFILES}


def profile(version: str | None = None) -> KubeletVersion:
    """The profile of ``version`` (``"1.34"``; ``"v1.34"`` and ``"1.34.2"`` work too); default: newest."""
    if version is None:
        return _BY_VERSION[DEFAULT_VERSION]
    return _BY_VERSION[_normalize(version)]


def _normalize(version: str) -> str:
    text = str(version).strip()
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.\d+)?$", text)
    if match is None or f"{match[1]}.{match[2]}" not in _BY_VERSION:
        raise VersionError(f"unknown kubelet version {text!r}; known versions: {', '.join(VERSIONS)}")
    return f"{match[1]}.{match[2]}"


_CONSTRAINT = re.compile(r"^(>=|<=|>|<|==)?\s*(\S+)$")


def check_constraint(constraint: str) -> None:
    """Raise :class:`VersionError` unless ``constraint`` is ``1.34``, ``>=1.34``, ``<1.35`` and so on."""
    match = _CONSTRAINT.match(str(constraint).strip())
    try:
        if match is None:
            raise VersionError(constraint)
        _normalize(match[2])
    except VersionError:
        raise VersionError(
            f"invalid kubelet version constraint {constraint!r}; write a version (1.34) or a bound "
            f"(>=1.34, >1.33, <=1.35, <1.36) of the known versions: {', '.join(VERSIONS)}"
        ) from None


def _satisfies(version: str, constraint: str) -> bool:
    match = _CONSTRAINT.match(constraint.strip())
    assert match is not None
    op, bound = match[1] or "==", int(_normalize(match[2]).split(".")[1])
    minor = int(version.split(".")[1])
    return {
        "==": minor == bound,
        ">=": minor >= bound,
        ">": minor > bound,
        "<=": minor <= bound,
        "<": minor < bound,
    }[op]


def allowed_versions(constraints: Iterable[str]) -> tuple[str, ...]:
    """Versions that satisfy every constraint of a scenario's ``kubeletVersions`` (all when empty).

    Bounds combine (``[">=1.33", "<1.36"]``); several exact versions are alternatives
    (``["1.32", "1.33"]``).
    """
    items = [str(c).strip() for c in constraints]
    for item in items:
        check_constraint(item)
    exact = [c for c in items if _CONSTRAINT.match(c) and not _CONSTRAINT.match(c)[1]]  # type: ignore[index]
    bounds = [c for c in items if c not in exact]
    result = []
    for version in VERSIONS:
        if exact and not any(_satisfies(version, c) for c in exact):
            continue
        if all(_satisfies(version, c) for c in bounds):
            result.append(version)
    return tuple(result)


def parse_version_list(value: str) -> tuple[str, ...]:
    """The ``--kubelet-version`` value: ``1.34``, ``1.31,1.33,1.35`` or ``all`` (oldest first, no repeats)."""
    text = value.strip()
    if text == "all":
        return VERSIONS
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise VersionError(f"no kubelet version given; known versions: {', '.join(VERSIONS)}, or all")
    chosen = {_normalize(item) for item in items}
    return tuple(v for v in VERSIONS if v in chosen)
