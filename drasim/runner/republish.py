"""How long a driver process may take to publish again the ResourceSlices a kubelet start wiped.

Every kubelet release drasim emulates (1.34 to 1.37, ``DRAPluginManager`` in
pkg/kubelet/cm/dra/plugin) deletes all ResourceSlices of its node when it starts, in the
background and whatever drivers are registered. A driver built on the kubeletplugin helper
does not notice at once: its ResourceSlice controller
(k8s.io/dynamic-resource-allocation/resourceslice) syncs a pool ``DefaultSyncDelay`` (30 s)
after an informer event, and it keeps the slices it created itself in a mutation cache for
``DefaultMutationCacheTTL`` (60 s). Up to v0.36 that cache ignores deletes, so a sync in the
first minute after the controller's own create still "sees" the deleted slice and does
nothing; the create is repeated by the re-sync it scheduled for when the cached copy expires.
From v0.37 the cache drops a slice on its delete event, and the first sync after the wipe
recreates it.

So with any helper release, slices wiped at ``W`` and last created at ``C`` are back by
``max(C + 60 s, W + 30 s)``, and drasim waits until then plus a margin for a loaded machine.
These are real seconds: the helper runs on the wall clock, not on drasim's scaled clock.
"""

from __future__ import annotations

# resourceslice.DefaultSyncDelay: a pool is synced this long after an informer event.
SYNC_DELAY = 30.0
# resourceslice.DefaultMutationCacheTTL: how long the controller trusts its own creates.
MUTATION_CACHE_TTL = 60.0
# Slack for a busy machine (informer delivery, the create call, drasim's poll).
MARGIN = 10.0


def republish_deadline(created_at: float, wiped_at: float) -> float:
    """The monotonic time by which a kubeletplugin-based driver has republished its slices.

    ``created_at``: when its slices were last seen appearing (an upper bound of the
    controller's own create); ``wiped_at``: when the kubelet's start-up wipe ran.
    """
    return max(created_at + MUTATION_CACHE_TTL, wiped_at + SYNC_DELAY) + MARGIN
