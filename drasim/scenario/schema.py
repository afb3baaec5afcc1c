"""The scenario language: top-level dataclasses and the step registry.

A scenario file holds one or more YAML documents of ``kind: Scenario``::

    apiVersion: drasim.dev/v1alpha1
    kind: Scenario
    metadata: {name: ..., description: ..., source: ..., tags: [...]}
    spec: {driver: ..., kubelet: ..., apiServer: ..., objects: [...], claims: [...], steps: [...]}

Action steps live in :mod:`drasim.scenario.steps`, expectations in
:mod:`drasim.scenario.expectations`; both register in :data:`STEP_TYPES`. Run
``python -m drasim.scenario.schema`` to print the JSON Schema generated from these classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from drasim.apiversions import DEFAULT_RESOURCE_API_VERSIONS
from drasim.limits import (
    MAX_CLAIM_DEVICES,
    MAX_CLAIM_REQUESTS,
    MAX_CLAIMS,
    MAX_DRIVERS,
    MAX_DURATION,
    MAX_NODE_DEVICES,
    MAX_OBJECTS,
    MAX_START_TIMEOUT,
    MAX_STEPS,
    MAX_TIME_SCALE,
    RESOURCE_SLICE_MAX_DEVICES,
)
from drasim.scenario import expectations, steps
from drasim.scenario.common import (
    API_VERSION,
    DEFAULT_SERVICES,
    ApiFault,
    ApiServerMode,
    BackendName,
    BugName,
    KubeletService,
    PluginFault,
    RePreparePolicy,
    ResourceApiVersion,
    doc,
)
from drasim.scenario.registry import STEP_TYPES, Step, StepType
from drasim.timescale import DEFAULT_TIME_SCALE

__all__ = [
    "STEP_TYPES",
    "ClaimShorthand",
    "CommandDriverSpec",
    "DriverSpec",
    "FakeDriverSpec",
    "KubeletProfile",
    "Metadata",
    "Scenario",
    "ScenarioSpec",
    "Step",
    "StepType",
    "Timers",
    "expectations",
    "steps",
]

COMMAND_PLACEHOLDERS: tuple[str, ...] = (
    "node",
    "kubeconfig",
    "registrar_dir",
    "plugins_dir",
    "cdi_dir",
    "driver_name",
)


@dataclass(frozen=True, kw_only=True)
class Metadata:
    """Who the scenario is and why it exists."""

    name: str = field(metadata=doc("Unique name: lowercase letters, digits, '-' and '.'."))
    description: str = field(metadata=doc("One line: what the scenario proves."))
    source: str = field(
        default="", metadata=doc("Where the behaviour comes from: upstream test, code or issue.")
    )
    tags: list[str] = field(
        default_factory=list, metadata=doc("Free-form labels for filtering (drasim list/run --tag).")
    )
    catches: list[BugName] = field(
        default_factory=list,
        metadata=doc("Fake-plugin bugs this scenario must detect: with any of them injected it must fail."),
    )


@dataclass(frozen=True, kw_only=True)
class FakeDriverSpec:
    """A fake DRA plugin from fake_plugins/, speaking the real gRPC protocol over unix sockets.

    It publishes its pool as ResourceSlices of up to 128 devices, answers prepare with one CDI ID per
    device, writes a CDI spec file per prepared claim, and persists its prepared claims in
    its plugin data directory (so a restart keeps them), unless a bug says otherwise.
    """

    name: str = field(metadata=doc("The DRA driver name, e.g. gpu.example.com."))
    devices: int | list[str] = field(
        default=4,
        metadata=doc(
            "Devices to publish: a count N (named <prefix>-0 ... <prefix>-(N-1), where the prefix is the "
            "driver name's first label, e.g. gpu-0) or a list of device names. The pool is split into "
            f"ResourceSlices of at most {RESOURCE_SLICE_MAX_DEVICES} devices (upstream's limit per slice); "
            f"all fake drivers of a node together publish at most {MAX_NODE_DEVICES}.",
            minimum=0,
            maximum=MAX_NODE_DEVICES,
            max_items=MAX_NODE_DEVICES,
        ),
    )
    pool: str = field(
        default="",
        metadata=doc("Pool name; must stay empty for now: the fake plugin's pool is the node name."),
    )
    services: list[str] = field(
        default_factory=lambda: list(DEFAULT_SERVICES),
        metadata=doc(
            "supported_versions advertised in GetInfo, in order (any strings, to test negotiation)."
        ),
    )
    health: bool = field(
        default=False, metadata=doc("Serve the health service and advertise v1alpha1.DRAResourceHealth.")
    )
    faults: list[PluginFault] = field(
        default_factory=list,
        metadata=doc("Fault rules active from the start (same keys as the fault step's plugin rule)."),
    )
    bugs: list[BugName] = field(
        default_factory=list, metadata=doc("Deliberately broken behaviours to switch on.")
    )
    behaviour: dict[str, Any] = field(
        default_factory=dict,
        metadata=doc("Further options passed to the fake plugin unchanged (its own vocabulary)."),
    )
    common_socket: bool = field(
        default=False,
        metadata=doc("Put the DRA socket in the registry directory next to the registration socket."),
    )
    rolling_update_uid: str = field(
        default="",
        metadata=doc(
            "A pod UID: use rolling-update socket names (<driver>-<uid>-reg.sock, dra-<uid>.sock).",
            yaml="rollingUpdateUID",
        ),
    )


@dataclass(frozen=True, kw_only=True)
class CommandDriverSpec:
    """A real driver started as a process. Arguments may use placeholders the runner fills in:
    {node} {kubeconfig} {registrar_dir} {plugins_dir} {cdi_dir} {driver_name}."""

    name: str = field(metadata=doc("The DRA driver name the process registers."))
    args: list[str] | str = field(metadata=doc("argv, or one string split like a shell would (shlex)."))
    env: dict[str, str] = field(
        default_factory=dict, metadata=doc("Extra environment variables (placeholders allowed).")
    )
    start_timeout: float = field(
        default=30.0,
        metadata=doc(
            "Real seconds to wait for registration after start.", minimum=0, maximum=MAX_START_TIMEOUT
        ),
    )


@dataclass(frozen=True, kw_only=True)
class DriverSpec:
    """One driver: exactly one of ``fake`` or ``command``."""

    fake: FakeDriverSpec | None = field(default=None, metadata=doc("A fake plugin."))
    command: CommandDriverSpec | None = field(default=None, metadata=doc("A real driver process."))

    @property
    def name(self) -> str:
        """The DRA driver name."""
        spec = self.fake or self.command
        return spec.name if spec else ""


@dataclass(frozen=True, kw_only=True)
class Timers:
    """Kubelet timers in nominal seconds (upstream defaults)."""

    call_timeout: float = field(
        default=45.0,
        metadata=doc("Per-RPC timeout (defaultClientCallTimeout).", minimum=0, maximum=MAX_DURATION),
    )
    reconcile_period: float = field(
        default=60.0, metadata=doc("Reconcile loop period.", minimum=1, maximum=MAX_DURATION)
    )
    wiping_delay: float = field(
        default=30.0,
        metadata=doc(
            "Delay before a disconnected driver's slices are wiped.", minimum=0, maximum=MAX_DURATION
        ),
    )
    backoff_period: float = field(
        default=10.0,
        metadata=doc(
            "Pod worker backoff after a failed sync (kubelet.go backOffPeriod): a failed unprepare "
            "(SyncTerminatingPod) is retried after it.",
            minimum=1,
            maximum=MAX_DURATION,
        ),
    )
    resync_interval: float = field(
        default=60.0,
        metadata=doc(
            "Pod worker resync interval (syncFrequency): a failed prepare is retried after it, as "
            "SyncPod does not report a prepare error to the pod worker.",
            minimum=1,
            maximum=MAX_DURATION,
        ),
    )
    retry_jitter: float = field(
        default=1.0,
        metadata=doc(
            "Where pod worker retries fall in upstream's jitter window: the wait is "
            "period x (1 + 0.5 x retryJitter) (wait.Jitter, factor 0.5, random upstream). "
            "1 = the latest moment (15 s / 90 s), 0 = the earliest (10 s / 60 s).",
            minimum=0,
            maximum=1,
        ),
    )


@dataclass(frozen=True, kw_only=True)
class KubeletProfile:
    """The emulated kubelet."""

    node: str = field(default="node-1", metadata=doc("Node name."))
    services: list[KubeletService] = field(
        default_factory=lambda: list(DEFAULT_SERVICES), metadata=doc("DRA services the kubelet supports.")
    )
    timers: Timers = field(default_factory=Timers, metadata=doc("Kubelet timers."))
    time_scale: float = field(
        default=DEFAULT_TIME_SCALE,
        metadata=doc("Real seconds per nominal second (1 = real time).", minimum=0, maximum=MAX_TIME_SCALE),
    )
    re_prepare_after_restart: RePreparePolicy = field(
        default="newSandboxOnly",
        metadata=doc(
            "newSandboxOnly: after a restart only pods that need a new sandbox are prepared again; "
            "allPods: every running pod is prepared again (kubernetes/kubernetes#140471)."
        ),
    )


@dataclass(frozen=True, kw_only=True)
class ApiServerSpec:
    """The fake API server."""

    mode: ApiServerMode = field(
        default="auto",
        metadata=doc("auto: in-memory for fake drivers, HTTP when a real driver needs a kubeconfig."),
    )
    resource_api_versions: list[ResourceApiVersion] = field(
        default_factory=lambda: list(DEFAULT_RESOURCE_API_VERSIONS),
        metadata=doc("resource.k8s.io versions served; others answer 404."),
    )
    faults: list[ApiFault] = field(default_factory=list, metadata=doc("Fault rules active from the start."))


@dataclass(frozen=True, kw_only=True)
class ClaimShorthand:
    """A ResourceClaim written briefly; the loader expands it into a manifest in ``objects``.

    Each request is ``exactly: {deviceClassName: <driver>, count: <count>}``; a DeviceClass
    named after the driver (selecting ``device.driver == "<driver>"``) is added once.
    """

    name: str = field(metadata=doc("Claim name."))
    namespace: str = field(default="default", metadata=doc("Claim namespace."))
    driver: str = field(default="", metadata=doc("Driver serving it; empty means the first driver."))
    requests: list[str] = field(
        default_factory=lambda: ["req-0"],
        metadata=doc("Request names (upstream allows 32 per claim).", max_items=MAX_CLAIM_REQUESTS),
    )
    count: int = field(
        default=1,
        metadata=doc(
            "Devices per request (upstream allocates at most 32 devices per claim).",
            minimum=1,
            maximum=MAX_CLAIM_DEVICES,
        ),
    )


@dataclass(frozen=True, kw_only=True)
class ScenarioSpec:
    """The world and the script."""

    driver: DriverSpec | None = field(
        default=None, metadata=doc("The driver (or use ``drivers`` for several).")
    )
    drivers: list[DriverSpec] = field(
        default_factory=list, metadata=doc("Several drivers on the node.", max_items=MAX_DRIVERS)
    )
    kubelet: KubeletProfile = field(default_factory=KubeletProfile, metadata=doc("The emulated kubelet."))
    api_server: ApiServerSpec = field(default_factory=ApiServerSpec, metadata=doc("The fake API server."))
    # -- backends (issue 12) --
    backend: BackendName = field(
        default="",
        metadata=doc(
            "Pin the API-server backend: memory, http or kubeconfig (a real cluster). Runs choosing "
            "another backend with --backend skip the scenario; empty: the run's backend (default memory)."
        ),
    )
    objects: list[dict[str, Any]] = field(
        default_factory=list,
        metadata=doc(
            "Kubernetes manifests created before the first step; items may be {file: path}.",
            max_items=MAX_OBJECTS,
        ),
    )
    claims: list[ClaimShorthand] = field(
        default_factory=list,
        metadata=doc("Claims written briefly (expanded into objects).", max_items=MAX_CLAIMS),
    )
    steps: list[Step] = field(
        metadata=doc(
            "What happens, in order (nested steps of parallel and restartKubelet.during count too).",
            max_items=MAX_STEPS,
        )
    )
    kubelet_versions: list[str] = field(
        default_factory=list,
        metadata=doc(
            "Kubelet versions this scenario holds for: versions (1.34) or bounds (>=1.34, <1.36). "
            "Empty: every version. Without --kubelet-version it runs as the newest allowed version."
        ),
    )

    def all_drivers(self) -> list[DriverSpec]:
        """``driver`` and ``drivers`` together, in order."""
        return ([self.driver] if self.driver else []) + list(self.drivers)


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One scenario document."""

    api_version: Literal["drasim.dev/v1alpha1"] = field(metadata=doc(f"Always {API_VERSION}."))
    kind: Literal["Scenario"] = field(metadata=doc("Always Scenario."))
    metadata: Metadata = field(metadata=doc("Name, description, source, tags."))
    spec: ScenarioSpec = field(metadata=doc("Drivers, kubelet, objects and steps."))
    file: str = field(default="", metadata=doc("The file it was loaded from.", internal=True))
    line: int = field(default=0, metadata=doc("Line of the document start.", internal=True))

    @property
    def name(self) -> str:
        """``metadata.name``."""
        return self.metadata.name


def _main() -> None:
    import json

    from drasim.scenario.jsonschema import scenario_json_schema

    print(json.dumps(scenario_json_schema(), indent=2, sort_keys=True))


if __name__ == "__main__":
    _main()
