"""Compatibility name for :mod:`drasim.profiles` (kubelet version profiles live below every layer).

New code imports :mod:`drasim.profiles`; this module stays so existing imports keep working.
"""

from __future__ import annotations

from drasim.profiles import (
    DEFAULT_VERSION,
    PROFILES,
    VERSIONS,
    KubeletVersion,
    VersionError,
    allowed_versions,
    check_constraint,
    parse_version_list,
    profile,
)

__all__ = [
    "DEFAULT_VERSION",
    "PROFILES",
    "VERSIONS",
    "KubeletVersion",
    "VersionError",
    "allowed_versions",
    "check_constraint",
    "parse_version_list",
    "profile",
]
