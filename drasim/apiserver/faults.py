"""Fault injection for the fake API server: latency, error answers and dropped watches.

The rules are :class:`drasim.faults.ApiFault` values, the one fault vocabulary that scenarios
write and scenario validation checks (with :func:`drasim.faults.api_fault_problem`, which the
injector asks too). A rule matches requests by verb, resource (plural, kind or singular name),
subresource, namespace, name and client; unset fields match anything. It fires ``times`` times
(0: always) after letting ``after`` matching requests through.

The admin endpoint of the HTTP face (``POST /drasim/faults``) and tests write rules as JSON
objects in the API server's own keys; :func:`decode_fault` builds the typed rule from one::

    {resource: resourceclaims, verb: get, name: gpu, code: 503, times: 2}
    {resource: resourceslices, verb: watch, dropWatch: true, afterEvents: 1}
    {verb: get, latency: 0.2, always: true}

There ``times`` defaults to 1 (``once``), ``always: true`` means every matching request and
``latency`` is in real seconds. The same faults apply to the in-process face and to the HTTP
face, because both go through :func:`drasim.apiserver.calls.guarded`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drasim.apiserver.kinds import ResourceType
from drasim.apiserver.status import StatusError, generic
from drasim.errors import ConfigError
from drasim.faults import CLIENT_KINDS, ApiFault, api_fault_problem, api_resource, client_kind

__all__ = ["CLIENT_KINDS", "ApiFault", "FaultInjector", "client_kind", "decode_fault", "fault_error"]

_WIRE_KEYS: dict[str, str] = {
    "resource": "resource",
    "verb": "verb",
    "name": "name",
    "namespace": "namespace",
    "subresource": "subresource",
    "code": "code",
    "message": "message",
    "latency": "delay",
    "dropWatch": "drop_watches",
    "afterEvents": "after_events",
    "times": "times",
    "client": "client",
    "after": "after",
}
"""The admin endpoint's JSON keys -> :class:`ApiFault` fields (plus ``once`` and ``always``)."""

_KEYS = (*_WIRE_KEYS, "once", "always")


def decode_fault(spec: Mapping[str, Any]) -> ApiFault:
    """The rule a JSON object (the API server's keys) describes; bad input is a ConfigError."""
    unknown = sorted(set(spec) - set(_KEYS))
    if unknown:
        raise ConfigError(f"fault: unknown field(s) {unknown}; valid fields: {', '.join(_KEYS)}")
    times = 0 if "times" in spec and spec["times"] is None else _int(spec, "times", 1)  # null: always
    if "times" in spec and spec["times"] is not None and times < 1:
        raise ConfigError(f"fault times: must be >= 1, got {times}")
    if spec.get("always"):
        times = 0
    elif spec.get("once"):
        times = 1
    values: dict[str, Any] = {
        "verb": _str(spec, "verb") or "any",
        "client": _str(spec, "client") or "any",
        "code": _int(spec, "code", 0),
        "delay": _num(spec, "latency"),
        "drop_watches": bool(spec.get("dropWatch", False)),
        "after_events": _int(spec, "afterEvents", 0),
        "after": _int(spec, "after", 0),
        "times": times,
    }
    for key in ("resource", "name", "namespace", "subresource", "message"):
        values[_WIRE_KEYS[key]] = _str(spec, key) or ""
    fault = ApiFault(**values)
    problem = api_fault_problem(fault)
    if problem:
        raise ConfigError(problem)
    return fault


def _str(spec: Mapping[str, Any], key: str) -> str | None:
    value = spec.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"fault {key}: expected a string, got {value!r}")
    return value


def _int(spec: Mapping[str, Any], key: str, default: int) -> int:
    value = spec.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"fault {key}: expected an integer, got {value!r}")
    return value


def _num(spec: Mapping[str, Any], key: str) -> float:
    value = spec.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"fault {key}: expected a number of seconds, got {value!r}")
    return float(value)


def matches(
    fault: ApiFault,
    verb: str,
    rtype: ResourceType,
    *,
    namespace: str,
    name: str,
    subresource: str,
    client: str,
) -> bool:
    """Whether ``fault`` applies to a request (whatever it fired already)."""
    if fault.client != "any" and client_kind(client) != fault.client:
        return False
    checks = (
        (fault.verb if fault.verb != "any" else "", verb),
        (fault.resource, rtype.resource),
        (fault.namespace, namespace),
        (fault.name, name),
        (fault.subresource, subresource),
    )
    return all(not want or want == got for want, got in checks)


def fault_error(fault: ApiFault, verb: str, rtype: ResourceType, name: str) -> StatusError | None:
    """The error ``fault`` answers with, if any."""
    if not fault.code:
        return None
    message = fault.message or f"injected fault: {verb} {rtype.qualified} {name}".rstrip()
    return generic(fault.code, message)


def watch_drop_after(fault: ApiFault | None) -> int | None:
    """After how many events a watch that ``fault`` hit is dropped (``None``: it is not)."""
    return fault.after_events if fault is not None and fault.drop_watches else None


@dataclass
class _Armed:
    """An installed rule and its counters."""

    rule: ApiFault
    seen: int = 0
    fired: int = 0


class FaultInjector:
    """The ordered list of active rules; the first matching one fires. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: list[_Armed] = []

    def add(self, fault: ApiFault) -> ApiFault:
        """Install a rule after the others and return it as installed (its resource a plural).

        A rule the API server cannot apply (:func:`drasim.faults.api_fault_problem`) is a
        ConfigError.
        """
        problem = api_fault_problem(fault)
        if problem:
            raise ConfigError(problem)
        if fault.resource:
            fault = dataclasses.replace(fault, resource=api_resource(fault.resource) or fault.resource)
        with self._lock:
            self._armed.append(_Armed(fault))
        return fault

    def clear(self) -> None:
        """Remove every rule."""
        with self._lock:
            self._armed.clear()

    @property
    def faults(self) -> list[ApiFault]:
        """A snapshot of the active rules."""
        with self._lock:
            return [armed.rule for armed in self._armed]

    def take(
        self,
        verb: str,
        rtype: ResourceType,
        namespace: str,
        name: str,
        subresource: str = "",
        *,
        client: str = "",
    ) -> ApiFault | None:
        """Find the first matching rule, count it as fired, and retire it once used up.

        A rule with ``after: N`` lets its first N matching requests through untouched.
        """
        with self._lock:
            for armed in self._armed:
                if matches(
                    armed.rule,
                    verb,
                    rtype,
                    namespace=namespace,
                    name=name,
                    subresource=subresource,
                    client=client,
                ):
                    armed.seen += 1
                    if armed.seen <= armed.rule.after:
                        continue
                    armed.fired += 1
                    if armed.rule.times and armed.fired >= armed.rule.times:
                        self._armed.remove(armed)
                    return armed.rule
        return None
