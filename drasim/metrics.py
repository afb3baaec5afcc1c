"""A small, thread-safe metrics registry with Prometheus text output.

The emulated kubelet records the upstream DRA metrics here
(``dra_operations_duration_seconds``, ``dra_grpc_operations_duration_seconds``,
``dra_resource_claims_in_use``) so that scenarios can assert on them and
reports can show them. It is deliberately tiny: no client library is needed for
three metric families.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

Labels = tuple[tuple[str, str], ...]

DEFAULT_BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


def _labels(values: Mapping[str, str]) -> Labels:
    return tuple(sorted(values.items()))


#: The sorted key of each label set seen, by its items in call order: the same few label
#: sets come back on every call, and sorting them again each time showed in profiles.
_LABEL_KEYS: dict[tuple[tuple[str, str], ...], Labels] = {}
_LABEL_KEYS_LIMIT = 4096


def _labels_cached(values: dict[str, str]) -> Labels:
    items = tuple(values.items())
    key = _LABEL_KEYS.get(items)
    if key is None:
        key = tuple(sorted(items))
        if len(_LABEL_KEYS) < _LABEL_KEYS_LIMIT:
            _LABEL_KEYS[items] = key
    return key


@dataclass
class _HistogramSeries:
    """One histogram series; ``counts[i]`` holds the observations in bucket ``i`` alone
    (``buckets[i-1] < v <= buckets[i]``), cumulated only when the series is read.
    :meth:`Histogram.observe` adds to it."""

    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    count: int = 0

    def cumulative(self) -> list[int]:
        """Prometheus ``le`` counts: observations at or below each bound."""
        out: list[int] = []
        running = 0
        for count in self.counts or [0] * len(self.buckets):
            running += count
            out.append(running)
        return out


@dataclass
class _Family:
    name: str
    kind: str  # "histogram" or "gauge"
    help: str
    buckets: tuple[float, ...] = DEFAULT_BUCKETS
    series: dict[Labels, _HistogramSeries | float] = field(default_factory=dict)


class Histogram:
    """One histogram series, held to observe into again and again (:meth:`Metrics.histogram`)."""

    __slots__ = ("_lock", "_series")

    def __init__(self, lock: threading.Lock, series: _HistogramSeries) -> None:
        self._lock = lock
        self._series = series

    def observe(self, value: float) -> None:
        """Add one observation (as :meth:`Metrics.observe` does)."""
        series = self._series
        with self._lock:
            buckets = series.buckets
            index = bisect.bisect_left(buckets, value)
            if index < len(buckets):
                counts = series.counts
                if not counts:
                    counts = series.counts = [0] * len(buckets)
                counts[index] += 1
            series.total += value
            series.count += 1


class HistogramVec:
    """The series of one histogram family by their label values, in a fixed label order (as
    client_golang's ``HistogramVec``): each series is looked up once, then held."""

    __slots__ = ("_held", "_label_names", "_metrics", "_name")

    def __init__(self, metrics: Metrics, name: str, label_names: tuple[str, ...]) -> None:
        self._metrics = metrics
        self._name = name
        self._label_names = label_names
        self._held: dict[tuple[str, ...], Histogram] = {}

    def observe(self, value: float, *label_values: str) -> None:
        """Add one observation to the series with ``label_values`` (one per label name)."""
        histogram = self._held.get(label_values)
        if histogram is None:
            labels = dict(zip(self._label_names, label_values, strict=True))
            histogram = self._held[label_values] = self._metrics.histogram(self._name, **labels)
        histogram.observe(value)


class Metrics:
    """Histograms and gauges keyed by name and labels."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._families: dict[str, _Family] = {}
        self._collectors: dict[str, Callable[[], Sequence[tuple[Mapping[str, str], float]]]] = {}

    def describe(
        self, name: str, *, kind: str, help_text: str, buckets: Sequence[float] = DEFAULT_BUCKETS
    ) -> None:
        """Declare a family (idempotent) so it shows in output before its first sample."""
        with self._lock:
            self._families.setdefault(name, _Family(name, kind, help_text, tuple(buckets)))

    def collect(self, name: str, samples: Callable[[], Sequence[tuple[Mapping[str, str], float]]]) -> None:
        """Compute gauge family ``name`` when it is read: ``samples()`` gives every series then
        (as :meth:`set_gauge_family` takes them), like a Prometheus collector. A later call for
        the same name replaces the earlier collector. ``samples`` is called without this
        registry's lock held, from whichever thread reads."""
        with self._lock:
            self._collectors[name] = samples

    def reset(self) -> None:
        """Forget every series and collector, keeping the declared families: what a restarted
        kubelet process exposes (its Prometheus registry lives in the process; upstream's
        counts start from zero after a restart)."""
        with self._lock:
            self._collectors.clear()
            for family in self._families.values():
                family.series.clear()

    def _collected(self) -> None:
        """Run the collectors, before a read."""
        if not self._collectors:
            return
        with self._lock:
            collectors = list(self._collectors.items())
        for name, samples in collectors:
            self.set_gauge_family(name, samples())

    def _family(self, name: str, kind: str) -> _Family:
        family = self._families.get(name)
        if family is None:
            family = self._families[name] = _Family(name, kind, "")
        return family

    def observe(self, name: str, value: float, **labels: str) -> None:
        """Add one observation to a histogram series (a caller that observes into the same
        series often holds it instead: :meth:`histogram`)."""
        self.histogram(name, **labels).observe(value)

    def histogram(self, name: str, **labels: str) -> Histogram:
        """The histogram series of ``name`` with ``labels`` (created, empty, if new), for a caller
        that observes into the same series often: its :meth:`Histogram.observe` skips the lookup."""
        key = _labels_cached(labels)
        with self._lock:
            family = self._family(name, "histogram")
            series = family.series.get(key)
            if series is None:
                series = family.series[key] = _HistogramSeries(family.buckets)
            assert isinstance(series, _HistogramSeries)
        return Histogram(self._lock, series)

    def histogram_vec(self, name: str, *label_names: str) -> HistogramVec:
        """Histogram family ``name`` observed by label values in the order of ``label_names``."""
        return HistogramVec(self, name, label_names)

    def set_gauge(self, name: str, value: float, **labels: str) -> None:
        """Set a gauge series."""
        with self._lock:
            self._family(name, "gauge").series[_labels(labels)] = value

    def set_gauge_family(self, name: str, samples: Sequence[tuple[Mapping[str, str], float]]) -> None:
        """Replace every series of a gauge family at once.

        For gauges that upstream computes from current state at scrape time (a
        collector): a series that no longer applies disappears instead of staying at
        its last value.
        """
        with self._lock:
            family = self._family(name, "gauge")
            family.series = {_labels(labels): float(value) for labels, value in samples}

    def gauge(self, name: str, **labels: str) -> float | None:
        """A gauge's value, or ``None`` if the series was never set."""
        self._collected()
        with self._lock:
            family = self._families.get(name)
            value = None if family is None else family.series.get(_labels(labels))
            return value if isinstance(value, float | int) else None

    def histogram_count(self, name: str, **labels: str) -> int:
        """How many observations a histogram series holds (0 if none)."""
        self._collected()
        with self._lock:
            family = self._families.get(name)
            series = None if family is None else family.series.get(_labels(labels))
            return series.count if isinstance(series, _HistogramSeries) else 0

    def series(self, name: str) -> dict[Labels, float | int]:
        """Every series of a family: gauge values, or histogram counts."""
        self._collected()
        with self._lock:
            family = self._families.get(name)
            if family is None:
                return {}
            return {
                key: (value.count if isinstance(value, _HistogramSeries) else value)
                for key, value in family.series.items()
            }

    def to_text(self) -> str:
        """Prometheus text exposition format, families and series sorted."""
        lines: list[str] = []
        self._collected()
        with self._lock:
            for name in sorted(self._families):
                family = self._families[name]
                if family.help:
                    lines.append(f"# HELP {name} {family.help}")
                lines.append(f"# TYPE {name} {family.kind}")
                for key in sorted(family.series):
                    value = family.series[key]
                    if isinstance(value, _HistogramSeries):
                        lines.extend(_histogram_lines(name, key, value))
                    else:
                        lines.append(f"{name}{_fmt(key)} {_num(value)}")
        return "\n".join(lines) + "\n"


def _fmt(key: Labels, extra: tuple[str, str] | None = None) -> str:
    items = list(key) + ([extra] if extra else [])
    if not items:
        return ""
    inner = ",".join(f'{k}="{v}"' for k, v in items)
    return "{" + inner + "}"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _histogram_lines(name: str, key: Labels, series: _HistogramSeries) -> list[str]:
    counts = series.cumulative()
    lines = [
        f"{name}_bucket{_fmt(key, ('le', _num(bound)))} {count}"
        for bound, count in zip(series.buckets, counts, strict=True)
    ]
    lines.append(f"{name}_bucket{_fmt(key, ('le', '+Inf'))} {series.count}")
    lines.append(f"{name}_sum{_fmt(key)} {series.total!r}")
    lines.append(f"{name}_count{_fmt(key)} {series.count}")
    return lines
