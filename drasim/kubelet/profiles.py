"""Compatibility name for :mod:`drasim.profiles` (kubelet version profiles live below every layer).

New code imports :mod:`drasim.profiles`; this module stays so existing imports keep working.
"""

from __future__ import annotations

from drasim import profiles as _profiles
from drasim.profiles import *  # noqa: F403

__all__ = _profiles.__all__
