"""Kubernetes ``Status`` errors: the exceptions the store raises and the JSON the server answers.

Messages and reasons follow what ``k8s.io/apimachinery/pkg/api/errors`` produces, so
client-go and the kubernetes Python client classify them the same way as against a
real server (``IsNotFound``, ``IsConflict``, ...).
"""

from __future__ import annotations

from typing import Any

from drasim.apiserver.kinds import ResourceType
from drasim.errors import ApiError

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class StatusError(ApiError):
    """An :class:`ApiError` that also carries the ``details`` of a Kubernetes Status."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(code, reason, message)
        self.details = details or {}


def _details(rtype: ResourceType, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "kind": rtype.resource}
    if rtype.group:
        out["group"] = rtype.group
    return out


def not_found(rtype: ResourceType, name: str) -> StatusError:
    """``resourceclaims.resource.k8s.io "x" not found``."""
    return StatusError(
        404, "NotFound", f'{rtype.qualified} "{name}" not found', details=_details(rtype, name)
    )


def already_exists(rtype: ResourceType, name: str) -> StatusError:
    """``pods "x" already exists``."""
    return StatusError(
        409, "AlreadyExists", f'{rtype.qualified} "{name}" already exists', details=_details(rtype, name)
    )


def conflict(rtype: ResourceType, name: str, why: str) -> StatusError:
    """``Operation cannot be fulfilled on <resource> "x": <why>``."""
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {rtype.qualified} "{name}": {why}',
        details=_details(rtype, name),
    )


def delete_precondition_failed(rtype: ResourceType, name: str, why: str) -> StatusError:
    """A DELETE whose precondition fails: upstream checks it before the storage layer does
    (``rest.BeforeDelete``) and names the kind there, not the resource."""
    details: dict[str, Any] = {"name": name, "kind": rtype.kind}
    if rtype.group:
        details["group"] = rtype.group
    qualified = f"{rtype.kind}.{rtype.group}" if rtype.group else rtype.kind
    return StatusError(
        409, "Conflict", f'Operation cannot be fulfilled on {qualified} "{name}": {why}', details=details
    )


STALE_OBJECT = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(rtype: ResourceType, name: str, field: str, problem: str) -> StatusError:
    """A 422 Invalid with one cause, as the validation layer reports it."""
    details = _details(rtype, name)
    details["kind"] = rtype.kind
    details["causes"] = [{"reason": "FieldValueRequired", "message": problem, "field": field}]
    return StatusError(
        422, "Invalid", f'{rtype.kind} "{name}" is invalid: {field}: {problem}', details=details
    )


def bad_request(message: str) -> StatusError:
    """A 400 BadRequest."""
    return StatusError(400, "BadRequest", message)


def expired(requested: int, oldest: int) -> StatusError:
    """The 410 a watch or list gets when its resourceVersion fell out of the history window."""
    return StatusError(410, "Expired", f"too old resource version: {requested} ({oldest})")


def generic(code: int, message: str) -> StatusError:
    """Any other code with its usual reason (used by fault injection).

    A code without one gets the empty reason (upstream's ``StatusReasonUnknown`` is ``""``).
    """
    details: dict[str, Any] = {}
    if code == 429:
        details["retryAfterSeconds"] = 1
    return StatusError(code, REASONS.get(code, ""), message, details=details)


def status_body(err: ApiError) -> dict[str, Any]:
    """The ``Status`` object for an error, as a real API server serializes it."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": err.message,
        "reason": err.reason,
        "code": err.code,
    }
    if not err.reason:
        del body["reason"]  # metav1.Status.Reason is omitempty
    details = getattr(err, "details", None)
    if details:
        body["details"] = details
    return body


def success_body(rtype: ResourceType, name: str, uid: str) -> dict[str, Any]:
    """The ``Status`` a delete answers when it does not return the object."""
    details = _details(rtype, name)
    details["uid"] = uid
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
