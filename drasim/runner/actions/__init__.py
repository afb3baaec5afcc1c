"""Action steps: one handler per action step type of :mod:`drasim.scenario.steps`.

Each handler does what the step's docstring promises and raises
:class:`~drasim.runner.context.StepFailure` when the step's own ``expectError`` does
not hold (an error that was not expected, or an expected error that did not come).
The handlers live in modules by topic and register themselves in
:data:`~drasim.runner.actions.registry.HANDLERS` with ``@handles(StepType)``:

- :mod:`.objects`: apply, create, delete;
- :mod:`.claims`: allocate, deallocate;
- :mod:`.pods`: a pod's life on the node (startPod ... forceDeletePod, reconcile, advanceClock);
- :mod:`.kubelet`: stopKubelet, startKubelet, restartKubelet;
- :mod:`.plugins`: the plugins' lifecycle and setDeviceHealth;
- :mod:`.faults`: fault, clearFaults, unblock, resetConnections, refuseConnections;
- :mod:`.node`: the checkpoint, the CDI directory, rebootNode;
- :mod:`.control`: mark, parallel.
"""

from __future__ import annotations

# Importing the topic modules registers their handlers.
from drasim.runner.actions import claims, control, faults, kubelet, node, objects, plugins, pods
from drasim.runner.actions.registry import HANDLERS, Handler, check_error, run_action

__all__ = [
    "HANDLERS",
    "Handler",
    "check_error",
    "claims",
    "control",
    "faults",
    "kubelet",
    "node",
    "objects",
    "plugins",
    "pods",
    "run_action",
]
