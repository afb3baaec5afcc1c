"""The event kinds in use and their fields, plus one-line summaries for people.

Every event is a flat JSON object: ``seq`` (1..n), ``t`` (seconds since the
journal started), ``kind`` and the kind's fields below. Fields are optional: a
recorder leaves out what it does not know, and readers use ``.get``. Keys are
snake_case. docs/reports.md carries the same table with examples.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

STEP: Final = "step"
STEP_END: Final = "step-end"
RPC: Final = "rpc"
API: Final = "api"
CHECKPOINT: Final = "checkpoint"
REGISTRATION: Final = "registration"
KUBELET: Final = "kubelet"
PLUGIN_PROCESS: Final = "plugin-process"
FAULT: Final = "fault"
MERGE_ERROR: Final = "merge-error"
MARK: Final = "mark"
BACKEND: Final = "backend"

KIND_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    STEP: ("index", "name", "text"),
    STEP_END: ("index", "name", "outcome", "error"),
    RPC: ("side", "driver", "endpoint", "method", "request", "response", "code", "error", "duration"),
    API: ("verb", "resource", "namespace", "name", "code", "client", "duration"),
    CHECKPOINT: ("path", "entries", "size"),
    REGISTRATION: ("driver", "endpoint", "socket", "service", "outcome", "error"),
    KUBELET: ("operation", "pod", "pod_uid", "error", "duration"),
    PLUGIN_PROCESS: ("action", "driver", "pid", "returncode", "stdout_tail", "stderr_tail"),
    FAULT: ("where", "description", "spec"),
    MERGE_ERROR: ("source", "path", "line", "message"),
    MARK: ("name", "slices"),
    BACKEND: ("action", "object", "error"),
}
"""The documented fields of each kind (others may be added; readers ignore unknown ones)."""

RESERVED: Final = frozenset({"seq", "t", "kind"})
"""Keys the journal sets itself; a field with one of these names is stored as ``source_<name>``."""


def short_method(method: str) -> str:
    """``/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources`` -> ``NodePrepareResources``."""
    return method.rsplit("/", 1)[-1] if method else ""


def claim_labels(request: Any) -> list[str]:
    """``namespace/name`` of each claim in an RPC request (see :func:`drasim.journal.calls.claims_of`)."""
    from drasim.journal.calls import claims_of

    return [f"{c.namespace}/{c.name}" if c.namespace else c.name for c in claims_of(request)]


def _ms(duration: Any) -> str:
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        return f" ({duration * 1000:.1f}ms)"
    return ""


def _obj(namespace: Any, name: Any) -> str:
    if namespace and name:
        return f"{namespace}/{name}"
    return str(name or namespace or "")


def describe_event(event: Mapping[str, Any]) -> str:
    """One line for a person: ``#14 t=0.031 rpc NodePrepareResources ... -> OK``."""
    kind = str(event.get("kind", "?"))
    head = f"#{event.get('seq', '?')} t={_fmt_t(event.get('t'))} {kind}"
    body = _BODIES.get(kind, _generic)(event)
    return f"{head} {body}".rstrip()


def _fmt_t(t: Any) -> str:
    return f"{t:.3f}" if isinstance(t, int | float) else "?"


def _step(e: Mapping[str, Any]) -> str:
    return f"{e.get('index', '?')}: {e.get('text') or e.get('name', '')}"


def _step_end(e: Mapping[str, Any]) -> str:
    text = f"{e.get('index', '?')}: {e.get('name', '')} {e.get('outcome', '?')}"
    return text + (f" error={e['error']}" if e.get("error") else "")


def _rpc(e: Mapping[str, Any]) -> str:
    side = e.get("side", "")
    parts = [short_method(str(e.get("method", ""))), str(e.get("driver", ""))]
    if side and side != "kubelet":
        parts.append(f"[{side}]")
    claims = claim_labels(e.get("request"))
    if claims:
        parts.append("claims=[" + ", ".join(claims) + "]")
    result = f"-> {e.get('code', '?')}"
    if e.get("error") or e.get("details"):
        result += f" {e.get('error') or e.get('details')}"
    return " ".join(p for p in parts if p) + f" {result}{_ms(e.get('duration'))}"


def _api(e: Mapping[str, Any]) -> str:
    who = f"{e['client']}: " if e.get("client") else ""
    target = _obj(e.get("namespace"), e.get("name"))
    resource = "/".join(str(p) for p in (e.get("resource"), e.get("subresource")) if p)
    text = f"{who}{e.get('verb', '?')} {resource} {target}".rstrip()
    text += f" -> {e.get('code', '?')}"
    if e.get("error"):
        text += f" {e['error']}"
    return text + _ms(e.get("duration"))


def _checkpoint(e: Mapping[str, Any]) -> str:
    entries = e.get("entries")
    count = len(entries) if isinstance(entries, list) else entries
    return f"write {e.get('path', '')} entries={count} size={e.get('size', '?')}"


def _registration(e: Mapping[str, Any]) -> str:
    text = " ".join(str(e[k]) for k in ("driver", "service", "outcome") if e.get(k))
    return text + (f" error={e['error']}" if e.get("error") else "")


def _kubelet(e: Mapping[str, Any]) -> str:
    text = str(e.get("operation", ""))
    if e.get("pod") or e.get("pod_uid"):
        text += f" pod={e.get('pod') or e.get('pod_uid')}"
    elif e.get("driver"):
        text += f" driver={e['driver']}"
    if e.get("version"):  # kubelet start / version change (docs/kubelet-versions.md)
        text += f" {e['previous']} -> {e['version']}" if e.get("previous") else f" version={e['version']}"
    text += f" error={e['error']}" if e.get("error") else " ok"
    return text + _ms(e.get("duration"))


def _process(e: Mapping[str, Any]) -> str:
    text = f"{e.get('action', '')} {e.get('driver', '')} pid={e.get('pid', '?')}"
    if e.get("returncode") is not None:
        text += f" returncode={e['returncode']}"
    return text


def _fault(e: Mapping[str, Any]) -> str:
    return f"{e.get('where', '')}: {e.get('description', '')}".strip(": ")


def _generic(e: Mapping[str, Any]) -> str:
    fields = [f"{k}={v}" for k, v in e.items() if k not in RESERVED and not isinstance(v, dict | list)]
    return " ".join(fields)


def _mark(e: Mapping[str, Any]) -> str:
    slices = e.get("slices")
    return f"{e.get('name', '')} slices={len(slices) if isinstance(slices, list) else '?'}"


_BODIES = {
    MARK: _mark,
    STEP: _step,
    STEP_END: _step_end,
    RPC: _rpc,
    API: _api,
    CHECKPOINT: _checkpoint,
    REGISTRATION: _registration,
    KUBELET: _kubelet,
    PLUGIN_PROCESS: _process,
    FAULT: _fault,
}
