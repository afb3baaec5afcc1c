"""``--drasim-shard K/N``: N CI jobs split the items, scenarios as ``drasim run --shard`` does."""

from __future__ import annotations

from typing import Any

import pytest

from drasim.runner.shard import shard_of


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", *args)
    return [line for line in result.stdout.lines if "::" in line]


def test_the_shards_split_every_item_once(pytester: pytest.Pytester, write: Any, scenario_text: Any) -> None:
    names = [f"split-{i}" for i in range(8)]
    for name in names:
        write(f"drasim_{name}.yaml", scenario_text(name))
    pytester.makepyfile(test_py="def test_a(drasim_factory): pass\ndef test_b(): pass\n")
    everything = collected(pytester)
    assert len(everything) == 10
    shards = [collected(pytester, "--drasim-shard", f"{k}/3") for k in (1, 2, 3)]
    assert sorted(item for shard in shards for item in shard) == sorted(everything)  # each once
    for k, shard in enumerate(shards, start=1):
        scenarios = [item.split("::")[1] for item in shard if item.split("::")[0].endswith(".yaml")]
        # the same rows drasim run --shard k/3 runs
        assert sorted(scenarios) == sorted(n for n in names if shard_of(n, 3) == k)
    assert collected(pytester, "--drasim-shard", "1/3") == shards[0]  # stable


def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--drasim-shard", "4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "--drasim-shard: expected K/N with 1 <= K <= N <= 1000 (e.g. 2/4), got '4/3'" in result.stderr.str()
    )
