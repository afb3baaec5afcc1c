"""Ctrl-C reaches a run even when the kernel hands the signal to a thread other than the main one.

Python runs signal handlers in the main thread only, when it next runs Python code. The main
thread of ``drasim run`` waits for the scenario threads; a wait without a time limit would put
the handler off until every scenario ended (here: a prepare call held for 450 s).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent(
    '''
    import signal, sys, threading
    from drasim.report.model import RESULTS
    from drasim.runner.run import run_scenarios
    from drasim.scenario.loader import load_text

    (scenario,) = load_text("""
    apiVersion: drasim.dev/v1alpha1
    kind: Scenario
    metadata: {name: held, description: A prepare call the driver holds until the caller gives up.}
    spec:
      driver: {fake: {name: gpu.example.com}}
      kubelet: {timeScale: 10}
      claims: [{name: gpu}]
      steps:
        - fault: {plugin: {rpc: NodePrepareResources, hang: true}}
        - startPod: {name: a, claims: [gpu]}
    """)

    from fake_plugins.driver import FakeDriver

    held = FakeDriver._wait_released

    def signal_while_held(self, *args, **kwargs):
        # The call is held now (the main thread waits for the scenario): SIGINT to this
        # thread, the driver's gRPC handler thread, not to the main thread.
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        return held(self, *args, **kwargs)

    FakeDriver._wait_released = signal_while_held

    class Reporter:
        def scenario_started(self, name, location=""):
            pass

        def scenario_finished(self, result):
            print("finished", result.name, result.status, flush=True)

    try:
        run_scenarios([scenario], results=RESULTS, reporter=Reporter())
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(0)
    print("not interrupted", flush=True)
    sys.exit(1)
    '''
)


def test_a_signal_delivered_to_a_scenario_thread_interrupts_the_run() -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise AssertionError(
            f"the run was not interrupted within 60 s:\n{err.stdout}\n{err.stderr}"
        ) from None
    assert done.returncode == 0, done.stdout + done.stderr
    # The held scenario was stopped and reported before the run ended.
    assert done.stdout.splitlines() == ["finished held error", "interrupted"], done.stdout
