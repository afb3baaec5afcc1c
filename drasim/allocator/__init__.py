"""The claim allocator: what the scheduler does for a ResourceClaim, as a pure function.

Public API::

    allocate(claim, *, slices, classes, allocated_claims, node_name, pods, node_labels=None,
             cancelled=None) -> dict
    AllocationError

See docs/allocator.md for the supported behaviour and the CEL subset.
"""

from __future__ import annotations

from drasim.allocator.allocate import allocate
from drasim.allocator.errors import AllocationError

__all__ = ["AllocationError", "allocate"]
