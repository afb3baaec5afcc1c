"""Scenario throughput: scenarios per second for the built-in library, per backend and job count.

    python benchmarks/scenario_throughput.py                       # memory backend, -j 1 and -j 2
    python benchmarks/scenario_throughput.py --backend memory http kubeconfig --jobs 1
    python benchmarks/scenario_throughput.py --backend kubeconfig --kubeconfig ~/.kube/config
    python benchmarks/scenario_throughput.py --quick                # the first 5 scenarios (smoke test)

``--backend kubeconfig`` without ``--kubeconfig`` measures against ``drasim serve-apiserver``
started as a separate process (a stand-in cluster reached only through its kubeconfig).
Prints one line per (backend, job count): scenarios, wall time, scenarios/s, the slowest
scenarios, and a ``RESULT`` line for scripts.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from progress import progress

from drasim.report.model import RESULTS, RunReport, ScenarioResult
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenarios
from drasim.scenario import builtin_scenario_dir, load_paths
from drasim.scenario.schema import Scenario


@contextlib.contextmanager
def stand_in_cluster() -> Iterator[Path]:
    """``drasim serve-apiserver`` in its own process; yields its kubeconfig."""
    with tempfile.TemporaryDirectory(prefix="drasim-bench-") as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        server = subprocess.Popen(
            [sys.executable, "-m", "drasim", "serve-apiserver", "--kubeconfig-out", str(kubeconfig)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            line = server.stdout.readline() if server.stdout else ""
            if "serving" not in line:
                raise SystemExit(f"drasim serve-apiserver did not start: {line!r}")
            yield kubeconfig
        finally:
            server.terminate()
            server.wait(timeout=10)


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
    parser.add_argument(
        "--backend",
        nargs="+",
        default=["memory"],
        choices=("memory", "http", "kubeconfig"),
        help="backends to measure (default: memory)",
    )
    parser.add_argument("--kubeconfig", type=Path, help="the cluster of the kubeconfig backend")
    args = parser.parse_args()
    scenarios = sorted(load_paths([builtin_scenario_dir()]), key=lambda s: s.name)
    if args.quick:
        scenarios = scenarios[:5]
    print(f"scenario throughput: {len(scenarios)} scenarios, {os.cpu_count()} cores")
    with contextlib.ExitStack() as stack:
        for backend in args.backend:
            kubeconfig = None
            if backend == "kubeconfig":
                kubeconfig = args.kubeconfig or stack.enter_context(stand_in_cluster())
            for jobs in args.jobs:
                measure(scenarios, RunOptions(backend=backend, kubeconfig=kubeconfig), jobs)


def measure(scenarios: list[Scenario], options: RunOptions, jobs: int) -> None:
    """Run the scenarios once and print the numbers."""
    progress(f"scenario throughput: {len(scenarios)} scenarios, --backend {options.backend} -j {jobs}")
    started = time.monotonic()
    report = RunReport(
        results=run_scenarios(scenarios, options, results=RESULTS, jobs=jobs, reporter=Every(len(scenarios)))
    )
    wall = time.monotonic() - started
    slowest = sorted(report.results, key=lambda r: r.duration, reverse=True)[:3]
    slow = ", ".join(f"{r.name} {r.duration:.2f}s" for r in slowest)
    count = len(report.results)
    ran = count - report.count("skipped")
    print(
        f"--backend {options.backend} -j {jobs}: {count} scenarios in {wall:.2f}s = {count / wall:.1f}/s; "
        f"{report.count('passed')} passed, {report.count('skipped')} skipped; slowest: {slow}"
    )
    for result in report.results:
        if result.status in ("failed", "error") and result.failure is not None:
            print(f"  {result.status}: {result.name}: {result.failure.message.splitlines()[0]}")
    print(
        f"RESULT scenario_throughput backend={options.backend} jobs={jobs} scenarios={count} ran={ran} "
        f"passed={report.count('passed')} wall_s={wall:.3f} per_s={count / wall:.2f}"
    )


if __name__ == "__main__":
    main()
