"""The configuration of one fake DRA driver instance (plain data, decodable from YAML)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drasim import apiversions
from drasim.errors import ConfigError
from drasim.limits import MAX_NODE_DEVICES
from fake_plugins.behaviour import Behaviour
from fake_plugins.decode import decode

DEVICE_NAME = re.compile(r"^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
"""A ResourceSlice device name: a DNS label."""

# Service names come from the one table of plugin API versions (drasim.apiversions).
DRA_V1 = apiversions.DRA_V1
DRA_V1BETA1 = apiversions.DRA_V1BETA1
DRA_V1ALPHA4 = apiversions.DRA_V1ALPHA4  # how kubelets 1.31-1.33 name v1alpha4 (served as /v1alpha3.Node)
HEALTH_V1ALPHA1 = apiversions.HEALTH_V1ALPHA1
HEALTH_V1 = apiversions.HEALTH_V1
DRA_SERVICES = apiversions.DEFAULT_DRA_SERVICES
KNOWN_DRA_SERVICES = apiversions.DRA_SERVICES
HEALTH_SERVICES = apiversions.HEALTH_SERVICES

DEFAULT_REGISTRY_DIR = "/var/lib/kubelet/plugins_registry"
DEFAULT_PLUGINS_DIR = "/var/lib/kubelet/plugins"
DEFAULT_CDI_DIR = "/var/run/cdi"


@dataclass
class FakeDriverConfig:
    """Where a fake driver listens and what it serves.

    ``services`` lists the gRPC services to serve; the known names among
    ``v1.DRAPlugin``, ``v1beta1.DRAPlugin``, ``v1alpha3.NodeService`` (v1alpha4),
    ``v1alpha1.DRAResourceHealth`` and
    ``v1.DRAResourceHealth`` are served, any other name is only advertised.
    ``advertise`` (when set) replaces the list GetInfo returns, in its order.
    """

    driver_name: str = "gpu.example.com"
    """DRA driver name; also the CDI vendor and the source of the CDI class."""
    registry_dir: str = DEFAULT_REGISTRY_DIR
    """Where the registration socket ``<driver>-reg.sock`` is created."""
    plugin_dir: str = ""
    """Where ``dra.sock`` is created; default ``/var/lib/kubelet/plugins/<driver>``."""
    cdi_dir: str = DEFAULT_CDI_DIR
    """Where per-claim CDI spec files are written."""
    state_dir: str = ""
    """Where the driver's own checkpoint lives; default ``plugin_dir``."""
    node_name: str = "node-1"
    """Node name: the pool name of the devices and the ResourceSlice nodeName."""
    devices: int | list[str] = 4
    """Number of devices gpu-0 .. gpu-(N-1) (prefix = the first label of the driver name), or their names."""
    services: list[str] = field(default_factory=lambda: list(DRA_SERVICES))
    """gRPC services to serve (and advertise)."""
    advertise: list[str] | None = None
    """Override of the GetInfo supported_versions list."""
    serialize: bool = True
    """Serialize prepare/unprepare calls like the stock helper."""
    journal: str = ""
    """Append every call as a JSON line to this file."""
    registration_socket: str = ""
    """Registration socket file name inside registry_dir; default ``<driver>-reg.sock``."""
    plugin_socket: str = "dra.sock"
    """DRA service socket file name inside plugin_dir."""
    publish_slices: bool = False
    """Publish the node's pool at start (ResourceSlices of at most 128 devices each)."""
    fsync: bool = True
    """fsync the state and CDI spec files on every write (they are atomic either way)."""
    behaviour: Behaviour = field(default_factory=Behaviour)
    max_devices: int = MAX_NODE_DEVICES
    """The most devices accepted (the scenario limit; benchmarks of larger nodes raise it in code)."""
    """Faults, bugs and health; see :class:`fake_plugins.behaviour.Behaviour`."""

    @classmethod
    def from_dict(cls, data: Any, where: str = "driver") -> FakeDriverConfig:
        """Decode and validate a mapping (camelCase or snake_case keys)."""
        config = decode(cls, data, where)
        config.behaviour.validate(f"{where}.behaviour")
        config.validate(where)
        return config

    def validate(self, where: str = "driver") -> None:
        """Check values that the type alone does not."""
        if not self.driver_name:
            raise ConfigError(f"{where}.driverName: required")
        if isinstance(self.devices, list):
            for i, name in enumerate(self.devices):
                if not isinstance(name, str) or not DEVICE_NAME.match(name):
                    raise ConfigError(
                        f"{where}.devices[{i}]: {name!r} is not a valid device name "
                        "(a DNS label: at most 63 lowercase letters, digits and '-', starting and "
                        "ending with a letter or digit)"
                    )
                if name in self.devices[:i]:
                    raise ConfigError(f"{where}.devices[{i}]: device name {name!r} is given twice")
            if len(self.devices) > self.max_devices:
                raise ConfigError(
                    f"{where}.devices: at most {self.max_devices} names, got {len(self.devices)}"
                )
        elif not 0 <= self.devices <= self.max_devices:
            raise ConfigError(f"{where}.devices: must be 0 to {self.max_devices}, got {self.devices}")

    @property
    def device_prefix(self) -> str:
        """``gpu`` for ``gpu.example.com``: device names are ``gpu-0``, ``gpu-1`` ..."""
        return self.driver_name.split(".", 1)[0]

    @property
    def cdi_kind(self) -> str:
        """CDI kind ``<vendor>/<class>``, e.g. ``gpu.example.com/gpu``."""
        return f"{self.driver_name}/{self.device_prefix}"

    @property
    def plugin_path(self) -> Path:
        """The DRA service socket path (the endpoint GetInfo reports)."""
        base = self.plugin_dir or f"{DEFAULT_PLUGINS_DIR}/{self.driver_name}"
        return Path(base) / self.plugin_socket

    @property
    def registration_path(self) -> Path:
        """The registration socket path."""
        name = self.registration_socket or f"{self.driver_name}-reg.sock"
        return Path(self.registry_dir) / name

    @property
    def state_directory(self) -> Path:
        """Where the driver's own checkpoint, ``prepared-claims/``, is (see fake_plugins.state)."""
        return Path(self.state_dir or self.plugin_path.parent)

    @property
    def served_dra(self) -> list[str]:
        """DRA plugin service versions actually served."""
        return [s for s in self.services if s in KNOWN_DRA_SERVICES]

    @property
    def served_health(self) -> list[str]:
        """Health service versions actually served."""
        return [s for s in self.services if s in HEALTH_SERVICES]

    @property
    def supported_versions(self) -> list[str]:
        """What GetInfo advertises."""
        return list(self.advertise if self.advertise is not None else self.services)

    def device_names(self) -> list[str]:
        """``gpu-0`` .. ``gpu-(N-1)``, or the names given."""
        if isinstance(self.devices, list):
            return list(self.devices)
        return [f"{self.device_prefix}-{i}" for i in range(self.devices)]


def load_behaviour_file(path: str | Path) -> Behaviour:
    """Read a behaviour from a YAML or JSON file; errors name the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read behaviour file: {err.strerror}") from err
    data = parse_document(text, str(path))
    return Behaviour.from_dict(data, where=str(path))


def parse_document(text: str, where: str) -> Any:
    """JSON or YAML (safe loader) text to plain data."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        loc = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{where}{loc}: not valid YAML or JSON: {err}") from err
