"""explore reads what a step does from its traits on ``@step(...)``, not from lists of step names.

Each step explore generates is run on a live world and what it did is observed: a step that
(re)started the plugin must have ``starts_plugin`` (explore lets a second pass after it for the
registration to settle); a step that stopped or started the kubelet or the plugin, or changed
the fault rules, must have ``lifecycle`` (``fault-free-succeeds`` does not judge it); and the
other way round. A step added to explore without the trait it needs fails here.
"""

from __future__ import annotations

from dataclasses import dataclass

from drasim.explore.base import base_scenario
from drasim.explore.execute import run_step
from drasim.explore.generator import RULES, StepGenerator, rule_index
from drasim.runner.drivers import FakeDriverHandle
from drasim.runner.options import RunOptions
from drasim.runner.session import StepSession
from drasim.runner.world import World, open_world
from drasim.scenario.registry import STEP_TYPES, Step, step_type_of


def test_every_rule_builds_a_registered_step_of_its_class() -> None:
    for cls, _valid, _build in RULES:
        assert step_type_of(cls).cls is cls
    assert Step.of(RULES[0][0](name="p")).name == "startPod"  # type: ignore[call-arg]


@dataclass(frozen=True, eq=False)
class Seen:
    """What is running at one moment. The objects themselves, compared by identity: an ``id()``
    of an object already freed can be given to the next one (a restarted kubelet looked unchanged)."""

    kubelet: object | None
    plugin: object | None
    faults: tuple[object, ...]

    def same(self, other: Seen) -> tuple[bool, bool, bool]:
        """Whether the kubelet, the plugin instance and the fault rules are the same objects."""
        return (
            self.kubelet is other.kubelet,
            self.plugin is other.plugin,
            len(self.faults) == len(other.faults)
            and all(a is b for a, b in zip(self.faults, other.faults, strict=True)),
        )


def seen(world: World) -> Seen:
    handle = world.fleet.driver()
    assert isinstance(handle, FakeDriverHandle)
    return Seen(world.kubelet, handle.driver._instance, tuple(handle.driver.behaviour.faults))


# Every rule once, in an order where each is valid when drawn (the test checks it was):
# a step name, or (name, which of its rules, the choice's b).
SEQUENCE = [
    "create",
    "startPod",
    "startPod",
    "restartContainer",
    "recreateSandbox",
    "stopPod",
    "fault",  # NodePrepareResources fails once
    ("startPod", 0, 2),  # pod-2, with a claim from the template: its prepare fails, it stays Pending
    "syncPod",  # and is prepared on the retry
    "clearFaults",
    "deletePod",
    "forceDeletePod",
    "reconcile",
    "advanceClock",
    "restartKubelet",
    ("restartKubelet", 1),
    "stopKubelet",
    "startKubelet",
    "restartPlugin",
    "killPlugin",
    "startPlugin",
    "stopPlugin",
    "startPlugin",
]


def test_generated_steps_have_the_traits_their_effects_need() -> None:
    world = open_world(base_scenario(), RunOptions())
    session = StepSession(world)
    problems: list[str] = []
    ran: set[int] = set()
    try:
        world.setup()
        gen = StepGenerator(world)

        def execute(step: Step) -> None:
            before = seen(world)
            run_step(session, step)
            after = seen(world)
            traits = STEP_TYPES[step.name]
            same_kubelet, same_plugin, same_faults = before.same(after)
            started = after.plugin is not None and not same_plugin
            changed = not (same_kubelet and same_plugin and same_faults)
            if started != traits.starts_plugin:
                problems.append(
                    f"{step.name}: started the plugin {started}, trait starts_plugin {traits.starts_plugin}"
                )
            if changed != traits.lifecycle:
                problems.append(
                    f"{step.name}: changed kubelet, plugin or faults {changed}, lifecycle {traits.lifecycle}"
                )
            for follow in gen.follow_up(step):
                execute(follow)

        for entry in SEQUENCE:
            name, nth, b = (*entry, 0)[:3] if isinstance(entry, tuple) else (entry, 0, 0)
            index = rule_index(name, nth)
            step = gen.step_for((index, 0, b, 0))
            cls = RULES[index][0]
            assert isinstance(step.args, cls), f"{name}#{nth} was not valid here; ran {step.name} instead"
            ran.add(index)
            execute(step)
    finally:
        world.teardown()
    assert problems == []
    assert ran == set(range(len(RULES))), "the sequence must run every rule"
