"""Compatibility name for :mod:`drasim.state` (the state types moved below the ports).

New code imports :mod:`drasim.state`; this module stays so existing imports keep working.
"""

from __future__ import annotations

from drasim.state import ClaimInfoState, Device, DriverState

__all__ = ["ClaimInfoState", "Device", "DriverState"]
