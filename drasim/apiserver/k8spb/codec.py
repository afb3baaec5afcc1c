"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``).

A body is the 4 magic bytes ``k8s\\x00`` followed by a ``runtime.Unknown``
message whose ``typeMeta`` names the kind and whose ``raw`` holds the object's
own protobuf encoding. This is what client-go sends on every create and update
(upstream: ``k8s.io/apimachinery/pkg/runtime/serializer/protobuf``).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError, Message

from drasim.apiserver.k8spb.convert import ConversionError, json_to_message, message_to_json
from drasim.apiserver.k8spb.registry import (
    PARTIAL_RESOURCE_VERSIONS,
    RESOURCE_GROUP,
    UNKNOWN,
    api_version,
    message_name,
    new_message,
    split_api_version,
)
from drasim.errors import ApiError, ConfigError

MAGIC = b"k8s\x00"
ANY_VERSION_KINDS = frozenset({"DeleteOptions"})
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


def _bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def _unsupported(message: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", message)


def _parse(msg: Message, data: bytes, what: str) -> None:
    try:
        msg.ParseFromString(data)
    except (DecodeError, UnicodeDecodeError, ValueError) as exc:
        raise _bad_request(f"cannot decode protobuf {what}: {exc}") from None


def decode_request_body(body: bytes, *, group: str, version: str, kind: str) -> dict[str, Any]:
    """Decode a protobuf request body into the JSON dict the REST API would show.

    ``group``/``version``/``kind`` are what the request URL expects (``""`` is the
    core group). ``apiVersion`` and ``kind`` of the result come from the body's
    ``typeMeta`` (filled from the URL when the client left them empty).

    Raises :class:`~drasim.errors.ApiError` 400 ``BadRequest`` for a malformed body
    or a kind/version that differs from the URL, and 415 ``UnsupportedMediaType``
    for a kind drasim has no protobuf description of.
    """
    expected = api_version(group, version)
    if not body.startswith(MAGIC):
        raise _bad_request(
            f"request body is not Kubernetes protobuf: expected it to start with the magic bytes "
            f"{MAGIC!r}, got {bytes(body[:4])!r}"
        )
    unknown = UNKNOWN()
    _parse(unknown, body[len(MAGIC) :], "runtime.Unknown envelope")
    type_meta = unknown.typeMeta
    got_kind = type_meta.kind or kind
    got_version = type_meta.apiVersion or expected
    if got_kind != kind:
        raise _bad_request(
            f"body holds kind {got_kind!r} ({got_version}), but this endpoint expects {kind!r}"
        )
    # apimachinery registers the option kinds in every group version, so client-go
    # labels a DeleteOptions body with the version of whichever client sent it.
    if got_version != expected and kind not in ANY_VERSION_KINDS:
        raise _bad_request(
            f"the API version in the data ({got_version}) does not match "
            f"the expected API version ({expected})"
        )
    if unknown.contentEncoding:
        raise _unsupported(f"protobuf content encoding {unknown.contentEncoding!r} is not supported")
    full_name = _message_for(group, version, kind)
    msg = new_message(full_name)
    _parse(msg, unknown.raw, f"{kind} ({got_version})")
    try:
        fields = message_to_json(msg)
    except ConversionError as exc:
        raise _bad_request(f"{kind} {exc}") from None
    return {"apiVersion": got_version, "kind": got_kind, **fields}


def _message_for(group: str, version: str, kind: str) -> str:
    full_name = message_name(group, version, kind)
    if full_name is not None:
        return full_name
    where = api_version(group, version)
    if group == RESOURCE_GROUP and version in PARTIAL_RESOURCE_VERSIONS:
        raise _unsupported(
            f"drasim decodes protobuf for {where} ResourceSlice only, not {kind}; "
            f"send it as JSON or use resource.k8s.io/v1"
        )
    raise _unsupported(f"drasim cannot decode protobuf for {where} {kind}; send it as application/json")


def encode_object(obj: dict[str, Any], *, go_zero_fields: bool = False) -> bytes:
    """Encode a JSON-shaped object the way client-go sends it: magic + Unknown + raw.

    ``obj`` must carry ``apiVersion`` and ``kind``. With ``go_zero_fields`` every
    non-pointer scalar the dict leaves out is written as zero, as Go's generated
    marshaller does; the decoder must ignore those. Raises
    :class:`~drasim.errors.ConfigError` for an unknown kind or a field that does
    not fit.
    """
    version_text = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(version_text, str) or not isinstance(kind, str):
        raise ConfigError("object to encode needs string apiVersion and kind")
    group, version = split_api_version(version_text)
    full_name = message_name(group, version, kind)
    if full_name is None:
        raise ConfigError(f"no protobuf description for {version_text} {kind}")
    msg = new_message(full_name)
    fields = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    try:
        json_to_message(fields, msg, go_zero_fields=go_zero_fields)
    except ConversionError as exc:
        raise ConfigError(f"{kind}: {exc}") from None
    envelope = UNKNOWN()
    envelope.typeMeta.apiVersion = version_text
    envelope.typeMeta.kind = kind
    envelope.raw = msg.SerializeToString(deterministic=True)
    # client-go's envelope always carries the two (empty) content fields.
    envelope.contentEncoding = ""
    envelope.contentType = ""
    return MAGIC + envelope.SerializeToString(deterministic=True)
