"""``--drasim-kubelet-profile``: change the emulated kubelet of every scenario.

The value is either a named profile or a YAML file:

``default``
    Leave every scenario's ``spec.kubelet`` as written.
``v1-only`` / ``v1beta1-only``
    The kubelet supports only ``v1.DRAPlugin`` / only ``v1beta1.DRAPlugin`` (to check
    a driver against an older or a newer kubelet).
``path/to/profile.yaml``
    A mapping with ``spec.kubelet`` keys (``node``, ``services``, ``timers``,
    ``timeScale``, ``rePrepareAfterRestart``), optionally under a top-level
    ``kubelet:`` key. Only the keys written override the scenario's values; under
    ``timers`` likewise only the timers written.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from drasim.apiversions import DRA_APIS
from drasim.errors import ConfigError
from drasim.scenario.decoder import INVALID, Decoder
from drasim.scenario.schema import KubeletProfile, Scenario, Timers
from drasim.scenario.yamlsrc import Loc, parse_documents, yaml_error_loc

NAMED_PROFILES: dict[str, dict[str, Any]] = {
    "default": {},
    # "v1-only", "v1beta1-only": one per default row of the table of plugin API versions.
    **{f"{api.version}-only": {"services": [api.service]} for api in DRA_APIS if api.default},
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True)
class ProfileOverride:
    """Fields of :class:`KubeletProfile` (and of its :class:`Timers`) to replace in each scenario."""

    source: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    timers: Mapping[str, Any] = field(default_factory=dict)

    def apply(self, scenario: Scenario) -> Scenario:
        """``scenario`` with its kubelet profile overridden (the same object when nothing changes)."""
        if not self.fields and not self.timers:
            return scenario
        kubelet = scenario.spec.kubelet
        changes = dict(self.fields)
        if self.timers:
            changes["timers"] = dataclasses.replace(kubelet.timers, **self.timers)
        spec = dataclasses.replace(scenario.spec, kubelet=dataclasses.replace(kubelet, **changes))
        return dataclasses.replace(scenario, spec=spec)


def load_profile(value: str, base: Path) -> ProfileOverride:
    """A named profile, or a YAML file (relative paths from ``base``); ConfigError when invalid."""
    if value in NAMED_PROFILES:
        return _decode(NAMED_PROFILES[value], value, Loc(value, 1, 1))
    path = Path(value)
    if not path.is_absolute():
        path = base / path
    if not path.is_file():
        names = ", ".join(NAMED_PROFILES)
        msg = f"kubelet profile {value!r} is neither a named profile ({names}) nor a file ({path} is missing)"
        raise ConfigError(msg)
    try:
        text = path.read_text(encoding="utf-8")
        documents, _ = parse_documents(text, str(path))
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read kubelet profile: {err}") from None
    except yaml.YAMLError as err:
        loc, message = yaml_error_loc(err, str(path))
        raise ConfigError(f"{loc}: {message}") from None
    data = [d for d in documents if d.data is not None]
    if len(data) != 1 or not isinstance(data[0].data, dict):
        raise ConfigError(f"{path}:1:1: a kubelet profile file holds one YAML mapping")
    mapping = data[0].data
    if set(mapping) == {"kubelet"}:
        mapping = mapping["kubelet"]
        if not isinstance(mapping, dict):
            raise ConfigError(f"{path}: kubelet: expected a mapping")
    return _decode(mapping, str(path), data[0].loc)


def _decode(mapping: Mapping[str, Any], source: str, loc: Loc) -> ProfileOverride:
    decoder = Decoder(source)
    data = mapping if isinstance(mapping, dict) else dict(mapping)
    profile = decoder.decode_dataclass(data, KubeletProfile, "kubelet", getattr(mapping, "loc", loc))
    if profile is INVALID or decoder.problems:
        problems = "; ".join(str(p) for p in decoder.problems) or "invalid kubelet profile"
        raise ConfigError(f"kubelet profile: {problems}")
    assert isinstance(profile, KubeletProfile)
    fields = {_snake(k): getattr(profile, _snake(k)) for k in mapping if k != "timers"}
    timers: dict[str, Any] = {}
    raw_timers = mapping.get("timers")
    if isinstance(raw_timers, Mapping):
        decoded: Timers = profile.timers
        timers = {_snake(k): getattr(decoded, _snake(k)) for k in raw_timers}
    return ProfileOverride(source, fields, timers)
