"""Kubernetes protobuf bodies: decode what client-go sends, encode the same for tests.

Public API::

    decode_request_body(body, *, group, version, kind) -> dict
    encode_object(obj, *, go_zero_fields=False) -> bytes
    MAGIC, CONTENT_TYPE
"""

from __future__ import annotations

from drasim.apiserver.k8spb.codec import CONTENT_TYPE, MAGIC, decode_request_body, encode_object
from drasim.apiserver.k8spb.registry import supported_kinds

__all__ = ["CONTENT_TYPE", "MAGIC", "decode_request_body", "encode_object", "supported_kinds"]
