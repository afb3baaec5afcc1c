"""The options of a run beyond what each scenario says (``drasim run`` flags, pytest options, explore).

:func:`drasim.runner.plan.plan_run` turns them, with one scenario, into the frozen plan of that run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from drasim.limits import DEFAULT_SCENARIO_TIMEOUT


@dataclass
class RunOptions:
    """How to run scenarios, beyond what each scenario says."""

    time_scale: float | None = None
    """Override every scenario's kubelet ``timeScale`` (1 = real kubelet timers)."""
    driver_cmd: str | None = None
    """Run this command instead of the scenario's fake driver (a real driver under test)."""
    driver_name: str | None = None
    """The name the ``driver_cmd`` driver registers (default: the scenario's driver name)."""
    backend: str | None = None
    """``memory``, ``http`` or ``kubeconfig`` (see :mod:`drasim.runner.backends`); ``None``: the
    scenario's ``backend:`` pin, else ``memory``."""
    kubeconfig: Path | None = None
    """The cluster of the ``kubeconfig`` backend (default: ``$KUBECONFIG``, ``~/.kube/config``)."""
    context: str | None = None
    """The kubeconfig context of the ``kubeconfig`` backend (default: its current context)."""
    keep_workspace: bool = False
    """Leave the scenario's directory tree behind for inspection (in /tmp unless ``workspace_dir``)."""
    workspace_dir: Path | None = None
    """Create each scenario's tree under this directory (default: /dev/shm when usable, else /tmp)."""
    bugs: tuple[str, ...] = ()
    """Switch these fake-plugin bugs on in every fake driver (to prove scenarios catch them)."""
    proxy: bool = True
    """Put drasim's proxy (:mod:`drasim.proxy`) in front of the ``driver_cmd`` driver's sockets:
    plugin faults on the wire and a journal of the calls it serves (``--no-proxy``: off)."""
    capabilities: tuple[str, ...] = ()
    """What a ``driver_cmd`` driver supports (e.g. ``health``); scenarios needing more are skipped."""
    kubelet_version: str | None = None
    """Run as this kubelet version (``"1.34"``); None: the newest one ``kubeletVersions`` allows."""
    kubelet_versions: tuple[str, ...] = ()
    """``run_scenarios`` runs every scenario once per version listed here (``--kubelet-version``)."""
    kubelet: str = "emulated"
    """The kubelet in the node's kubelet slot (``--kubelet``): a key of
    :data:`drasim.runner.kubelets.KUBELET_IMPLEMENTATIONS` (``emulated``, ``upstream``), for
    ``upstream`` optionally pinned to a release (``upstream@1.35.4``; see
    :mod:`drasim.upstream_kubelet`)."""
    record_checkpoint_bytes: bool = False
    """Journal the checkpoint file's bytes (``checkpoint-file``) and each container's CDI devices
    (``GetResources``) at the end of every step, and the bytes of every checkpoint write the
    kubelet makes (``checkpoint`` events), for ``drasim diff``."""
    scenario_timeout: float | None = DEFAULT_SCENARIO_TIMEOUT
    """Real seconds one scenario may run (set-up and steps); then it is stopped and fails. None: no limit."""
    fsync: bool = False
    """fsync the kubelet checkpoint and the fake drivers' files on every write, as on a real node.

    Off by default: the writes stay atomic (temporary file, rename), every crash a scenario
    can simulate (a killed kubelet or driver) sees the old or the new file either way, and
    the workspace is thrown away afterwards; an fsync only costs milliseconds on a disk.
    """
