"""The state the kubelet keeps per ResourceClaim and checkpoints.

Mirrors ``ClaimInfoState`` / ``DriverState`` / ``Device`` in
pkg/kubelet/cm/dra/state/state.go. ``None`` versus empty is kept apart wherever
Go's encoding/json would write ``null`` versus ``[]``/``{}``, so that a checkpoint
decoded and re-encoded is byte-identical.

These are value types below every layer (next to :mod:`drasim.values`): the
ports in :mod:`drasim.interfaces`, the checkpoint codec, the runner's checks and
the kubelet core all name them without depending on each other.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from drasim.values import Device

__all__ = ["ClaimInfoState", "Device", "DriverState"]


@dataclass
class DriverState:
    """What one driver prepared for a claim (upstream ``DriverState``)."""

    devices: list[Device] | None = None
    # In flight upstream (KEP-5945): "All", "Unprepare" or "" (omitted when empty).
    skip_node_operations: str = ""


@dataclass
class ClaimInfoState:
    """One checkpointed claim (upstream ``ClaimInfoState``)."""

    claim_uid: str
    claim_name: str
    namespace: str
    pod_uids: set[str] | None = field(default_factory=set)
    driver_state: dict[str, DriverState] | None = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The cache key the kubelet uses: ``<namespace>/<claim name>``."""
        return f"{self.namespace}/{self.claim_name}"

    def clone(self) -> ClaimInfoState:
        """A deep copy, as upstream's DeepCopy."""
        return copy.deepcopy(self)
