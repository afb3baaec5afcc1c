"""What the proxy reads and rewrites on the wire: requests' claims, replies' per-claim entries,
``PluginInfo.endpoint``; and the journal form of each, as the kubelet's client writes it.

Everything else passes through as bytes. Only the messages of calls a rule shapes are
decoded and encoded again.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.json_format import MessageToDict

from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim.apiversions import DRA_APIS, HEALTH_APIS, PluginApi
from drasim.faults import CLAIM_RPCS, PluginFault
from drasim.plugins import conversion
from drasim.proxy.rules import claim_selected
from drasim.values import ClaimRef

GET_INFO = "/pluginregistration.Registration/GetInfo"
NOTIFY = "/pluginregistration.Registration/NotifyRegistrationStatus"
PREPARE = "NodePrepareResources"
UNPREPARE = "NodeUnprepareResources"
WATCH = "NodeWatchResources"

_DRA_BY_PATH: dict[str, PluginApi] = {api.path: api for api in DRA_APIS}
_HEALTH_BY_PATH: dict[str, PluginApi] = {api.path: api for api in HEALTH_APIS}


def split_method(path: str) -> tuple[str, str]:
    """``/pkg.Service/Method`` -> (``/pkg.Service``, ``Method``)."""
    service, _, method = path.rpartition("/")
    return service, method


def dra_service(path: str) -> str | None:
    """The advertised service name (``v1.DRAPlugin``) of a DRA method path, or ``None``."""
    api = _DRA_BY_PATH.get(split_method(path)[0])
    return api.service if api is not None else None


def health_api(path: str) -> PluginApi | None:
    """The health API of a ``NodeWatchResources`` method path, or ``None``."""
    return _HEALTH_BY_PATH.get(split_method(path)[0])


def request_claims(service: str, data: bytes) -> tuple[ClaimRef, ...]:
    """The claims of a prepare or unprepare request (both messages have ``claims`` as field 1)."""
    msg = conversion._module(service).NodePrepareResourcesRequest.FromString(data)
    return tuple(ClaimRef(namespace=c.namespace, uid=c.uid, name=c.name) for c in msg.claims)


def reply_json(service: str, method: str, data: bytes) -> dict[str, Any]:
    """The journal form of a prepare/unprepare reply, as the kubelet's client writes it."""
    if method == PREPARE:
        return conversion.prepare_json(conversion.prepare_response(service, data))
    return conversion.unprepare_json(conversion.unprepare_response(service, data))


def shapes_reply(rule: PluginFault | None) -> bool:
    """Whether ``rule`` rewrites a forwarded reply's per-claim entries."""
    return rule is not None and bool(rule.error or rule.missing_claim or rule.nil_entry or rule.unknown_uid)


def shape_reply(
    service: str, method: str, data: bytes, claims: tuple[ClaimRef, ...], rule: PluginFault
) -> bytes:
    """The driver's reply with ``rule``'s per-claim error, missing or empty entries and extra UID.

    A per-claim ``error`` replaces the claim's entry by one that only carries the error
    (the kubelet reads no devices next to an error). Entries are keyed by claim UID. An
    empty entry is written as Go writes a nil one: the key and an empty value.
    """
    pb = conversion._module(service)
    reply_type = pb.NodePrepareResourcesResponse if method == PREPARE else pb.NodeUnprepareResourcesResponse
    entry_type = pb.NodePrepareResourceResponse if method == PREPARE else pb.NodeUnprepareResourceResponse
    msg = reply_type.FromString(data)
    for ref in claims:
        if not claim_selected(rule.claim, ref):
            continue
        if rule.error:
            msg.claims[ref.uid].CopyFrom(entry_type(error=rule.error))
        if rule.nil_entry:
            msg.claims[ref.uid].CopyFrom(entry_type())
        if rule.missing_claim and ref.uid in msg.claims:
            del msg.claims[ref.uid]
    if rule.unknown_uid:
        msg.claims[rule.added_uid].CopyFrom(entry_type())
    return bytes(msg.SerializeToString())


def plugin_info(data: bytes) -> Any:
    """A ``PluginInfo`` message."""
    return reg_pb.PluginInfo.FromString(data)


def with_endpoint(info: Any, endpoint: str) -> bytes:
    """``info`` pointing the kubelet at ``endpoint``."""
    info.endpoint = endpoint
    return bytes(info.SerializeToString())


def message_json(message: Any) -> dict[str, Any]:
    """A message in journal form (proto field names)."""
    return dict(MessageToDict(message, preserving_proto_field_name=True))


def notify_json(data: bytes) -> dict[str, Any]:
    """The journal form of a ``RegistrationStatus`` request."""
    return message_json(reg_pb.RegistrationStatus.FromString(data))


def call_json(
    path: str, request: bytes, reply: bytes | None, claims: tuple[ClaimRef, ...] | None = None
) -> tuple[Any, Any]:
    """The journal form of one unary call's request and reply (``reply`` ``None``: it failed),
    as the kubelet's client writes them; methods the proxy does not read are ``None``."""
    return request_form(path, request, claims), None if reply is None else reply_form(path, reply)


def request_form(path: str, request: bytes, claims: tuple[ClaimRef, ...] | None = None) -> Any:
    """The journal form of a unary call's request (``None``: a method the proxy does not read)."""
    _, rpc = split_method(path)
    service = dra_service(path)
    if service is not None and rpc in CLAIM_RPCS:
        return conversion.claims_json(claims if claims is not None else request_claims(service, request))
    if rpc == "GetInfo":
        return {}
    if rpc == "NotifyRegistrationStatus":
        return notify_json(request)
    return None


def reply_form(path: str, reply: bytes) -> Any:
    """The journal form of a unary call's reply (``None``: a method the proxy does not read)."""
    _, rpc = split_method(path)
    service = dra_service(path)
    if service is not None and rpc in CLAIM_RPCS:
        return reply_json(service, rpc, reply)
    if rpc == "GetInfo":
        return message_json(plugin_info(reply))
    if rpc == "NotifyRegistrationStatus":
        return {}
    return None


def health_json(api: PluginApi, data: bytes) -> dict[str, Any]:
    """The journal form of one ``NodeWatchResourcesResponse``."""
    return message_json(api.messages.NodeWatchResourcesResponse.FromString(data))
