"""The upstream kubelet's metrics (Prometheus text) behind the read methods of drasim.metrics.Metrics
that ``expectMetric`` uses: ``series``, ``gauge`` and ``histogram_count``."""

from __future__ import annotations

import re

Labels = tuple[tuple[str, str], ...]

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _labels(pairs: dict[str, str]) -> Labels:
    return tuple(sorted(pairs.items()))


def _parse(text: str) -> tuple[dict[str, str], list[tuple[str, Labels, float]]]:
    """The declared types (``# TYPE``) and every sample of a Prometheus text exposition."""
    types: dict[str, str] = {}
    samples: list[tuple[str, Labels, float]] = []
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 4:
                types[parts[2]] = parts[3]
            continue
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match is None:
            continue
        labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(match[2] or "")}
        try:
            value = float(match[3])
        except ValueError:
            continue
        samples.append((match[1], _labels(labels), value))
    return types, samples


class TextMetrics:
    """Metric families parsed from Prometheus text: gauge/counter values, histogram counts."""

    def __init__(self, text: str) -> None:
        types, samples = _parse(text)
        self._gauges: dict[str, dict[Labels, float]] = {}
        self._histograms: dict[str, dict[Labels, int]] = {}
        self._types = types
        for name, key, value in samples:
            base, _, suffix = name.rpartition("_")
            if suffix in ("bucket", "sum") and types.get(base) == "histogram":
                continue  # durations: neither expectMetric nor drasim diff reads them
            if name.endswith("_count") and types.get(name[: -len("_count")]) == "histogram":
                self._histograms.setdefault(name[: -len("_count")], {})[key] = int(value)
            elif types.get(name) in ("gauge", "counter", "untyped", None):
                self._gauges.setdefault(name, {})[key] = value

    def gauge(self, name: str, **labels: str) -> float | None:
        """A gauge's (or counter's) value, or None if the series is absent."""
        return self._gauges.get(name, {}).get(_labels(labels))

    def histogram_count(self, name: str, **labels: str) -> int:
        """Observations in a histogram series (0 if none)."""
        return self._histograms.get(name, {}).get(_labels(labels), 0)

    def names(self) -> list[str]:
        """The families with at least one series, sorted."""
        return sorted({*self._gauges, *self._histograms})

    def kind(self, name: str) -> str:
        """A family's type (``gauge``, ``counter``, ``histogram``; ``untyped`` when not declared)."""
        return self._types.get(name, "untyped")

    def series(self, name: str) -> dict[Labels, float | int]:
        """Every series of a family: gauge values or histogram counts."""
        if name in self._histograms:
            return dict(self._histograms[name])
        return dict(self._gauges.get(name, {}))
