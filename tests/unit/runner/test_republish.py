"""How long drasim waits for slices a kubelet start wiped (drasim.runner.republish)."""

from __future__ import annotations

import pytest

from drasim.runner.republish import MARGIN, MUTATION_CACHE_TTL, SYNC_DELAY, republish_deadline


@pytest.mark.parametrize(
    ("created", "wiped", "back_by"),
    [
        # A wipe soon after the driver's own create: the helper (<= v0.36) still has the
        # slice in its mutation cache until the create is a minute old.
        (100.0, 102.0, 160.0),
        (100.0, 129.0, 160.0),
        # A wipe long after the create: the sync 30 s after the delete event recreates it.
        (100.0, 140.0, 170.0),
        (100.0, 500.0, 530.0),
    ],
)
def test_republish_deadline(created: float, wiped: float, back_by: float) -> None:
    assert republish_deadline(created, wiped) == back_by + MARGIN


def test_the_helpers_constants() -> None:
    """resourceslice.DefaultSyncDelay and DefaultMutationCacheTTL (dynamic-resource-allocation)."""
    assert (SYNC_DELAY, MUTATION_CACHE_TTL) == (30.0, 60.0)
