"""Each benchmark script runs in its quick mode and prints its result lines.

No timing is asserted: speed is measured by the benchmarks themselves and recorded
in docs/performance.md. This only keeps the scripts from rotting.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
NUMBER = r"[0-9.e+-]+"


def run(script: str, *args: str) -> str:
    env = {
        # as a user's shell has it: without the GRPC_VERBOSITY drasim's pytest plugin sets
        **{name: value for name, value in os.environ.items() if name != "GRPC_VERBOSITY"},
        "PYTHONPATH": os.pathsep.join([str(BENCHMARKS.parent), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=BENCHMARKS,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Progress goes to stderr, a line per phase, so a long run shows where it is.
    assert re.search(r"^\[ *\d+\.\ds\] \S", proc.stderr, re.M), f"no progress lines: {proc.stderr!r}"
    assert "RESULT " not in proc.stderr
    assert "chttp2_transport" not in proc.stderr, (
        "gRPC's INFO lines (GOAWAY at shutdown) leak into the output"
    )
    return proc.stdout


def results(output: str) -> dict[str, list[dict[str, str]]]:
    found: dict[str, list[dict[str, str]]] = {}
    for line in output.splitlines():
        if line.startswith("RESULT "):
            name, *pairs = line.split()[1:]
            found.setdefault(name, []).append(dict(pair.split("=", 1) for pair in pairs))
    return found


@pytest.mark.timeout(90)
def test_rpc_overhead_quick() -> None:
    found = results(run("rpc_overhead.py", "--quick"))
    for name in (
        "bare_unary_call",
        "bare_cycle",
        "kubelet_core_cycle",
        "driver_cycle_raw_stubs",
        "harness_cycle",
        "full_cycle",
    ):
        (line,) = found[name]
        assert line["n"] == "20"
        assert float(line["median_us"]) > 0
    (ratio,) = found["ratio"]
    for key in ("harness_over_bare_cycle", "full_over_bare_cycle", "full_over_driver_cycle"):
        assert float(ratio[key]) > 0
    for arrangement in ("cold", "rotation"):  # printed alongside the headline
        (line,) = found[arrangement]
        bare, harness = float(line["bare_cycle_median_us"]), float(line["harness_cycle_median_us"])
        assert float(line["harness_over_bare_cycle"]) == pytest.approx(harness / bare, rel=1e-3)


@pytest.mark.timeout(90)
def test_rpc_overhead_quick_with_fsync_and_memory_checkpoint() -> None:
    output = run("rpc_overhead.py", "--quick", "--fsync", "--checkpoint", "memory", "--cpu")
    assert "checkpoint=memory fsync=True" in output
    found = results(output)
    assert float(found["ratio"][0]["harness_over_bare_cycle"]) > 0
    (cpu,) = found["drasim_cpu_no_network"]
    assert cpu["n"] == "140"  # 7 rounds of --iterations cycles
    assert float(cpu["median_us"]) > 0
    assert 0 < float(cpu["user_share"]) <= 1


@pytest.mark.timeout(90)
def test_rpc_overhead_quick_diagnostics() -> None:
    """The optional views name functions of drasim: they must still exist (no AttributeError)."""
    output = run("rpc_overhead.py", "--quick", "--breakdown", "--opcodes", "--threads", "--profile")
    assert "whole cycle" in output
    assert "checkpoint writes (3 per cycle)" in output
    assert re.search(r"^ *\d+ +harness cycle$", output, re.M), output
    assert "bare cycle: wall" in output
    assert "cProfile of" in output
    assert float(results(output)["ratio"][0]["harness_over_bare_cycle"]) > 0


@pytest.mark.timeout(90)
def test_scale_quick() -> None:
    found = results(run("scale.py", "--quick"))
    assert [line["pods"] for line in found["pods"]] == ["1", "3"]
    for line in found["pods"]:
        assert float(line["prepare_all_s"]) > 0
        assert int(line["checkpoint_bytes_full"]) > 0
    assert [line["pods"] for line in found["pods_memory"]] == ["1", "3"]
    for line in found["pods_memory"]:
        assert float(line["prepare_peak_kib"]) > 0
    writes = found["checkpoint_write"]
    assert [line["entries"] for line in writes] == ["0", "1", "10"]
    sizes = [int(line["bytes"]) for line in writes]
    assert sizes == sorted(sizes)
    assert sizes[0] < sizes[1] < sizes[2]
    incremental = found["checkpoint_write_incremental"]
    assert [line["entries"] for line in incremental] == ["0", "1", "10"]
    for line in found["pods"]:
        assert float(line["cpu_s"]) > 0
        assert int(line["driver_state_bytes_full"]) > 0


@pytest.mark.timeout(90)
def test_apiserver_bench_small() -> None:
    output = run("apiserver_bench.py", "--gets", "20", "--events", "50")
    assert re.search(rf"GET claim \(in-process\)\s+n=20\s+mean=\s*{NUMBER}us", output), output
    assert "WATCH events" in output, output


@pytest.mark.timeout(120)
def test_scenario_throughput_quick_per_backend() -> None:
    found = results(
        run("scenario_throughput.py", "--quick", "--jobs", "1", "--backend", "memory", "http", "kubeconfig")
    )
    rows = {row["backend"]: row for row in found["scenario_throughput"]}
    assert sorted(rows) == ["http", "kubeconfig", "memory"]
    for backend, row in rows.items():
        assert row["scenarios"] == "5"
        assert row["passed"] == row["ran"], (
            backend
        )  # what ran passed; the kubeconfig backend skips fault scenarios
        assert re.fullmatch(NUMBER, row["per_s"])
    assert rows["memory"]["ran"] == rows["http"]["ran"] == "5"


@pytest.mark.timeout(90)
def test_proxy_overhead_quick() -> None:
    found = results(run("proxy_overhead.py", "--quick"))
    for name in (
        "proxy_direct_call",
        "proxy_spliced_call",
        "proxy_spliced_unrecorded_call",
        "proxy_proxied_call",
        "proxy_proxied_unrecorded_call",
        "proxy_bare_hop_call",
    ):
        (line,) = found[name]
        assert line["n"] == "150"
        assert float(line["median_us"]) > 0
    (overhead,) = found["proxy_overhead"]
    assert int(overhead["journaled"]) > 150  # every proxied call recorded (and the GetInfo)
    (spliced,) = found["proxy_splice_overhead"]
    assert int(spliced["journaled"]) == int(overhead["journaled"])  # the splice journals every call too


@pytest.mark.timeout(90)
def test_splice_reader_quick() -> None:
    found = results(run("splice_reader.py", "--quick"))
    assert len(found["splice_reader_hpack"]) == len(found["splice_reader_call"]) == 3
    for line in found["splice_reader_call"]:
        assert float(line["frames_us"]) > 0
        assert float(line["frames_and_journal_forms_us"]) > 0
