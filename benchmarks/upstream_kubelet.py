"""The emulated DRA manager beside upstream's own (``--kubelet upstream``), in one run.

Two measurements, each through the full runner (``drasim run``'s path: the API server, an
in-process fake driver, the pod worker, journal), once with ``kubelet=emulated`` and once with
``kubelet=upstream`` (upstream's pkg/kubelet/cm/dra in its own process, driven over JSON lines):

- ``cycle``: one pod with one claim started and deleted, repeated ``--cycles`` times in one
  scenario (one PrepareResources + one UnprepareResources each): time per cycle;
- ``pods``: ``--pods`` pods, each with its own claim, all started, then all deleted: total time.

Usage::

    python benchmarks/upstream_kubelet.py [--cycles 200] [--pods 1000] [--release 1.37]

Needs Go (the upstream kubelet is built and cached by drasim.gobuild on first use).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from drasim import gobuild
from drasim.report import RESULTS
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.scenario import load_paths


def _scenario(name: str, pods: int, cycles: int) -> str:
    claims = "\n".join(f"    - {{name: c{i}}}" for i in range(pods))
    steps: list[str] = []
    for _ in range(cycles):
        steps += [f"    - startPod: {{name: p{i}, claims: [c{i}]}}" for i in range(pods)]
        steps += [f"    - deletePod: p{i}" for i in range(pods)]
    return (
        "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\n"
        f"metadata: {{name: {name}, description: benchmark}}\n"
        f"spec:\n  driver:\n    fake: {{name: gpu.example.com, devices: {max(pods, 1)}}}\n"
        f"  claims:\n{claims}\n  steps:\n" + "\n".join(steps) + "\n"
    )


def _time(text: str, kubelet: str, version: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text(text, encoding="utf-8")
        (scenario,) = load_paths([path])
        options = RunOptions(kubelet=kubelet, kubelet_version=version, scenario_timeout=None)
        started = time.perf_counter()
        result = run_scenario(scenario, options, results=RESULTS)
        elapsed = time.perf_counter() - started
    if result.status != "passed":
        raise SystemExit(f"{kubelet}: the benchmark scenario {result.status}: {result.failure}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--release", default="1.37")
    args = parser.parse_args(argv)
    problem = gobuild.go_problem()
    if problem:
        print(f"skipped: {problem}", file=sys.stderr)
        return 2
    release = gobuild.parse_release(args.release)
    gobuild.build("kubelet", release)
    version = f"1.{release.minor}"
    print(f"upstream {release.version} beside the emulated kubelet {version}")
    print(f"{'measurement':32} {'emulated':>12} {'upstream':>12} {'ratio':>7}")
    for label, text, per in (
        (f"prepare+unprepare cycle (x{args.cycles})", _scenario("bench-cycle", 1, args.cycles), args.cycles),
        (f"{args.pods} pods start + delete", _scenario("bench-pods", args.pods, 1), 1),
    ):
        emulated = _time(text, "emulated", version) / per
        upstream = _time(text, "upstream", version) / per
        unit = "ms" if per > 1 else "s"
        scale = 1000.0 if per > 1 else 1.0
        ratio = upstream / emulated
        print(f"{label:32} {emulated * scale:10.2f}{unit:>2} {upstream * scale:10.2f}{unit:>2} {ratio:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
