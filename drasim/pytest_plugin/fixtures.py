"""Fixtures for driver tests written in Python.

``drasim_node`` is a running simulated node (configure it with
``@pytest.mark.drasim_node(driver=..., claims=..., objects=..., kubelet=...)``);
with ``--drasim-driver-cmd`` its first driver is the real driver process.
Every node has its own ``drasim-*`` tree (under ``/dev/shm`` or ``/tmp``) and its HTTP API server (if any)
listens on a free port, so tests run in parallel under pytest-xdist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from drasim.pytest_plugin.factory import PodClaimFactory
from drasim.pytest_plugin.options import Settings, settings_of
from drasim.pytest_plugin.pyitems import record_of

if TYPE_CHECKING:  # the runner is imported when a fixture is used, not when pytest starts
    from drasim.controlplane import ControlPlane
    from drasim.pytest_plugin.harness import ApiServerHarness, DrasimNode, JournalAssertions
    from drasim.report.model import ScenarioResult
    from drasim.runner.drivers import DriverHandle
    from drasim.runner.options import RunOptions
    from drasim.scenario.schema import Scenario

_NODE_KEYS = {"driver", "drivers", "claims", "objects", "kubelet", "api_server", "tags"}


@pytest.fixture(scope="session")
def drasim_control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A real kube-apiserver with etcd on 127.0.0.1 (``drasim control-plane``), one per test run.

    Built with Go on first use (cached after); skipped, with the reason, where Go is missing.
    Under pytest-xdist the workers share one. Yields a :class:`drasim.controlplane.ControlPlane`
    (``admin_kubeconfig``, ``driver_kubeconfig``, ``node_kubeconfig``, ``server``). Tests on it
    share a cluster: give objects unique names and delete what you create.
    """
    import os

    from drasim import controlplane, gobuild

    problem = gobuild.go_problem()
    if problem:
        pytest.skip(f"a real control plane needs Go: {problem}")
    base = tmp_path_factory.getbasetemp()
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    root = base.parent / f"drasim-control-plane-{run[:12]}" if run else base / "drasim-control-plane"
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    # Without xdist the control plane dies with this process, even if it is killed; with xdist
    # the last worker out stops it (a worker that started it may end before another).
    with controlplane.shared(root, f"{worker}-{os.getpid()}", exit_with_caller=run is None) as plane:
        yield plane


@pytest.fixture(scope="session")
def drasim_settings(pytestconfig: pytest.Config) -> Settings:
    """The plugin's resolved options (driver command, profile, capabilities, ...)."""
    return settings_of(pytestconfig)


@pytest.fixture
def drasim_kubelet_version(request: pytest.FixtureRequest, drasim_settings: Settings) -> str | None:
    """The kubelet version this test runs as (``None``: the newest).

    With ``--drasim-kubelet-version 1.33,1.37`` every test that uses ``drasim_node``,
    ``drasim_run`` or this fixture runs once per version (ids ``[kubelet-1.33]``, ...).
    """
    param = getattr(request, "param", None)
    versions = drasim_settings.kubelet_versions
    version = param if isinstance(param, str) else versions[0] if len(versions) == 1 else None
    record_of(request.node).kubelet_version = version
    return version


@pytest.fixture
def drasim_run_options(drasim_settings: Settings, drasim_kubelet_version: str | None) -> RunOptions:
    """Runner options derived from the command line and ini (for this test's kubelet version)."""
    return drasim_settings.run_options(drasim_kubelet_version)


@pytest.fixture
def drasim_scenario(drasim_settings: Settings) -> Callable[..., Scenario]:
    """``make(name=..., driver=..., claims=..., steps=[...], ...) -> Scenario`` (profile applied)."""

    from drasim.pytest_plugin.harness import build_scenario

    def make(name: str = "python-test", **kwargs: Any) -> Scenario:
        __tracebackhide__ = True  # a bad field is the test's mistake: the traceback ends there
        return drasim_settings.prepare(build_scenario(name, **kwargs))

    return make


@pytest.fixture
def drasim_run(
    request: pytest.FixtureRequest, drasim_settings: Settings, drasim_run_options: RunOptions
) -> Callable[[Scenario], ScenarioResult]:
    """``run(scenario) -> ScenarioResult``: a whole scenario in a fresh node, as ``drasim run`` does."""
    from drasim.conformance import real_driver_skip_reason
    from drasim.report.model import RESULTS
    from drasim.runner.run import run_scenario

    record = record_of(request.node)

    def run(scenario: Scenario) -> ScenarioResult:
        result = run_scenario(
            drasim_settings.prepare(scenario),
            drasim_run_options,
            results=RESULTS,
            real_driver_skip=real_driver_skip_reason,
        )
        record.runs.append(result)  # a failing test shows the failures of the scenarios it ran
        return result

    return run


@pytest.fixture
def drasim_node(
    request: pytest.FixtureRequest, drasim_settings: Settings, drasim_run_options: RunOptions
) -> Iterator[DrasimNode]:
    """A running node (fake ``gpu.example.com`` by default); torn down after the test."""
    kwargs: dict[str, Any] = {}
    for mark in reversed(list(request.node.iter_markers("drasim_node"))):
        unknown = set(mark.kwargs) - _NODE_KEYS
        if unknown or mark.args:
            pytest.fail(
                f"drasim_node marker: takes keyword arguments {', '.join(sorted(_NODE_KEYS))}; "
                f"got {', '.join(sorted(unknown)) or 'positional arguments'}",
                pytrace=False,
            )
        kwargs.update(mark.kwargs)
    from drasim.errors import DrasimError
    from drasim.pytest_plugin.harness import DrasimNode, build_scenario

    name = "py-" + "".join(ch if ch.isalnum() else "-" for ch in request.node.name.lower())[:50].strip("-")
    problem = ""
    try:
        scenario = drasim_settings.prepare(build_scenario(name, **kwargs))
    except DrasimError as err:
        problem = f"drasim_node marker: {err}"
    if problem:
        pytest.fail(problem, pytrace=False)
    try:
        node = DrasimNode(scenario, drasim_run_options)
    except DrasimError as err:
        problem = f"drasim_node: cannot build the node: {err}"
    if problem:
        pytest.fail(problem, pytrace=False)
    record_of(request.node).nodes.append(node)  # the failure sections read its journal and driver output
    try:
        node.start()
    except DrasimError as err:  # the driver's output and the journal tail are in the report's sections
        problem = f"drasim_node: setting up the node failed: {err}"
    if problem:
        pytest.fail(problem, pytrace=False)
    try:
        yield node
    finally:
        node.close()


@pytest.fixture
def drasim_plugin(drasim_node: DrasimNode) -> DriverHandle:
    """The node's (first) driver: the in-process fake plugin or the real driver process."""
    return drasim_node.driver


@pytest.fixture
def drasim_journal(drasim_node: DrasimNode) -> JournalAssertions:
    """Assertions over the node's journal (gRPC calls, registrations, checkpoint writes, ...)."""
    from drasim.pytest_plugin.harness import JournalAssertions

    return JournalAssertions(drasim_node.journal)


@pytest.fixture
def drasim_api_server() -> Iterator[ApiServerHarness]:
    """A standalone fake API server (in-memory store; ``.kubeconfig()`` starts HTTP on a free port)."""
    from drasim.pytest_plugin.harness import ApiServerHarness

    harness = ApiServerHarness()
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def drasim_factory(request: pytest.FixtureRequest) -> PodClaimFactory:
    """Pod/claim names and manifests, seeded by the test's node id (reproducible, distinct per test)."""
    return PodClaimFactory(seed=request.node.nodeid)
