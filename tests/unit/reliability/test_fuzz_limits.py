"""Fuzzing the numbers of a scenario: ``drasim validate`` rejects it, or it runs in bounded time and memory.

One scenario exercises the numeric fields that cost time or memory when large (devices,
claim sizes, timers, time scale, delays, downtimes, advanceClock, fault counts, parallel
width, expectation counts); the clock and restarts come first, then faults, pods and
expectations, so that a failing step cuts off as little as possible. Each example either
keeps every field within its declared bounds, or puts one field outside them (above the
maximum, below the minimum, not finite, a huge integer). The property:

* out of bounds: ``drasim validate`` exits 2, no traceback, and a problem names the file,
  a line and the field;
* within bounds: it validates, and ``run_scenario`` with a small time limit returns within
  that limit plus the abort grace, with peak memory growth under a budget, and never with
  an internal error.

Deterministic (derandomized, no example database) and sized for CI: about 20 examples.
"""

from __future__ import annotations

import contextlib
import io
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasim import limits
from drasim.cli import main
from drasim.report.model import RESULTS
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.runner.session import ABORT_GRACE
from drasim.scenario import load_paths
from drasim.scenario.common import MAX_HEALTH_TIMEOUT_SECONDS

TIME_LIMIT = 1.5
"""Real seconds each fuzzed run may take (``scenario_timeout``)."""
SLACK = 5.0
"""Real seconds for set-up and teardown around the limit, on a loaded CI machine."""
MEMORY_BUDGET = 300 * 1024 * 1024
"""Peak resident memory a fuzzed run may add."""


@dataclass(frozen=True)
class Knob:
    """One numeric field of the scenario, its YAML key and its declared bounds."""

    name: str
    key: str
    low: float
    high: float
    integer: bool
    typical: float


KNOBS = [
    Knob("devices", "devices", 0, limits.MAX_NODE_DEVICES, True, 4),
    Knob("time_scale", "timeScale", 0, limits.MAX_TIME_SCALE, False, 0.01),
    Knob("call_timeout", "callTimeout", 0, limits.MAX_DURATION, False, 45),
    Knob("reconcile_period", "reconcilePeriod", 1, limits.MAX_DURATION, False, 60),
    Knob("backoff_period", "backoffPeriod", 1, limits.MAX_DURATION, False, 10),
    Knob("resync_interval", "resyncInterval", 1, limits.MAX_DURATION, False, 60),
    Knob("retry_jitter", "retryJitter", 0, 1, False, 1),
    Knob("wiping_delay", "wipingDelay", 0, limits.MAX_DURATION, False, 30),
    Knob("count", "count", 1, limits.MAX_CLAIM_DEVICES, True, 1),
    Knob("requests", "requests", 1, limits.MAX_CLAIM_REQUESTS, True, 1),
    Knob("delay", "delay", 0, limits.MAX_DURATION, False, 0.5),
    Knob("times", "times", 0, limits.MAX_COUNT, True, 1),
    Knob("after", "after", 0, limits.MAX_COUNT, True, 0),
    Knob("api_delay", "delay", 0, limits.MAX_DURATION, False, 0.5),
    Knob("api_times", "times", 0, limits.MAX_COUNT, True, 2),
    Knob("pods", "steps", 1, limits.MAX_PARALLEL_STEPS, True, 2),
    Knob("seconds", "seconds", 0, limits.MAX_DURATION, False, 90),
    Knob("kubelet_downtime", "downtime", 0, limits.MAX_DURATION, False, 5),
    Knob("plugin_downtime", "downtime", 0, limits.MAX_DURATION, False, 5),
    Knob("health_timeout", "timeoutSeconds", 0, MAX_HEALTH_TIMEOUT_SECONDS, True, 30),
    Knob("prepares", "NodePrepareResources", 0, limits.MAX_COUNT, True, 1),
    Knob("slices", "count", 0, limits.MAX_COUNT, True, 1),
    Knob("entries", "entries", 0, limits.MAX_COUNT, True, 1),
]
LISTS = {"requests", "pods"}  # list lengths, not numbers


def scenario(values: dict[str, Any]) -> dict[str, Any]:
    """The scenario document with every knob filled in."""
    v = values
    pods = [{"startPod": {"name": f"p{i}", "claims": ["gpu"]}} for i in range(v["pods"])]
    return {
        "apiVersion": "drasim.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "fuzzed-numbers", "description": "Every numeric knob at once."},
        "spec": {
            "driver": {"fake": {"name": "gpu.example.com", "devices": v["devices"], "health": True}},
            "kubelet": {
                "timeScale": v["time_scale"],
                "timers": {
                    "callTimeout": v["call_timeout"],
                    "reconcilePeriod": v["reconcile_period"],
                    "backoffPeriod": v["backoff_period"],
                    "resyncInterval": v["resync_interval"],
                    "retryJitter": v["retry_jitter"],
                    "wipingDelay": v["wiping_delay"],
                },
            },
            "claims": [
                {"name": "gpu", "count": v["count"], "requests": [f"r{i}" for i in range(v["requests"])]}
            ],
            "steps": [
                {"advanceClock": v["seconds"]},
                {"restartKubelet": {"downtime": v["kubelet_downtime"]}},
                {"restartPlugin": {"downtime": v["plugin_downtime"]}},
                {
                    "setDeviceHealth": {
                        "device": "gpu-0",
                        "health": "Unhealthy",
                        "timeoutSeconds": v["health_timeout"],
                    }
                },
                {
                    "fault": {
                        "plugin": {
                            "rpc": "NodePrepareResources",
                            "code": "UNAVAILABLE",
                            "delay": v["delay"],
                            "times": v["times"],
                            "after": v["after"],
                        }
                    }
                },
                {
                    "fault": {
                        "apiServer": {
                            "verb": "watch",
                            "dropWatches": True,
                            "delay": v["api_delay"],
                            "times": v["api_times"],
                        }
                    }
                },
                {"parallel": pods},
                {"advanceClock": v["seconds"]},
                {"expectCalls": {"NodePrepareResources": v["prepares"]}},
                {"expectResourceSlices": {"count": v["slices"]}},
                {"expectCheckpoint": {"entries": v["entries"]}},
            ],
        },
    }


def _inside(knob: Knob) -> st.SearchStrategy[Any]:
    """A value within the bounds, mostly the edges and the usual value."""
    low, high = knob.low, knob.high
    if knob.name in LISTS or knob.integer:
        lo, hi = int(low), int(high)
        return st.one_of(st.sampled_from([lo, int(knob.typical), hi]), st.integers(lo, hi))
    return st.one_of(
        st.sampled_from([low, knob.typical, high]),
        st.floats(low, high, allow_nan=False, allow_infinity=False),
    )


def _outside(knob: Knob) -> st.SearchStrategy[Any]:
    """A value the field must refuse: beyond a bound, not finite, or an absurdly large integer."""
    low, high = knob.low, knob.high
    if knob.name in LISTS:
        return st.integers(int(high) + 1, int(high) + 40)
    if knob.integer:
        return st.one_of(
            st.integers(int(high) + 1, int(high) * 10 + 10),
            st.integers(-(10**6), int(low) - 1),
            st.just(10**40),
        )
    return st.one_of(
        st.floats(high * 1.0001 + 1e-9, 1e300),
        st.floats(-1e300, low - 1e-6) if low > -1e300 else st.nothing(),
        st.sampled_from([math.nan, math.inf, -math.inf, 10**400]),
    )


@st.composite
def examples(draw: st.DrawFn) -> tuple[dict[str, Any], Knob | None]:
    values = {knob.name: draw(_inside(knob)) for knob in KNOBS}
    bad: Knob | None = None
    if draw(st.booleans()):
        bad = draw(st.sampled_from(KNOBS))
        values[bad.name] = draw(_outside(bad))
    return values, bad


def _validate(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["validate", str(path)])
    return code, out.getvalue() + err.getvalue()


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def _run_measured(path: Path) -> tuple[Any, float, int]:
    """Run the scenario; (result, real seconds, peak resident memory growth in bytes)."""
    (loaded,) = load_paths([path])
    baseline, peak = _rss(), 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.01):
            peak = max(peak, _rss() - baseline)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    try:
        result = run_scenario(loaded, RunOptions(scenario_timeout=TIME_LIMIT), results=RESULTS)
    finally:
        elapsed = time.monotonic() - started
        done.set()
        sampler.join()
    return result, elapsed, max(peak, _rss() - baseline)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc to measure memory")
# A background thread that dies (the plugin reconciler once overflowed a lock timeout) is a failure.
@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.timeout(360)  # 20 whole runs at the limits: 80 s alone, over 120 s beside the parallel suite
@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(example=examples())
def test_numbers_are_refused_or_the_run_is_bounded(
    example: tuple[dict[str, Any], Knob | None], tmp_path: Path
) -> None:
    values, bad = example
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(scenario(values), sort_keys=False), encoding="utf-8")
    started = time.monotonic()
    code, output = _validate(path)
    assert time.monotonic() - started < SLACK, "drasim validate took too long"
    assert "Traceback" not in output
    if bad is not None:
        assert code == 2, f"{bad.name}={values[bad.name]!r} was accepted"
        named = [
            line for line in output.splitlines() if line.startswith(f"{path}:") and f".{bad.key}" in line
        ]
        assert named, f"no problem names {bad.key!r}:\n{output}"
        return
    assert code == 0, output
    result, elapsed, grown = _run_measured(path)
    assert elapsed <= TIME_LIMIT + ABORT_GRACE + SLACK, f"{elapsed:.1f}s with {values}"
    assert grown <= MEMORY_BUDGET, f"{grown / 2**20:.0f} MiB with {values}"
    message = result.failure.message if result.failure is not None else ""
    assert "internal error" not in message, message
