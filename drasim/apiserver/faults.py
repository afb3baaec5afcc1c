"""Fault injection for the fake API server: latency, error answers and dropped watches.

A fault matches requests by verb, resource (plural, kind or singular name),
subresource, namespace and name; unset fields match anything. It fires ``once``
(the default), ``times: N`` or ``always``. Scenarios write faults as plain dicts::

    {resource: resourceclaims, verb: get, name: gpu, code: 503, times: 2}
    {resource: resourceslices, verb: watch, dropWatch: true, afterEvents: 1}
    {verb: get, latency: 0.2, always: true}

The same faults apply to the in-process face and to the HTTP face, because both go
through :func:`drasim.apiserver.calls.guarded`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drasim.apiserver.kinds import ALL_VERBS, RESOURCE_TYPES, ResourceType
from drasim.apiserver.status import REASONS, StatusError, generic
from drasim.errors import ConfigError

_KEYS = (
    "resource",
    "verb",
    "name",
    "namespace",
    "subresource",
    "code",
    "message",
    "latency",
    "dropWatch",
    "afterEvents",
    "times",
    "once",
    "always",
    "client",
    "after",
)
#: Who a fault may be aimed at. In-process faces name their client ("kubelet", "runner",
#: "driver"); every other client (an HTTP user agent) is a driver under test.
CLIENT_KINDS = ("kubelet", "runner", "driver")


def client_kind(client: str) -> str:
    """The kind of client behind a journal ``client`` name."""
    return client if client in CLIENT_KINDS else "driver"


_CODES = tuple(sorted(c for c in REASONS if c >= 400))


def _resource_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for rtype in RESOURCE_TYPES:
        for alias in (rtype.resource, rtype.kind, rtype.kind.lower(), rtype.singular):
            names[alias] = rtype.resource
    return names


_RESOURCE_NAMES = _resource_names()


@dataclass
class StoreFault:
    """One fault rule of the object store (a scenario's ``ApiFault``, translated); ``times=None``: always."""

    verb: str | None = None
    resource: str | None = None
    name: str | None = None
    namespace: str | None = None
    subresource: str | None = None
    code: int | None = None
    message: str = ""
    latency: float = 0.0
    drop_watch: bool = False
    after_events: int = 0
    times: int | None = 1
    client: str | None = None
    after: int = 0
    fired: int = field(default=0)
    seen: int = field(default=0)

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:
        if self.verb is not None and self.verb not in ALL_VERBS:
            raise ConfigError(f"fault verb: {self.verb!r} is not a verb; valid verbs: {', '.join(ALL_VERBS)}")
        if self.resource is not None:
            plural = _RESOURCE_NAMES.get(self.resource)
            if plural is None:
                valid = ", ".join(t.resource for t in RESOURCE_TYPES)
                raise ConfigError(
                    f"fault resource: {self.resource!r} is not served; valid resources: {valid}"
                )
            self.resource = plural
        if self.code is not None and self.code not in _CODES:
            raise ConfigError(f"fault code: {self.code!r} is not supported; valid codes: {list(_CODES)}")
        if self.latency < 0:
            raise ConfigError(f"fault latency: must be >= 0 seconds, got {self.latency}")
        if self.times is not None and self.times < 1:
            raise ConfigError(f"fault times: must be >= 1, got {self.times}")
        if self.code is None and not self.drop_watch and self.latency == 0:
            raise ConfigError("fault: needs at least one of code, latency or dropWatch")
        if self.client is not None and self.client not in CLIENT_KINDS:
            raise ConfigError(f"fault client: {self.client!r} is not one of {', '.join(CLIENT_KINDS)}")
        if self.after < 0:
            raise ConfigError(f"fault after: must be >= 0, got {self.after}")
        if self.drop_watch and self.verb not in (None, "watch"):
            raise ConfigError(f"fault dropWatch: only applies to verb 'watch', not {self.verb!r}")

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> StoreFault:
        """Build a fault from a scenario's plain dict (camelCase keys); bad input is a ConfigError."""
        unknown = sorted(set(spec) - set(_KEYS))
        if unknown:
            raise ConfigError(f"fault: unknown field(s) {unknown}; valid fields: {', '.join(_KEYS)}")
        times: int | None = _int(spec, "times", 1)
        if spec.get("always"):
            times = None
        elif spec.get("once"):
            times = 1
        return cls(
            verb=_str(spec, "verb"),
            resource=_str(spec, "resource"),
            name=_str(spec, "name"),
            namespace=_str(spec, "namespace"),
            subresource=_str(spec, "subresource"),
            code=_int(spec, "code", None),
            message=_str(spec, "message") or "",
            latency=float(_num(spec, "latency")),
            drop_watch=bool(spec.get("dropWatch", False)),
            after_events=_int(spec, "afterEvents", 0) or 0,
            times=times,
            client=_str(spec, "client"),
            after=_int(spec, "after", 0) or 0,
        )

    def matches(
        self,
        verb: str,
        rtype: ResourceType,
        namespace: str,
        name: str,
        subresource: str,
        *,
        client: str = "",
    ) -> bool:
        """Whether this fault applies to a request (ignores how often it already fired)."""
        if self.client is not None and client_kind(client) != self.client:
            return False
        checks = (
            (self.verb, verb),
            (self.resource, rtype.resource),
            (self.namespace, namespace),
            (self.name, name),
            (self.subresource, subresource),
        )
        return all(want is None or want == got for want, got in checks)

    def error(self, verb: str, rtype: ResourceType, name: str) -> StatusError | None:
        """The error this fault answers with, if any."""
        if self.code is None:
            return None
        message = self.message or f"injected fault: {verb} {rtype.qualified} {name}".rstrip()
        return generic(self.code, message)


def _str(spec: Mapping[str, Any], key: str) -> str | None:
    value = spec.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"fault {key}: expected a string, got {value!r}")
    return value


def _int(spec: Mapping[str, Any], key: str, default: int | None) -> int | None:
    value = spec.get(key, default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"fault {key}: expected an integer, got {value!r}")
    return value


def _num(spec: Mapping[str, Any], key: str) -> float:
    value = spec.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"fault {key}: expected a number of seconds, got {value!r}")
    return float(value)


class FaultInjector:
    """The ordered list of active faults; the first matching one fires. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[StoreFault] = []

    def add(self, fault: StoreFault | Mapping[str, Any]) -> StoreFault:
        """Add a fault (an :class:`StoreFault` or a scenario dict) and return it."""
        item = fault if isinstance(fault, StoreFault) else StoreFault.from_dict(fault)
        with self._lock:
            self._faults.append(item)
        return item

    def clear(self) -> None:
        """Remove every fault."""
        with self._lock:
            self._faults.clear()

    @property
    def faults(self) -> list[StoreFault]:
        """A snapshot of the active faults."""
        with self._lock:
            return list(self._faults)

    def take(
        self,
        verb: str,
        rtype: ResourceType,
        namespace: str,
        name: str,
        subresource: str = "",
        *,
        client: str = "",
    ) -> StoreFault | None:
        """Find the first matching fault, count it as fired, and retire it once used up.

        A fault with ``after: N`` lets its first N matching requests through untouched.
        """
        with self._lock:
            for fault in self._faults:
                if fault.matches(verb, rtype, namespace, name, subresource, client=client):
                    fault.seen += 1
                    if fault.seen <= fault.after:
                        continue
                    fault.fired += 1
                    if fault.times is not None and fault.fired >= fault.times:
                        self._faults.remove(fault)
                    return fault
        return None


def api_fault_spec(fault: Any, time_scale: float) -> dict[str, Any]:
    """A scenario ``ApiFault`` rule as :meth:`StoreFault.from_dict` spells it.

    ``fault`` is duck-typed (``drasim.scenario.common.ApiFault``), so the API server does not
    depend on the scenario layer; scenario validation and the runner both use this one mapping.
    """
    spec: dict[str, Any] = {}
    if fault.client != "any":
        spec["client"] = fault.client
    if fault.after:
        spec["after"] = fault.after
    if fault.verb != "any":
        spec["verb"] = fault.verb
    if fault.resource:
        spec["resource"] = fault.resource
    if fault.name:
        spec["name"] = fault.name
    if fault.code:
        spec["code"] = fault.code
    if fault.message:
        spec["message"] = fault.message
    if fault.delay and time_scale:
        spec["latency"] = fault.delay * time_scale
    if fault.drop_watches:
        spec["dropWatch"] = True
    spec["times"] = fault.times if fault.times else None
    return spec
