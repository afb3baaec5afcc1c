"""The CEL subset: parsing, evaluation, unqualified attributes, errors."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from drasim.allocator import AllocationError
from drasim.allocator.cel import SelectorRuntimeError, compile_selector, device_env
from drasim.allocator.quantity import parse_quantity

DEVICE = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "A100"},
        "index": {"int": 0},
        "healthy": {"bool": True},
        "driverVersion": {"version": "1.2.0-rc.1"},
        "example.com/family": {"string": "ampere"},
    },
    "capacity": {"memory": {"value": "80Gi"}, "example.com/slots": {"value": "4"}},
}


def matches(expression: str, device: dict[str, Any] | None = None) -> bool:
    return compile_selector(expression).matches(device_env("gpu.example.com", device or DEVICE))


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.example.com"', True),
        ("device.driver != 'gpu.example.com'", False),
        ('device.attributes["gpu.example.com"].model == "A100"', True),
        ('device.attributes["gpu.example.com"].healthy', True),
        ('device.attributes["example.com"].family == "ampere"', True),
        ('device.attributes["gpu.example.com"].index == 0', True),
        ('device.attributes["gpu.example.com"].index > 0', False),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) == 0', True),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("81920Mi"))', False),
        ('device.capacity["example.com"].slots.isGreaterThan(quantity("3"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.2.0"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.compareTo(semver("1.1.9")) > 0', True),
        ('"model" in device.attributes["gpu.example.com"]', True),
        ('"numa" in device.attributes["gpu.example.com"]', False),
        ('"x" in device.attributes["unknown.domain"]', False),
        ('device.attributes["gpu.example.com"].model.startsWith("A1")', True),
        ('device.attributes["gpu.example.com"].model.contains("10")', True),
        ("device.allowMultipleAllocations", False),
        ("true && (false || !false)", True),
        ('device.driver == "other" && device.attributes["other"].missing == 1', False),
        ('device.driver == "gpu.example.com" || device.attributes["other"].missing == 1', True),
    ],
)
def test_evaluates(expression: str, expected: bool) -> None:
    assert matches(expression) is expected


@pytest.mark.parametrize(
    "expression",
    [
        'cel.bind(x, device.attributes["a"], x.b)',
        "device.attributes.exists(k, k == 'a')",
        "size(device.attributes) > 0",
        "device.driver == ",
        "device.driver === 'x'",
        'device.attributes["gpu.example.com"].model.matches("^A[0-9]+$")',
        'device.attributes["gpu.example.com"].model.lowerAscii() == "a100"',
        "1 + 2 == 3",
        "[1, 2]",
        "",
    ],
)
def test_outside_the_subset_is_not_supported(expression: str) -> None:
    with pytest.raises(AllocationError, match=r"^selector not supported: "):
        compile_selector(expression)


@pytest.mark.parametrize(
    ("expression", "needle"),
    [
        ('device.attributes["gpu.example.com"].numa == 1', "no such key"),
        ('device.attributes["gpu.example.com"].model', "not a boolean"),
        ('device.attributes["gpu.example.com"].model > 1', "cannot compare"),
        ("device.serial == 'x'", "no such field"),
        ('device.capacity["gpu.example.com"].memory.compareTo(semver("1.0.0")) == 0', "unsupported call"),
    ],
)
def test_runtime_errors(expression: str, needle: str) -> None:
    with pytest.raises(SelectorRuntimeError, match=needle):
        matches(expression)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80Gi", Fraction(80 * 2**30)),
        ("500m", Fraction(1, 2)),
        ("1.5k", Fraction(1500)),
        ("1e3", Fraction(1000)),
        ("2", Fraction(2)),
        ("100n", Fraction(1, 10**7)),
    ],
)
def test_quantities(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


def test_bad_quantity() -> None:
    with pytest.raises(AllocationError, match="invalid quantity"):
        parse_quantity("lots")
