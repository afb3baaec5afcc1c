"""Turn abstract choices into valid scenario steps for the current state of a world.

A *choice* is a tuple of small integers ``(rule, a, b, c)`` drawn by hypothesis
without looking at the world; :meth:`StepGenerator.step_for` maps it onto a step
that is valid *now* (the rule itself if its precondition holds, else the next rule
in :data:`RULES` order that is valid; arguments picked by index modulo the
candidates). Keeping the drawn data independent of the world means hypothesis never
sees the shape of its data change with the system's state, shrinks by deleting and
lowering choices, and a seed replays the same choices.

Every step is one of the dataclasses the YAML loader produces, so whatever the
explorer does, a scenario file can express.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.StartPod reads like the YAML
from drasim.scenario.common import CrashPoint, GrpcCode, PluginFault, Rpc
from drasim.scenario.loader import claim_manifest
from drasim.scenario.registry import STEP_TYPES, Step, step_type_of
from drasim.scenario.schema import ClaimShorthand

Choice = tuple[int, int, int, int]

MAX_CLAIMS = 3
MAX_PODS = 8
TEMPLATE = "gpu-template"
CLOCK_STEPS = (1.0, 30.0, 61.0, 91.0)
DOWNTIMES = (0.0, 30.0)
CODES: tuple[GrpcCode, ...] = ("UNAVAILABLE", "INTERNAL", "FAILED_PRECONDITION")
RPCS: tuple[Rpc, ...] = ("NodePrepareResources", "NodeUnprepareResources")
TIMES = (1, 2, 0)
PREPARE_CRASHES: tuple[CrashPoint, ...] = (
    "prepare:after-validation",
    "prepare:after-pod-reference-checkpoint",
    "prepare:after-rpc",
)
SETTLE_SECONDS = 200.0
"""Advance at the end: longer than the pod worker's retry period plus a reconcile period."""


def _pick(items: list[str], index: int) -> str:
    return items[index % len(items)]


@dataclass
class StepGenerator:
    """Knows what was created so far and which steps are valid in the world's current state."""

    world: World
    claims: list[str] = field(default_factory=list)
    pods_started: int = 0
    faults_added: bool = False

    # ------------------------------------------------------------------ queries
    def pods(self, *phases: str) -> list[str]:
        """Names of the pods in one of ``phases``, sorted."""
        return sorted(rec.name for rec in self.world.pods.values() if rec.phase in phases)

    @property
    def kubelet_up(self) -> bool:
        """A kubelet runs."""
        return self.world.kubelet is not None

    @property
    def plugin_up(self) -> bool:
        """The driver serves."""
        return self.world.fleet.driver().running

    # ------------------------------------------------------------------ mapping
    def step_for(self, choice: Choice) -> Step:
        """The step a choice stands for, in the world's current state."""
        rule, a, b, c = choice
        rule %= len(RULES)
        for offset in range(len(RULES)):
            _, valid, build = RULES[(rule + offset) % len(RULES)]
            if valid(self):
                return Step.of(build(self, (a, b, c)))
        raise AssertionError("no rule is valid (advanceClock always is)")  # pragma: no cover

    def follow_up(self, step: Step) -> list[Step]:
        """Steps that always follow ``step``: a second after a plugin (re)start (trait ``starts_plugin``).

        Right after a killed plugin starts again, the runner's plugin host sometimes registers
        the new instance, deregisters it while it processes the stale socket, and registers it
        again only at its next rescan; the real kubelet's watcher rescans every second. One
        nominal second makes that rescan happen, so runs and their reproducers are repeatable.
        """
        if STEP_TYPES[step.name].starts_plugin:
            return [Step.of(S.AdvanceClock(seconds=1.0))]
        return []

    def settle(self) -> list[Step]:
        """The steps that end a run: no faults, plugin and kubelet up, every pod deleted, time passes.

        Called repeatedly: returns the next settle step, or an empty list when settled.
        """
        if self.faults_added:
            self.faults_added = False
            return [Step.of(S.ClearFaults())]
        if not self.plugin_up:
            return [Step.of(S.StartPlugin())]
        if not self.kubelet_up:
            return [Step.of(S.StartKubelet())]
        return []

    def final_steps(self) -> list[Step]:
        """After :meth:`settle`: a second passes, every remaining pod is deleted, reconcile, retries run.

        The second lets the kubelet's plugin watcher rescan (it does every second upstream), so a
        plugin instance started just before is registered when the deletions come.
        """
        out = [Step.of(S.AdvanceClock(seconds=1.0))]
        out += [
            Step.of(S.DeletePod(pod=name))
            for name in self.pods("Pending", "Running", "Terminating", "Succeeded")
        ]
        out.append(Step.of(S.Reconcile()))
        out.append(Step.of(S.AdvanceClock(seconds=SETTLE_SECONDS)))
        return out

    # ------------------------------------------------------------------ builders
    def new_pod(self, a: int, b: int) -> S.StartPod:
        """A new pod using one or two existing claims (shared between pods) and/or a template claim."""
        name = f"pod-{self.pods_started}"
        self.pods_started += 1
        claims: list[S.PodClaim | str] = []
        if self.claims:
            first = _pick(self.claims, a)
            claims.append(first)
            if b % 3 == 1 and len(self.claims) > 1:
                second = _pick(self.claims, a + 1 + b // 3)
                if second != first:
                    claims.append(second)
        if not claims or b % 3 == 2:
            claims.append(S.PodClaim(name="tmpl", template=TEMPLATE))
        return S.StartPod(name=name, claims=claims)

    def create_claim(self) -> S.Create:
        name = f"claim-{len(self.claims)}"
        self.claims.append(name)
        return S.Create(objects=[claim_manifest(ClaimShorthand(name=name), "$(DRIVER)")])

    def fault(self, a: int, b: int, c: int) -> S.Fault:
        self.faults_added = True
        rpc = RPCS[a % len(RPCS)]
        times = TIMES[c % len(TIMES)]
        kind = b % 4
        if kind == 0:
            rule = PluginFault(rpc=rpc, code=CODES[(b // 4) % len(CODES)], message="injected", times=times)
        elif kind == 1:
            rule = PluginFault(rpc=rpc, error="injected claim error", times=times)
        elif kind == 2 and self.claims:
            claim = _pick(self.claims, b // 4)
            rule = PluginFault(rpc=rpc, claim=claim, error=f"injected error for {claim}", times=times)
        else:
            rule = PluginFault(rpc=rpc, crash="before" if c % 2 == 0 else "after", times=1)
        return S.Fault(plugin=rule)

    def crash(self, a: int, b: int) -> S.RestartKubelet:
        running = self.pods("Running")
        points: list[str] = []
        if self.pods_started < MAX_PODS:
            points += PREPARE_CRASHES
        if running:
            points.append("unprepare:after-rpc")
        point = _pick(points, a)
        during: Step
        if point == "unprepare:after-rpc":
            during = Step.of(S.DeletePod(pod=_pick(running, b)))
        else:
            during = Step.of(self.new_pod(b, b // 3))
        downtime = DOWNTIMES[b % len(DOWNTIMES)]
        return S.RestartKubelet(crash_at=point, during=during, downtime=downtime)


Args = tuple[int, int, int]
Rule = tuple[type, Callable[[StepGenerator], bool], Callable[[StepGenerator, Args], object]]
_LIVE = ("Pending", "Running", "Terminating", "Succeeded")

RULES: list[Rule] = [
    (S.StartPod, lambda g: g.pods_started < MAX_PODS, lambda g, x: g.new_pod(x[0], x[1])),
    (S.Create, lambda g: len(g.claims) < MAX_CLAIMS, lambda g, _: g.create_claim()),
    (S.DeletePod, lambda g: bool(g.pods(*_LIVE)), lambda g, x: S.DeletePod(pod=_pick(g.pods(*_LIVE), x[0]))),
    (
        S.StopPod,
        lambda g: bool(g.pods("Pending", "Running")),
        lambda g, x: S.StopPod(pod=_pick(g.pods("Pending", "Running"), x[0])),
    ),
    (
        S.ForceDeletePod,
        lambda g: bool(g.pods(*_LIVE)),
        lambda g, x: S.ForceDeletePod(pod=_pick(g.pods(*_LIVE), x[0])),
    ),
    (S.Reconcile, lambda g: g.kubelet_up, lambda _g, _: S.Reconcile()),
    (
        S.AdvanceClock,
        lambda _: True,
        lambda _g, x: S.AdvanceClock(seconds=CLOCK_STEPS[x[0] % len(CLOCK_STEPS)]),
    ),
    (
        S.SyncPod,
        lambda g: g.kubelet_up and bool(g.pods("Pending", "Terminating")),
        lambda g, x: S.SyncPod(pod=_pick(g.pods("Pending", "Terminating"), x[0])),
    ),
    (
        S.RecreateSandbox,
        lambda g: g.kubelet_up and bool(g.pods("Running")),
        lambda g, x: S.RecreateSandbox(pod=_pick(g.pods("Running"), x[0])),
    ),
    (
        S.RestartContainer,
        lambda g: bool(g.pods("Running")),
        lambda g, x: S.RestartContainer(pod=_pick(g.pods("Running"), x[0])),
    ),
    (
        S.RestartKubelet,
        lambda g: g.kubelet_up,
        lambda _g, x: S.RestartKubelet(downtime=DOWNTIMES[x[0] % len(DOWNTIMES)]),
    ),
    (
        S.RestartKubelet,
        lambda g: g.kubelet_up and (g.pods_started < MAX_PODS or bool(g.pods("Running"))),
        lambda g, x: g.crash(x[0], x[1]),
    ),
    (S.StopKubelet, lambda g: g.kubelet_up, lambda _g, _: S.StopKubelet()),
    (S.StartKubelet, lambda g: not g.kubelet_up, lambda _g, _: S.StartKubelet()),
    (S.RestartPlugin, lambda g: g.plugin_up, lambda _g, _: S.RestartPlugin()),
    (S.KillPlugin, lambda g: g.plugin_up, lambda _g, _: S.KillPlugin()),
    (S.StopPlugin, lambda g: g.plugin_up, lambda _g, _: S.StopPlugin()),
    (S.StartPlugin, lambda g: not g.plugin_up, lambda _g, _: S.StartPlugin()),
    (S.Fault, lambda _: True, lambda g, x: g.fault(*x)),
    (S.ClearFaults, lambda g: g.faults_added, lambda _g, _: S.ClearFaults()),
]
"""(step class, precondition, builder): the builder returns an instance of the class, and the
registry names the step. Order matters: shrinking moves choices towards the front."""


def rule_index(name: str, nth: int = 0) -> int:
    """The index in :data:`RULES` of the ``nth`` rule for step ``name`` (to write choices by hand)."""
    found = [i for i, rule in enumerate(RULES) if step_type_of(rule[0]).name == name]
    if nth >= len(found):
        raise KeyError(f"no rule #{nth} for step {name!r}")
    return found[nth]
