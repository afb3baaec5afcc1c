"""The single door every API call passes through: fault injection, then the store, then the journal.

Both the in-process face (:mod:`drasim.apiserver.memory`) and the HTTP face
(:mod:`drasim.apiserver.http`) wrap each request in :func:`guarded`, so faults and
journal entries behave the same whichever face a client uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from drasim.apiserver.faults import fault_error
from drasim.apiserver.kinds import ResourceType
from drasim.apiserver.store import ObjectStore
from drasim.errors import ApiError
from drasim.faults import ApiFault

T = TypeVar("T")

IN_PROCESS = "in-process"


@dataclass(frozen=True)
class ApiCall:
    """Who asks what: the fields faults match on and the journal records."""

    verb: str
    rtype: ResourceType
    version: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    client: str = IN_PROCESS


def guarded(store: ObjectStore, call: ApiCall, action: Callable[[ApiFault | None], T]) -> T:
    """Apply a matching fault (latency, error), run ``action``, and journal the outcome.

    ``action`` receives the fault that fired (or ``None``) so a watch can honour a
    dropWatch fault. The journal entry is ``api`` with verb, resource, namespace,
    name, HTTP code, client and duration in seconds.
    """
    start = time.monotonic()
    code = 201 if call.verb == "create" else 200
    try:
        fault = store.faults.take(
            call.verb, call.rtype, call.namespace, call.name, call.subresource, client=call.client
        )
        if fault is not None and fault.delay:
            store.sleep(fault.delay)
        error = fault_error(fault, call.verb, call.rtype, call.name) if fault is not None else None
        if error is not None:
            raise error
        return action(fault)
    except ApiError as err:
        code = err.code
        raise
    finally:
        rtype = call.rtype
        fields = {
            "verb": call.verb,
            "resource": rtype.resource,
            "subresource": call.subresource,
            "group": rtype.group,
            "version": call.version,
            "namespace": call.namespace,
            "name": call.name,
            "code": code,
            "client": call.client,
            "duration": time.monotonic() - start,
        }
        if type(call.name) is str and type(call.namespace) is str:
            store.record_ready("api", fields)
        else:  # taken from a malformed object's metadata: recorded the checked way
            store.recorder.record("api", **fields)
