"""The metrics registry: histogram buckets, label sets and the Prometheus text."""

from __future__ import annotations

import math

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
