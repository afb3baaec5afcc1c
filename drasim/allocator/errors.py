"""The allocator's error type."""

from __future__ import annotations

from drasim.errors import DrasimError


class AllocationError(DrasimError):
    """A claim cannot be allocated, or a selector is outside the supported CEL subset.

    The message names the claim and says which request failed and why, e.g.
    ``cannot allocate claim ns/name: request gpu needs 2 devices of class
    gpu.example.com, 1 available on node n1 (gpu-0 used by ns/other)``.
    """
