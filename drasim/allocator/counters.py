"""Shared counters of partitionable devices (``sharedCounters`` / ``consumesCounters``).

A pool may publish counter sets (for example the memory of one physical GPU) and
devices that consume from them (its partitions). A combination of devices fits
when, for every counter, what other claims already hold plus what the new
devices consume stays within the published value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from drasim.allocator.inventory import DeviceKey, flat_device, newest_pools
from drasim.allocator.quantity import parse_quantity

CounterKey = tuple[str, str, str, str]  # driver, pool, counter set, counter


@dataclass
class CounterBook:
    """Counter values per pool, what each device consumes, and what is already held."""

    available: dict[CounterKey, Fraction] = field(default_factory=dict)
    consumes: dict[DeviceKey, dict[CounterKey, Fraction]] = field(default_factory=dict)
    held: dict[CounterKey, Fraction] = field(default_factory=dict)

    def fits(self, devices: Iterable[DeviceKey]) -> bool:
        """Whether allocating ``devices`` on top of the held amounts stays within every counter."""
        total: dict[CounterKey, Fraction] = {}
        for device in devices:
            for key, amount in self.consumes.get(device, {}).items():
                total[key] = total.get(key, self.held.get(key, Fraction(0))) + amount
        return all(amount <= self.available.get(key, Fraction(0)) for key, amount in total.items())


def counter_book(slices: Iterable[Mapping[str, Any]], in_use: Iterable[DeviceKey]) -> CounterBook:
    """Read counters from the newest generation of every pool and charge the devices in use."""
    book = CounterBook()
    for pool in newest_pools(slices):
        for item in pool.slices:
            spec = item["spec"]
            for counter_set in spec.get("sharedCounters") or []:
                for name, counter in (counter_set.get("counters") or {}).items():
                    key = (pool.driver, pool.name, counter_set.get("name", ""), name)
                    book.available[key] = parse_quantity(str(counter.get("value", "0")))
            for device in map(flat_device, spec.get("devices") or []):
                usage = _consumption(pool.driver, pool.name, device)
                if usage:
                    book.consumes[(pool.driver, pool.name, device.get("name", ""))] = usage
    for held in in_use:
        for key, amount in book.consumes.get(held, {}).items():
            book.held[key] = book.held.get(key, Fraction(0)) + amount
    return book


def _consumption(driver: str, pool: str, device: Mapping[str, Any]) -> dict[CounterKey, Fraction]:
    usage: dict[CounterKey, Fraction] = {}
    for entry in device.get("consumesCounters") or []:
        for name, counter in (entry.get("counters") or {}).items():
            key = (driver, pool, entry.get("counterSet", ""), name)
            usage[key] = usage.get(key, Fraction(0)) + parse_quantity(str(counter.get("value", "0")))
    return usage
