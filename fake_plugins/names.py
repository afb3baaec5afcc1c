"""Which claim references the fake driver accepts: every file name it builds must stay in its folder.

A claim's UID becomes part of a CDI spec file name (``<driver>-claim_<uid>.json``), so a
request naming a UID such as ``../../x`` could make a driver write or delete files outside
its CDI folder. Kubernetes hands out UIDs as UUIDs; drasim's tests also use short ones
(``uid-1``), so the rule here is what both are made of: letters, digits, ``-``, ``_`` and
``.``, starting with a letter or digit, at most 128 characters. Claim names must be DNS-1123
subdomains and namespaces DNS-1123 labels, as the API server validates them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from drasim.values import ClaimRef

_UID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_LABEL = re.compile(_LABEL)
_DNS_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")


def ref_problem(ref: ClaimRef) -> str | None:
    """Why a claim reference from a request is refused, or ``None`` when it is acceptable."""
    if not _UID.fullmatch(ref.uid):
        return (
            f"claim UID {ref.uid[:80]!r} is not acceptable: at most 128 letters, digits, "
            "'-', '_' and '.', starting with a letter or digit"
        )
    if len(ref.namespace) > 63 or not _DNS_LABEL.fullmatch(ref.namespace):
        return f"claim namespace {ref.namespace[:80]!r} is not a DNS-1123 label"
    if len(ref.name) > 253 or not _DNS_SUBDOMAIN.fullmatch(ref.name):
        return f"claim name {ref.name[:80]!r} is not a DNS-1123 subdomain"
    return None


def first_problem(claims: Sequence[ClaimRef]) -> str | None:
    """The problem of the first unacceptable reference in a request, if any."""
    return next((p for p in map(ref_problem, claims) if p is not None), None)
