"""The measuring helpers of benchmarks/benchlib.py: which runs are timed, in which order."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def benchlib() -> Iterator[object]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import benchlib

        yield benchlib
    finally:
        sys.path.remove(str(BENCHMARKS))


def _recorder(log: list[str], name: str) -> Callable[[], None]:
    return lambda: log.append(name)


def test_measure_blocks_times_every_run_but_the_first_of_each_block(benchlib: object) -> None:
    log: list[str] = []  # every run, in order
    timed: list[int] = []  # the positions in ``log`` of the timed runs
    ticks = 0

    def clock() -> float:  # read once before and once after each timed run
        nonlocal ticks
        ticks += 1
        if ticks % 2:
            timed.append(len(log))
        return float(ticks)

    original = benchlib.time.perf_counter  # type: ignore[attr-defined]
    benchlib.time.perf_counter = clock  # type: ignore[attr-defined]
    try:
        a, b = benchlib.measure_blocks(  # type: ignore[attr-defined]
            [_recorder(log, "a"), _recorder(log, "b")], iterations=5, warmup=1
        )
    finally:
        benchlib.time.perf_counter = original  # type: ignore[attr-defined]
    # warm-up a b; then blocks of four runs of one body in turns, until 5 of each are timed
    assert log == ["a", "b"] + ["a"] * 4 + ["b"] * 4 + ["a"] * 4 + ["b"] * 4
    block_starts = (2, 6, 10, 14)
    assert timed == [start + k for start in block_starts for k in (1, 2, 3)]  # never a block's first
    assert len(a.samples) == len(b.samples) == 5  # cut to the iterations asked for
    assert set(a.samples + b.samples) == {1.0}  # each sample is one timed run


def test_measure_blocks_needs_a_timed_run(benchlib: object) -> None:
    with pytest.raises(ValueError, match="at least one timed run"):
        benchlib.measure_blocks([lambda: None], iterations=1, warmup=0, timed=0)  # type: ignore[attr-defined]


def test_measure_interleaved_times_every_run_in_strict_turns(benchlib: object) -> None:
    log: list[str] = []
    original = benchlib.time.perf_counter  # type: ignore[attr-defined]
    ticks = iter(range(100))
    benchlib.time.perf_counter = lambda: float(next(ticks))  # type: ignore[attr-defined]
    try:
        a, b = benchlib.measure_interleaved(  # type: ignore[attr-defined]
            [_recorder(log, "a"), _recorder(log, "b")], iterations=3, warmup=1
        )
    finally:
        benchlib.time.perf_counter = original  # type: ignore[attr-defined]
    assert log == ["a", "b"] * 4  # warm-up, then three timed turns
    assert a.samples == b.samples == (1.0, 1.0, 1.0)  # every run after the warm-up is timed
