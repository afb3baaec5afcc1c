"""The metrics registry: histogram buckets, label sets and the Prometheus text."""

from __future__ import annotations

import math

import pytest

from drasim.metrics import Metrics


def test_histogram_buckets_are_cumulative_in_the_text():
    metrics = Metrics()
    metrics.describe("d", kind="histogram", help_text="h", buckets=(0.1, 1.0))
    for value in (0.05, 0.1, 0.5, 2.0, math.nan):
        metrics.observe("d", value, op="x")
    text = metrics.to_text()
    # 0.05, 0.1 and NaN (which bisects to the first bucket) are <= 0.1; 0.5 adds one at 1.0.
    assert 'd_bucket{op="x",le="0.1"} 3\n' in text
    assert 'd_bucket{op="x",le="1"} 4\n' in text
    assert 'd_bucket{op="x",le="+Inf"} 5\n' in text
    assert 'd_count{op="x"} 5\n' in text
    assert metrics.histogram_count("d", op="x") == 5


def test_a_series_above_every_bound_has_zero_buckets():
    metrics = Metrics()
    metrics.describe("d", kind="histogram", help_text="h", buckets=(0.1, 1.0))
    metrics.observe("d", 5.0)
    text = metrics.to_text()
    assert 'd_bucket{le="0.1"} 0\nd_bucket{le="1"} 0\nd_bucket{le="+Inf"} 1\n' in text


def test_label_order_does_not_matter():
    metrics = Metrics()
    metrics.observe("d", 0.01, a="1", b="2")
    metrics.observe("d", 0.01, b="2", a="1")
    assert metrics.histogram_count("d", b="2", a="1") == 2
    assert list(metrics.series("d")) == [(("a", "1"), ("b", "2"))]


def test_a_collected_gauge_is_computed_when_read_and_a_later_collector_takes_over() -> None:
    metrics = Metrics()
    metrics.describe("in_use", kind="gauge", help_text="claims in use")
    current = {"a": 1.0}
    calls: list[str] = []

    def first() -> list[tuple[dict[str, str], float]]:
        calls.append("first")
        return [({"driver_name": name}, value) for name, value in sorted(current.items())]

    metrics.collect("in_use", first)
    assert calls == []  # nothing is computed until somebody reads
    assert metrics.gauge("in_use", driver_name="a") == 1.0
    current.pop("a")
    current["b"] = 2.0
    assert metrics.series("in_use") == {(("driver_name", "b"),): 2.0}  # "a" is gone, not stale
    assert 'in_use{driver_name="b"} 2' in metrics.to_text()
    assert "# HELP in_use claims in use" in metrics.to_text()
    metrics.collect("in_use", lambda: [({"driver_name": "c"}, 3.0)])
    calls.clear()
    assert metrics.gauge("in_use", driver_name="c") == 3.0
    assert metrics.gauge("in_use", driver_name="b") is None
    assert calls == []  # the replaced collector is not asked any more


def test_a_held_histogram_series_counts_like_observe() -> None:
    held, plain = Metrics(), Metrics()
    for metrics in (held, plain):
        metrics.describe("d", kind="histogram", help_text="h", buckets=(0.1, 1.0))
    series = held.histogram("d", op="x", code="OK")
    assert held.histogram_count("d", code="OK", op="x") == 0  # the series exists, empty
    for value in (0.05, 0.1, 0.5, 7.0):
        series.observe(value)
        plain.observe("d", value, op="x", code="OK")
    assert held.to_text() == plain.to_text()
    assert held.histogram("d", op="x", code="OK") is not series  # a new handle ...
    held.histogram("d", code="OK", op="x").observe(0.2)  # ... on the same series
    assert held.histogram_count("d", op="x", code="OK") == 5


def test_a_histogram_vec_observes_by_label_values_in_its_label_order() -> None:
    vec_metrics, plain = Metrics(), Metrics()
    vec = vec_metrics.histogram_vec("d", "op", "code")
    for value, op, code in ((0.01, "x", "OK"), (0.2, "x", "OK"), (3.0, "y", "Unknown")):
        vec.observe(value, op, code)
        plain.observe("d", value, code=code, op=op)
    assert vec_metrics.to_text() == plain.to_text()
    assert vec_metrics.histogram_count("d", op="x", code="OK") == 2
    with pytest.raises(ValueError, match="shorter"):  # one value per label name
        vec.observe(1.0, "x")


def test_reset_forgets_series_and_collectors_like_a_restarted_process() -> None:
    metrics = Metrics()
    metrics.describe("dra_operations_duration_seconds", kind="histogram", help_text="h")
    metrics.observe(
        "dra_operations_duration_seconds", 0.1, operation_name="PrepareResources", is_error="false"
    )
    metrics.collect("dra_resource_claims_in_use", lambda: [({"driver_name": "<any>"}, 1.0)])
    assert metrics.gauge("dra_resource_claims_in_use", driver_name="<any>") == 1.0
    metrics.reset()
    assert (
        metrics.histogram_count(
            "dra_operations_duration_seconds", operation_name="PrepareResources", is_error="false"
        )
        == 0
    )
    assert metrics.gauge("dra_resource_claims_in_use", driver_name="<any>") is None
    assert "# TYPE dra_operations_duration_seconds histogram" in metrics.to_text()
