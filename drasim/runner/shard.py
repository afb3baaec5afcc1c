"""A stable split of a run's rows (scenario, or scenario and kubelet version) into N shards.

A row belongs to shard ``crc32(row name) % N + 1``: the same row lands in the same shard on every
machine and in every run, every row lands in exactly one shard, and adding a scenario moves no
other row. CI matrix jobs run ``drasim run --shard K/N`` for K = 1..N.
"""

from __future__ import annotations

import zlib


def shard_of(row_name: str, count: int) -> int:
    """The shard (1-based) of a row named ``row_name`` (``name`` or ``name[kubelet-1.34]``)."""
    return zlib.crc32(row_name.encode("utf-8")) % count + 1


def in_shard(row_name: str, shard: tuple[int, int] | None) -> bool:
    """Whether the row is in ``shard`` (``(K, N)``); every row is when ``shard`` is None."""
    return shard is None or shard_of(row_name, shard[1]) == shard[0]
