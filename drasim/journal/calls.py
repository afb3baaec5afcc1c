"""RPC events seen as calls: the shape expectations query (``expect_calls``).

A request is recorded as the proto message in dict form,
``{"claims": [{"namespace": ..., "uid": ..., "name": ...}]}``; a bare list of
claims, ``ClaimRef``-shaped dicts and camelCase proto-JSON are accepted too, so
a separate process's journal parses the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drasim.journal.kinds import short_method
from drasim.values import ClaimRef


def claims_of(request: Any) -> tuple[ClaimRef, ...]:
    """The claims named in an RPC request, in request order; ``()`` when there are none."""
    items = request.get("claims") if isinstance(request, Mapping) else request
    if not isinstance(items, list | tuple):
        return ()
    claims: list[ClaimRef] = []
    for item in items:
        if isinstance(item, ClaimRef):
            claims.append(item)
        elif isinstance(item, Mapping):
            claims.append(
                ClaimRef(
                    namespace=str(item.get("namespace", "")),
                    uid=str(item.get("uid", "")),
                    name=str(item.get("name", "")),
                )
            )
    return tuple(claims)


def method_matches(method: str, suffix: str) -> bool:
    """Whether the gRPC path ``method`` ends with ``suffix`` at a name boundary.

    ``NodePrepareResources``, ``DRAPlugin/NodePrepareResources`` and the full
    path all match ``/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources``;
    ``PrepareResources`` does not.
    """
    if not suffix:
        return True
    if not method.endswith(suffix):
        return False
    rest = method[: -len(suffix)]
    return rest == "" or rest[-1] in "/." or suffix[0] in "/."


@dataclass(frozen=True)
class RpcCall:
    """One recorded RPC with its claims pulled out of the request."""

    seq: int
    t: float
    side: str
    driver: str
    method: str
    code: str
    error: str
    duration: float | None
    request: Any
    response: Any
    claims: tuple[ClaimRef, ...]
    event: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> RpcCall:
        """Build from an ``rpc`` journal event."""
        duration = event.get("duration")
        return cls(
            seq=int(event.get("seq", 0)),
            t=float(event.get("t", 0.0)),
            side=str(event.get("side", "")),
            driver=str(event.get("driver", "")),
            method=str(event.get("method", "")),
            code=str(event.get("code", "")),
            error=str(event.get("error") or event.get("details") or ""),
            duration=float(duration) if isinstance(duration, int | float) else None,
            request=event.get("request"),
            response=event.get("response"),
            claims=claims_of(event.get("request")),
            event=event,
        )

    @property
    def name(self) -> str:
        """The method's short name (``NodePrepareResources``)."""
        return short_method(self.method)

    @property
    def ok(self) -> bool:
        """The call returned gRPC OK (per-claim errors may still be in :attr:`claim_results`)."""
        return self.code == "OK"

    @property
    def claim_keys(self) -> list[str]:
        """``namespace/name`` of each claim in the request."""
        return [f"{c.namespace}/{c.name}" for c in self.claims]

    @property
    def claim_results(self) -> dict[str, Any]:
        """The response's per-claim entries keyed by claim UID (``{}`` without a response)."""
        response = self.response
        if isinstance(response, Mapping) and isinstance(response.get("claims"), Mapping):
            return dict(response["claims"])
        return {}

    @property
    def claim_errors(self) -> dict[str, str]:
        """Per-claim ``error`` strings that are not empty, keyed by claim UID."""
        errors: dict[str, str] = {}
        for uid, entry in self.claim_results.items():
            if isinstance(entry, Mapping) and entry.get("error"):
                errors[uid] = str(entry["error"])
        return errors
