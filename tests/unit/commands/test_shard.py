"""``drasim run --shard K/N``: N CI jobs together run every row (scenario, or scenario and kubelet
version) exactly once, and a row always lands in the same shard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drasim.cli import main


def _rows(tmp_path: Path, *args: str) -> list[str]:
    out = tmp_path / "r.json"
    assert main(["run", "--suite", "conformance", "-q", "--json", str(out), *args]) == 0
    return [r["name"] for r in json.loads(out.read_text())["results"]]


@pytest.mark.parametrize("versions", [[], ["--kubelet-version", "1.34,1.37"]], ids=["plain", "matrix"])
def test_shards_split_every_row_once(tmp_path: Path, versions: list[str]) -> None:
    everything = _rows(tmp_path, *versions)
    shards = [_rows(tmp_path, "--shard", f"{k}/3", *versions) for k in (1, 2, 3)]
    assert sorted(name for shard in shards for name in shard) == sorted(everything)
    assert all(shards), "a shard of 15+ rows in 3 was empty"
    if versions:  # rows of one scenario at two versions may land in different shards
        assert any("[kubelet-1.34]" in n for n in everything)
    assert _rows(tmp_path, "--shard", "2/3", *versions) == shards[1]  # stable


@pytest.mark.parametrize("value", ["0/3", "4/3", "3", "a/b", "1/0", "1/2/3"])
def test_bad_shard_is_bad_input(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--suite", "conformance", "--shard", value]) == 2
    err = capsys.readouterr().err
    assert f"--shard: expected K/N with 1 <= K <= N <= 1000 (e.g. 2/4), got {value!r}" in err
