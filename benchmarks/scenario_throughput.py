"""Scenario throughput: scenarios per second for the built-in library, serial and in parallel.

    python benchmarks/scenario_throughput.py            # the whole library, -j 1 and -j 2
    python benchmarks/scenario_throughput.py --quick    # the first 5 scenarios, for a smoke test

Prints one line per job count: scenarios, wall time, scenarios/s, and the slowest scenarios.
"""

from __future__ import annotations

import argparse
import os
import time

from progress import progress

from drasim.report.model import ScenarioResult
from drasim.runner.run import run_scenarios
from drasim.scenario import builtin_scenario_dir, load_paths


class Every:
    """A runner reporter that shows progress every tenth of the scenarios."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.step = max(1, total // 10)

    def scenario_started(self, name: str, location: str = "") -> None:
        """Nothing to show."""

    def scenario_finished(self, result: ScenarioResult) -> None:
        """Count; print every tenth."""
        self.done += 1
        if self.done % self.step == 0 or self.done == self.total:
            progress(f"scenario throughput: {self.done}/{self.total} done (last: {result.name})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="only the first 5 scenarios")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="job counts to measure")
    args = parser.parse_args()
    scenarios = sorted(load_paths([builtin_scenario_dir()]), key=lambda s: s.name)
    if args.quick:
        scenarios = scenarios[:5]
    print(f"scenario throughput: {len(scenarios)} scenarios, {os.cpu_count()} cores")
    for jobs in args.jobs:
        progress(f"scenario throughput: {len(scenarios)} scenarios with -j {jobs}")
        started = time.monotonic()
        report = run_scenarios(scenarios, jobs=jobs, reporter=Every(len(scenarios)))
        wall = time.monotonic() - started
        slowest = sorted(report.results, key=lambda r: r.duration, reverse=True)[:3]
        slow = ", ".join(f"{r.name} {r.duration:.2f}s" for r in slowest)
        count = len(report.results)
        print(
            f"-j {jobs}: {count} scenarios in {wall:.2f}s = {count / wall:.1f}/s; "
            f"{report.count('passed')} passed; slowest: {slow}"
        )


if __name__ == "__main__":
    main()
