"""A pytest plugin that finds the tests that wait rather than compute.

For each test it records wall time and CPU time (this process plus the child processes it
reaped), and at the end writes them, most idle first, to ``$DRASIM_WAITS_OUT`` (default
``test-waits.tsv``; one file per xdist worker, suffixed with the worker id). A test whose wall
time is much larger than its CPU time waits on timers, sleeps or other processes; on a loaded
machine it also waits for a CPU, so compare the idle share rather than absolute seconds.

    PYTHONPATH=tools python -m pytest -p pytest_waits -q
    sort -t$'\t' -k4 -rn test-waits*.tsv | head -30
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Generator

import pytest

_rows: list[tuple[str, float, float]] = []


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    wall, cpu = time.monotonic(), _cpu()
    try:
        return (yield)
    finally:
        _rows.append((item.nodeid, time.monotonic() - wall, _cpu() - cpu))


def pytest_sessionfinish() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    path = os.environ.get("DRASIM_WAITS_OUT", "test-waits.tsv")
    if worker:
        path = f"{path}.{worker}"
    with open(path, "w", encoding="utf-8") as out:
        out.write("test\twall_s\tcpu_s\tidle_s\n")
        for nodeid, wall, cpu in sorted(_rows, key=lambda r: r[2] - r[1]):
            out.write(f"{nodeid}\t{wall:.2f}\t{cpu:.2f}\t{wall - cpu:.2f}\n")
