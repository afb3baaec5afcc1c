"""The fake plugin as a driver process, and a scenario that hangs in it: shared by the tests that
run drasim against a real API server (tests/controlplane/, tests/e2e/).

Loaded once by tests/conftest.py (``HELPERS``) as ``drasim_test_fake_driver``; a test module takes
it from ``sys.modules``.
"""

from __future__ import annotations

import shlex
import sys

#: The driver command's arguments: every path and name comes from drasim's placeholders, as a
#: driver author would pass them.
ARGS = (
    " --driver-name {driver_name} --node-name {node} --kubeconfig {kubeconfig} --publish-slices"
    " --registry-dir {registrar_dir} --plugin-dir {plugin_dir} --cdi-dir {cdi_dir} --state-dir {state_dir}"
)


def driver_cmd(python: str = sys.executable) -> str:
    """The fake plugin (``python -m fake_plugins``) as a ``--driver-cmd`` template."""
    return shlex.join([python, "-m", "fake_plugins"]) + ARGS


DRIVER_CMD = driver_cmd()

#: A scenario whose driver hangs in NodePrepareResources, so a run can be interrupted mid-scenario
#: (inside startPod, once its pod exists).
HANGING = """\
apiVersion: drasim.dev/v1alpha1
kind: Scenario
metadata:
  name: hangs-in-prepare
  description: The driver hangs in NodePrepareResources, so the run can be interrupted mid-scenario.
spec:
  driver:
    fake: {name: gpu.example.com}
  claims:
    - {name: gpu}
  steps:
    - fault:
        plugin: {rpc: NodePrepareResources, hang: true}
    - startPod: {name: a, claims: [gpu], expectError: DeadlineExceeded}
"""
