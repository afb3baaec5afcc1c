"""A stable split of a run's rows (scenario, or scenario and kubelet version) into N shards.

A row belongs to shard ``crc32(row name) % N + 1``: the same row lands in the same shard on every
machine and in every run, every row lands in exactly one shard, and adding a scenario moves no
other row. CI matrix jobs run ``drasim run --shard K/N`` (or ``pytest --drasim-shard K/N``, which
splits the same scenario rows the same way) for K = 1..N.
"""

from __future__ import annotations

import zlib


def shard_of(row_name: str, count: int) -> int:
    """The shard (1-based) of a row named ``row_name`` (``name`` or ``name[kubelet-1.34]``)."""
    return zlib.crc32(row_name.encode("utf-8")) % count + 1


def in_shard(row_name: str, shard: tuple[int, int] | None) -> bool:
    """Whether the row is in ``shard`` (``(K, N)``); every row is when ``shard`` is None."""
    return shard is None or shard_of(row_name, shard[1]) == shard[0]


def parse_shard(text: str | None, flag: str = "--shard") -> tuple[int, int] | None:
    """``"2/4"`` -> ``(2, 4)``; None -> None; a ConfigError naming ``flag`` for anything else."""
    from drasim.errors import ConfigError

    if text is None:
        return None
    k, slash, n = text.partition("/")
    if slash and k.strip().isdigit() and n.strip().isdigit():
        shard = (int(k), int(n))
        if 1 <= shard[0] <= shard[1] <= 1000:
            return shard
    raise ConfigError(f"{flag}: expected K/N with 1 <= K <= N <= 1000 (e.g. 2/4), got {text!r}")
