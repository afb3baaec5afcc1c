"""Pod and claim manifests with generated, reproducible names (faker when installed)."""

from __future__ import annotations

import random
import re
from typing import Any

_WORDS = (
    "amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor",
    "indigo", "juniper", "kelp", "lumen", "maple", "nickel", "onyx", "pebble",
)  # fmt: skip


class PodClaimFactory:
    """Names and manifests for tests; the same seed gives the same names (per test under xdist too)."""

    def __init__(self, seed: int | str = 0, driver: str = "gpu.example.com") -> None:
        self.driver = driver
        self._random = random.Random(str(seed))
        self._used: set[str] = set()
        try:
            from faker import Faker
        except ImportError:  # faker is optional: fall back to a small word list
            self._faker: Any = None
        else:
            self._faker = Faker()
            self._faker.seed_instance(str(seed))

    def _word(self) -> str:
        word = str(self._faker.word()) if self._faker is not None else self._random.choice(_WORDS)
        return re.sub(r"[^a-z0-9-]", "", word.lower()) or "x"

    def name(self, prefix: str) -> str:
        """A fresh DNS-1123 name ``<prefix>-<word>-<n>``, never returned twice by this factory."""
        while True:
            candidate = f"{prefix}-{self._word()}-{self._random.randrange(1000)}"
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate

    def pod_name(self) -> str:
        """A fresh pod name."""
        return self.name("pod")

    def claim_name(self) -> str:
        """A fresh claim name."""
        return self.name("claim")

    def device_class(self, driver: str = "") -> dict[str, Any]:
        """A DeviceClass named after the driver that selects all of its devices."""
        from drasim.scenario.loader import device_class_manifest

        return device_class_manifest(driver or self.driver)

    def claim(
        self,
        name: str = "",
        *,
        namespace: str = "default",
        driver: str = "",
        count: int = 1,
        requests: tuple[str, ...] = ("req-0",),
    ) -> dict[str, Any]:
        """A ResourceClaim asking ``count`` devices of the driver's DeviceClass per request."""
        from drasim.scenario.loader import claim_manifest
        from drasim.scenario.schema import ClaimShorthand

        shorthand = ClaimShorthand(
            name=name or self.claim_name(), namespace=namespace, requests=list(requests), count=count
        )
        return claim_manifest(shorthand, driver or self.driver)

    def pod_step(self, claims: list[str], name: str = "", **extra: Any) -> dict[str, Any]:
        """A ``startPod`` step for :meth:`DrasimNode.step` using these claims."""
        return {"startPod": {"name": name or self.pod_name(), "claims": list(claims), **extra}}
