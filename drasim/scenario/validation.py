"""Static validation of a scenario file: rules that need more than one field.

References between steps, exclusive options, regexes, fault rules. This is load-time
validation; the runtime expectations a scenario asserts (``expect*`` steps) live in
:mod:`drasim.runner.expectations`.

They run on a fully decoded :class:`~drasim.scenario.schema.Scenario` and report through the
decoder, so every message still carries its file, line, column and path.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from typing import Any, cast

from drasim.faults import CLAIM_RPCS, ApiFault, PluginFault, api_fault_problem
from drasim.limits import MAX_NODE_DEVICES, MAX_STEPS
from drasim.scenario import expectations as ex
from drasim.scenario import steps as st
from drasim.scenario.common import ErrorMatch
from drasim.scenario.decoder import Decoder
from drasim.scenario.registry import STEP_TYPES, Step, steps_with
from drasim.scenario.schema import COMMAND_PLACEHOLDERS, DriverSpec, Scenario
from drasim.scenario.typeinfo import camel

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
DEVICE_NAME = re.compile(r"^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_OPTIONAL_DRIVER = (
    ex.ExpectCalls, ex.CallMatch, ex.ExpectResourceSlices, ex.ExpectConsistentReplies, st.ClearFaults,
    ex.ExpectConnections,
)  # fmt: skip
# From the step traits (``@step(..., prepares=True)``); steps and expectations are imported above.
_PREPARE_TRIGGERS = steps_with("prepares")
_UNPREPARE_TRIGGERS = steps_with("unprepares")
_POD_FIELD_STEPS = tuple(t.cls for t in STEP_TYPES.values() if t.pod_field)


class ScenarioChecker:
    """Runs every cross-field check of one scenario."""

    def __init__(self, decoder: Decoder, scenario: Scenario) -> None:
        self.d = decoder
        self.scenario = scenario
        self.drivers = [drv.name for drv in scenario.spec.all_drivers()]
        self.pods: dict[str, st.StartPod] = {}
        self.marks: set[str] = set()

    def where(self, obj: object, attr: str | None = None) -> tuple[Any, str]:
        """Location and path of an object, or of one of its fields."""
        if attr is not None and (id(obj), attr) in self.d.field_locations:
            return self.d.field_locations[(id(obj), attr)]
        loc, path = self.d.locations.get(id(obj), (None, ""))
        if loc is None:
            loc, path = self.d.locations[id(self.scenario)]
        return loc, (f"{path}.{camel(attr)}" if attr and path else path)

    def fail(self, obj: object, attr: str | None, message: str) -> None:
        """Record a problem at ``obj`` (or its field)."""
        loc, path = self.where(obj, attr)
        self.d.problem(loc, path, message)

    def run(self) -> None:
        """Check metadata, drivers, then every step in order."""
        meta = self.scenario.metadata
        if not NAME_RE.match(meta.name):
            self.fail(
                meta, "name", f"{meta.name!r} is not a valid name: use lowercase letters, digits, '-' and '.'"
            )
        if not meta.description.strip() or "\n" in meta.description.strip():
            self.fail(meta, "description", "the description must be one non-empty line")
        self.check_drivers()
        spec = self.scenario.spec
        for claim in spec.claims:
            self.check_driver_ref(claim, claim.driver, optional=True)
        if not spec.steps:
            self.fail(spec, "steps", "a scenario needs at least one step")
        self.check_kubelet_versions()
        for step in spec.steps:
            self.check_step(step)
        self.check_values(spec)
        self.check_sizes()

    def check_kubelet_versions(self) -> None:
        """``kubeletVersions``: known versions and bounds that leave at least one version."""
        from drasim.profiles import VersionError, allowed_versions, check_constraint

        spec = self.scenario.spec
        for item in spec.kubelet_versions:
            try:
                check_constraint(item)
            except VersionError as err:
                self.fail(spec, "kubelet_versions", str(err))
                return
        if spec.kubelet_versions and not allowed_versions(spec.kubelet_versions):
            self.fail(spec, "kubelet_versions", f"{spec.kubelet_versions} allows no kubelet version")

    def check_drivers(self) -> None:
        """Exactly one implementation per driver, unique names, valid placeholders."""
        spec = self.scenario.spec
        if spec.driver is not None and spec.drivers:
            self.fail(spec, "drivers", "give either 'driver' or 'drivers', not both")
        seen: set[str] = set()
        for drv in spec.all_drivers():
            self.check_driver(drv)
            if drv.name in seen:
                self.fail(drv, None, f"driver {drv.name!r} is defined twice")
            seen.add(drv.name)

    def check_sizes(self) -> None:
        """Limits over several fields: devices of all fake drivers, steps including nested ones."""
        spec = self.scenario.spec
        fakes = [drv.fake for drv in spec.all_drivers() if drv.fake is not None]
        devices = sum(f.devices if isinstance(f.devices, int) else len(f.devices) for f in fakes)
        if devices > MAX_NODE_DEVICES:
            self.fail(
                fakes[-1],
                "devices",
                f"the fake drivers publish {devices} devices together; a node may have at most "
                f"{MAX_NODE_DEVICES}",
            )
        steps = sum(1 for obj in _walk(spec.steps) if isinstance(obj, Step))
        if steps > MAX_STEPS:
            self.fail(
                spec, "steps", f"at most {MAX_STEPS} steps are allowed (nested ones included), got {steps}"
            )

    def check_driver(self, drv: DriverSpec) -> None:  # noqa: C901 - one rule per driver field
        """One driver spec."""
        if (drv.fake is None) == (drv.command is None):
            self.fail(drv, None, "a driver needs exactly one of 'fake' or 'command'")
        if drv.fake is not None:
            if drv.fake.pool:
                self.fail(
                    drv.fake,
                    "pool",
                    "not supported by the fake plugin yet: its pool is always the node name (leave it empty)",
                )
            if isinstance(drv.fake.devices, list):
                if len(set(drv.fake.devices)) != len(drv.fake.devices):
                    self.fail(drv.fake, "devices", "device names must be unique")
                bad = [n for n in drv.fake.devices if not DEVICE_NAME.match(n)]
                if bad:
                    self.fail(
                        drv.fake,
                        "devices",
                        f"{bad[0]!r} is not a valid device name (a DNS label: at most 63 lowercase "
                        "letters, digits and '-', starting and ending with a letter or digit)",
                    )
            for fault in drv.fake.faults:
                self.check_plugin_fault(fault, own_driver=drv.fake.name)
        if drv.command is not None:
            args = drv.command.args if isinstance(drv.command.args, list) else [drv.command.args]
            if not any(a.strip() for a in args):
                self.fail(drv.command, "args", "the command is empty")
            for text in [*args, *drv.command.env.values()]:
                self.check_placeholders(drv.command, text)

    def check_placeholders(self, obj: object, text: str) -> None:
        """Only the documented {placeholders} may appear in a command."""
        try:
            names = [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
        except ValueError as err:
            self.fail(
                obj, "args", f"bad placeholder syntax in {text!r}: {err} (write '{{{{' for a literal brace)"
            )
            return
        valid = ", ".join("{" + p + "}" for p in COMMAND_PLACEHOLDERS)
        for name in names:
            if name not in COMMAND_PLACEHOLDERS:
                self.fail(obj, "args", f"unknown placeholder {{{name}}}. Valid placeholders: {valid}")

    def check_driver_ref(
        self, obj: object, name: str, *, optional: bool = False, attr: str = "driver"
    ) -> None:
        """A driver reference names a driver of this scenario; empty needs exactly one driver."""
        known = ", ".join(self.drivers) or "none"
        if name and name not in self.drivers:
            self.fail(obj, attr, f"unknown driver {name!r}. Drivers in this scenario: {known}")
        elif not name and not optional and len(self.drivers) != 1:
            self.fail(
                obj, None, f"'driver' must be given: the scenario has {len(self.drivers)} drivers ({known})"
            )

    def check_plugin_fault(self, fault: PluginFault, own_driver: str | None = None) -> None:
        """At most one failure kind per rule; per-claim shapes only for prepare/unprepare."""
        if own_driver is None:
            self.check_driver_ref(fault, fault.driver)
        elif fault.driver and fault.driver != own_driver:
            self.fail(
                fault, "driver", f"a fault of driver {own_driver!r} cannot name driver {fault.driver!r}"
            )
        kinds = [k for k, on in (("code", fault.code is not None), ("error", bool(fault.error)),
                 ("missingClaim", fault.missing_claim), ("unknownUID", fault.unknown_uid),
                 ("nilEntry", fault.nil_entry), ("hang", fault.hang), ("block", fault.block),
                 ("crash", fault.crash is not None)) if on]  # fmt: skip
        valid = "code, error, missingClaim, unknownUID, nilEntry, hang, block, crash"
        if len(kinds) > 1:
            self.fail(fault, None, f"choose one of {valid}; got {', '.join(kinds)}")
        if not kinds and not fault.delay:
            self.fail(fault, None, f"the fault does nothing: give {valid} or delay")
        if set(kinds) & {"error", "missingClaim", "unknownUID", "nilEntry"} and fault.rpc not in CLAIM_RPCS:
            self.fail(
                fault, "rpc", f"{kinds[0]} applies only to NodePrepareResources and NodeUnprepareResources"
            )
        if fault.message and fault.code is None:
            self.fail(fault, "message", "'message' goes with 'code'")

    def check_step(self, step: Step) -> None:  # noqa: C901 - one rule per step trait
        """One step: references, exclusive options, nested steps."""
        args = step.args
        if isinstance(args, st.StartPod):
            self.check_start_pod(args)
        elif isinstance(args, st.Mark):
            if args.name in self.marks or args.name in ("start", "previous"):
                self.fail(args, "name", f"mark {args.name!r} is already defined (or reserved)")
            self.marks.add(args.name)
        elif isinstance(args, st.Parallel):
            self.check_parallel(args)
        elif isinstance(args, st.RestartKubelet):
            self.check_restart(args)
        elif isinstance(args, st.Fault):
            self.check_fault_step(args)
        elif isinstance(args, st.CorruptCheckpoint) and bool(args.content) != (args.mode == "content"):
            self.fail(args, "content", "'content' is required with mode 'content' and only allowed there")
        elif isinstance(args, st.Allocate):
            if args.devices and args.same_as:
                self.fail(args, "same_as", "give either 'devices' or 'sameAs', not both")
            for dev in args.devices:
                self.check_driver_ref(dev, dev.driver)
        self.check_step_refs(args)
        self.check_expectation(args)

    def check_start_pod(self, pod: st.StartPod) -> None:
        """Pod claims name a claim or a template; containers use the pod's claims."""
        names: set[str] = set()
        for claim in pod.claims:
            if isinstance(claim, st.PodClaim):
                if bool(claim.claim) == bool(claim.template):
                    self.fail(claim, None, "a pod claim needs exactly one of 'claim' or 'template'")
                names.add(claim.name)
            else:
                names.add(claim)
        for container in pod.containers:
            for ref in container.claims:
                ref_name = ref.name if isinstance(ref, st.ContainerClaim) else ref
                if ref_name not in names:
                    known = ", ".join(sorted(names)) or "none"
                    self.fail(
                        container,
                        "claims",
                        f"container {container.name!r} uses claim {ref_name!r}, "
                        f"which the pod does not list (pod claims: {known})",
                    )
        self.pods[pod.name] = pod

    def check_parallel(self, par: st.Parallel) -> None:
        """Only actions run in parallel."""
        if not par.steps:
            self.fail(par, "steps", "a parallel step needs at least one step")
        for inner in par.steps:
            if inner.name == "parallel":
                self.fail(inner, None, "a parallel step cannot contain another: list its actions directly")
                continue
            if inner.kind == "expectation":
                self.fail(
                    inner, None, f"{inner.name!r} is an expectation; a parallel step may contain only actions"
                )
            self.check_step(inner)

    def check_restart(self, restart: st.RestartKubelet) -> None:
        """crashAt and during go together; during must reach the hook point."""
        if restart.crash_at is None:
            if restart.stay_down:
                self.fail(restart, "stay_down", "a clean restart that stays down is stopKubelet")
            if restart.during is not None:
                self.fail(restart, "during", "'during' is only used with 'crashAt'")
            return
        if restart.during is None:
            self.fail(restart, "crash_at", "'crashAt' needs 'during': the action that reaches the hook point")
            return
        triggers = _PREPARE_TRIGGERS if restart.crash_at.startswith("prepare:") else _UNPREPARE_TRIGGERS
        if restart.during.name not in triggers:
            self.fail(
                restart,
                "during",
                f"{restart.during.name!r} cannot reach {restart.crash_at!r}; "
                f"use one of {', '.join(sorted(triggers))}",
            )
        else:
            self.check_step(restart.during)

    def check_fault_step(self, fault: st.Fault) -> None:
        """Exactly one target."""
        if (fault.plugin is None) == (fault.api_server is None):
            self.fail(fault, None, "a fault needs exactly one of 'plugin' or 'apiServer'")
        if fault.plugin is not None:
            self.check_plugin_fault(fault.plugin)

    def check_step_refs(self, args: object) -> None:  # noqa: C901 - one rule per kind of reference
        """Pods, drivers and marks a step refers to must exist."""
        if isinstance(args, _POD_FIELD_STEPS):
            self.check_pod_ref(args, cast("Any", args).pod)  # pod_field steps all have ``pod``
        if isinstance(args, ex.ExpectError) and args.pod:
            self.check_pod_ref(args, args.pod)
        if isinstance(args, ex.ExpectMightNeedUnprepare):
            for pod in args.pods:
                self.check_pod_ref(args, pod)
        if isinstance(args, ex.ExpectCdiDevices) and args.container:
            self.check_container_ref(args, args.pod, args.container)
        if isinstance(args, st.RestartContainer) and args.container:
            self.check_container_ref(args, args.pod, args.container)
        # Slices may belong to drivers that are not part of the scenario (stale slices).
        if hasattr(args, "driver") and not isinstance(args, st.Allocate | ex.ExpectResourceSlices):
            optional = isinstance(args, _OPTIONAL_DRIVER)
            self.check_driver_ref(args, args.driver, optional=optional)
        if isinstance(args, ex.ExpectCalls):
            for call in args.calls or []:
                self.check_driver_ref(call, call.driver, optional=True)
        if (
            isinstance(args, ex.ExpectResourceSlices)
            and args.unchanged_since
            and (args.unchanged_since not in self.marks)
        ):
            known = ", ".join(sorted(self.marks)) or "none"
            self.fail(
                args, "unchanged_since", f"unknown mark {args.unchanged_since!r} (marks so far: {known})"
            )
        since = getattr(args, "since", None)
        if since is not None and since not in ("start", "previous") and since not in self.marks:
            known = ", ".join(sorted(self.marks)) or "none"
            self.fail(
                args,
                "since",
                f"unknown mark {since!r}: use 'start', 'previous' or an earlier mark (marks so far: {known})",
            )

    def check_pod_ref(self, args: object, pod: str) -> None:
        """A pod must have been started by an earlier step."""
        name = pod.rsplit("/", 1)[-1]
        if name not in self.pods:
            known = ", ".join(sorted(self.pods)) or "none"
            self.fail(
                args,
                "pod"
                if hasattr(args, "pod") and not isinstance(args, ex.ExpectMightNeedUnprepare)
                else "pods",
                f"pod {pod!r} is not started by an earlier startPod step (pods so far: {known})",
            )

    def check_container_ref(self, args: object, pod: str, container: str) -> None:
        """A named container must exist in that pod."""
        spec = self.pods.get(pod.rsplit("/", 1)[-1])
        if spec is None:
            return
        names = [c.name for c in spec.containers] or ["ctr"]
        if container not in names:
            self.fail(
                args,
                "container",
                f"pod {pod!r} has no container {container!r} (containers: {', '.join(names)})",
            )

    def check_expectation(self, args: object) -> None:
        """An expectation must check something; error matchers need one valid pattern."""
        nothing = (
            (isinstance(args, ex.ExpectCalls) and not args.counts() and args.calls is None)
            or (isinstance(args, ex.ExpectCdiDevices) and args.ids is None and args.count is None
                and args.devices is None and args.unique is None and args.well_formed is None
                and args.expect_error is None)
            or (isinstance(args, ex.ExpectMetric) and args.value is None and args.count is None
                and args.present is None)
            or (isinstance(args, ex.ExpectResourceSlices) and args.count is None and args.devices is None
                and not args.unchanged_since)
            or (isinstance(args, ex.ExpectMightNeedUnprepare) and not args.pods)
            or (isinstance(args, ex.ExpectPod) and args.phase is None and args.deleting is None)
        )  # fmt: skip
        if nothing:
            self.fail(args, None, "this expectation checks nothing: give at least one of its checks")
        if isinstance(args, ex.ExpectConnections) and not args.counts():
            self.fail(args, None, "this expectation checks nothing: give channels, connects or disconnects")
        if isinstance(args, ex.ExpectCalls | ex.ExpectConnections):
            for count in args.counts().values():
                if isinstance(count, ex.CallCount):
                    self.check_call_count(count)
        if isinstance(args, ex.ExpectError):
            self.check_match(args, args.contains, args.matches)
        if isinstance(args, ex.ExpectHealth):
            self.check_health_message(args)

    def check_call_count(self, count: ex.CallCount) -> None:
        """A range needs a bound, and the lower one may not exceed the upper one."""
        if count.at_least is None and count.at_most is None:
            self.fail(count, None, "give atLeast, atMost or both (or a plain number for an exact count)")
        elif count.at_least is not None and count.at_most is not None and count.at_least > count.at_most:
            self.fail(count, "at_most", f"atMost ({count.at_most}) is below atLeast ({count.at_least})")

    def check_health_message(self, args: ex.ExpectHealth) -> None:
        """``message`` and ``messageContains`` exclude each other; an explicit null message is refused."""
        if args.message is not None and args.message_contains:
            self.fail(args, None, "give at most one of 'message' or 'messageContains'")
        if args.message is None and (id(args), "message") in self.d.field_locations:
            self.fail(args, "message", "expected a string; write message: '' to expect no message")

    def check_match(self, obj: object, contains: str, matches: str) -> None:
        """Exactly one of contains/matches, and a regex that compiles."""
        if bool(contains) == bool(matches):
            self.fail(obj, None, "give exactly one of 'contains' or 'matches'")
        if matches:
            try:
                re.compile(matches)
            except re.error as err:
                self.fail(obj, "matches", f"invalid regular expression {matches!r}: {err}")

    def check_values(self, root: object) -> None:
        """Every ErrorMatch and API-server fault anywhere in the spec."""
        for obj in _walk(root):
            if isinstance(obj, ErrorMatch):
                self.check_match(obj, obj.contains, obj.matches)
            elif isinstance(obj, ApiFault):
                self.check_api_fault(obj)

    def check_api_fault(self, fault: ApiFault) -> None:
        """The rule does something, and the fake API server accepts it (code, resource, verb):
        the injector asks the same :func:`drasim.faults.api_fault_problem`."""
        if not fault.effective:
            self.fail(fault, None, "the fault does nothing: give code, delay or dropWatches")
            return
        problem = api_fault_problem(fault)
        if problem:
            self.fail(fault, None, problem)


def _walk(value: object) -> Iterator[object]:
    """Every dataclass instance below ``value`` (steps included)."""
    if isinstance(value, Step):
        yield value
        yield from _walk(value.args)
    elif is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in fields(value):
            yield from _walk(getattr(value, f.name))
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
