"""Helpers behind the plugin's fixtures: a live simulated node, an API server, journal assertions.

:class:`DrasimNode` is a :class:`drasim.runner.world.World` set up from a small
scenario and driven step by step from Python with the scenario language's own steps
(``node.step({"startPod": {"name": "a", "claims": ["gpu"]}})``), so a Python test
and a YAML scenario mean exactly the same thing.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from drasim.apiserver import Cluster, MemoryCluster, ObjectStore
from drasim.errors import DrasimError, ScenarioError
from drasim.journal import Journal, describe_event
from drasim.journal.calls import RpcCall
from drasim.report.diff import unified_diff
from drasim.runner.context import StepFailure
from drasim.runner.drivers import DriverHandle
from drasim.runner.options import RunOptions
from drasim.runner.session import StepSession, describe_step
from drasim.runner.world import World, open_world
from drasim.scenario.decoder import INVALID, Decoder
from drasim.scenario.loader import load_text
from drasim.scenario.schema import Scenario
from drasim.scenario.yamlsrc import Loc

DEFAULT_DRIVER: dict[str, Any] = {"fake": {"name": "gpu.example.com"}}


class StepAssertionError(AssertionError):
    """A step run from Python did not do what it should (the scenario's StepFailure, as an assert)."""


@dataclass
class FailedStep:
    """The step of a Python test that did not hold: what a YAML scenario's failure shows."""

    index: int
    """Counted from 1 over the node's steps, as the journal's ``step`` events count."""
    text: str
    message: str
    expected: Any = None
    actual: Any = None
    similar: list[dict[str, Any]] = field(default_factory=list)
    error: StepAssertionError | None = None
    """What :meth:`DrasimNode.step` raised for it (a test that caught it failed for another reason)."""


def build_scenario(
    name: str = "python-test",
    *,
    driver: Mapping[str, Any] | None = None,
    drivers: Sequence[Mapping[str, Any]] = (),
    claims: Sequence[Mapping[str, Any] | str] = (),
    objects: Sequence[Mapping[str, Any]] = (),
    kubelet: Mapping[str, Any] | None = None,
    api_server: Mapping[str, Any] | None = None,
    steps: Sequence[Mapping[str, Any]] = (),
    tags: Sequence[str] = (),
) -> Scenario:
    """A :class:`Scenario` from Python values, checked by the real loader (errors name the field)."""
    __tracebackhide__ = True
    spec: dict[str, Any] = {}
    if drivers:
        spec["drivers"] = [dict(d) for d in drivers]
    else:
        spec["driver"] = dict(driver or DEFAULT_DRIVER)
    if claims:
        spec["claims"] = [{"name": c} if isinstance(c, str) else dict(c) for c in claims]
    if objects:
        spec["objects"] = [dict(o) for o in objects]
    if kubelet:
        spec["kubelet"] = dict(kubelet)
    if api_server:
        spec["apiServer"] = dict(api_server)
    spec["steps"] = [dict(s) for s in steps] or [{"mark": {"name": "begin"}}]
    document = {
        "apiVersion": "drasim.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": name, "description": "built from Python", "tags": list(tags)},
        "spec": spec,
    }
    text = yaml.safe_dump(document, sort_keys=False)
    try:
        return load_text(text, f"<{name}>")[0]
    except ScenarioError as err:  # the loader's frames say nothing more than its message
        raise err.with_traceback(None) from None


def decode_step(spec: Mapping[str, Any], where: str = "<python>") -> Any:
    """One step ``{name: args}`` decoded like a scenario step; ValueError lists the problems."""
    __tracebackhide__ = True
    decoder = Decoder(where)
    step = decoder.decode_step(dict(spec), "step", Loc(where, 1, 1))
    if step is INVALID or decoder.problems:
        raise ValueError("; ".join(str(p) for p in decoder.problems) or f"invalid step {spec!r}")
    return step


class DrasimNode:
    """A running simulated node: API server, driver(s), emulated kubelet.

    Building it makes the node's parts (workspace, API server); :meth:`start` (or ``with``)
    starts them and :meth:`close` removes them.
    """

    def __init__(self, scenario: Scenario, options: RunOptions | None = None) -> None:
        self.scenario = scenario
        self.world: World = open_world(scenario, options or RunOptions())
        self.session = StepSession(self.world)
        """Runs the steps, as ``drasim run`` and ``drasim explore`` do (journaled, with their windows)."""
        self.failed_step: FailedStep | None = None
        """The last step that did not hold (the pytest plugin reports it like a scenario's)."""
        self._final_output: tuple[str, str] | None = None

    def start(self) -> DrasimNode:
        """Set the node up (drivers registered, kubelet running); cleans up on failure."""
        __tracebackhide__ = True
        try:
            self.world.setup()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop everything and remove the workspace (never raises).

        Driver processes end first and what they wrote is kept: :meth:`driver_output` still
        answers afterwards (the workspace with their logs is gone).
        """
        if self._final_output is None:
            with contextlib.suppress(Exception):
                self.world.shut_down()
            self._final_output = self.driver_output()
        self.world.teardown()

    def driver_output(self) -> tuple[str, str]:
        """The (stdout, stderr) tails of the driver processes ('' for in-process fake drivers)."""
        if self._final_output is not None:
            return self._final_output
        outs: list[str] = []
        errs: list[str] = []
        for handle in self.world.fleet.drivers.values():
            with contextlib.suppress(Exception):
                out, err = handle.output()
                outs.append(out)
                errs.append(err)
        return "".join(outs), "".join(errs)

    def __enter__(self) -> DrasimNode:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- parts
    @property
    def journal(self) -> Journal:
        """Everything that happened, in order."""
        return self.world.journal

    @property
    def store(self) -> ObjectStore:
        """The API server's object store."""
        return self.world.api.store

    @property
    def api(self) -> Cluster:
        """An API client acting as the test runner (like kubectl)."""
        return self.world.api.runner_api

    @property
    def name(self) -> str:
        """The node name."""
        return self.world.node

    @property
    def driver(self) -> DriverHandle:
        """The (only or first) driver: a fake plugin or a driver process."""
        return next(iter(self.world.fleet.drivers.values()))

    @property
    def workspace_root(self) -> Path:
        """The node's directory tree (``/dev/shm/drasim-*`` or ``/tmp/drasim-*``)."""
        return self.world.workspace.root

    def kubeconfig(self) -> Path:
        """A kubeconfig for the HTTP API server over this node's store (started on first use, port 0)."""
        return self.world.kubeconfig()

    # ---------------------------------------------------------------- steps
    def step(self, spec: Mapping[str, Any]) -> None:
        """Run one scenario step, e.g. ``{"startPod": {"name": "a", "claims": ["gpu"]}}``.

        Expectations that do not hold raise :class:`StepAssertionError` with the expected-vs-actual diff.
        """
        __tracebackhide__ = True  # a failure points at the test's line, not into drasim
        step = decode_step(spec)
        try:
            self.session.run(step)
        except StepFailure as failure:
            text = failure.message
            if failure.expected is not None or failure.actual is not None:
                text += "\nExpected vs actual:\n" + unified_diff(failure.expected, failure.actual)
            raise self._failed(step, failure.message, text, failure) from None
        except DrasimError as err:
            raise self._failed(step, str(err), str(err)) from None

    def _failed(
        self, step: Any, message: str, text: str, failure: StepFailure | None = None
    ) -> StepAssertionError:
        """Remember the failing step and make the error to raise for it."""
        error = StepAssertionError(f"{describe_step(step)}: {text}")
        self.failed_step = FailedStep(
            index=(self.session.index or 0) + 1,
            text=describe_step(step),
            message=message,
            expected=failure.expected if failure else None,
            actual=failure.actual if failure else None,
            similar=list(failure.similar) if failure else [],
            error=error,
        )
        return error

    def steps(self, *specs: Mapping[str, Any]) -> None:
        """Run several steps in order."""
        __tracebackhide__ = True
        for spec in specs:
            self.step(spec)

    def create(self, *objects: Mapping[str, Any]) -> list[Any]:
        """Create manifests (``$(DRIVER)`` and ``$(NODE)`` expanded) as the test runner."""
        __tracebackhide__ = True
        return [self.api.create(self.world.api.expand(dict(obj))) for obj in objects]


class ApiServerHarness:
    """A standalone fake API server: one store, clients per identity, HTTP on demand."""

    def __init__(self) -> None:
        self.store = ObjectStore()
        self._http: Any = None
        self._dir: Path | None = None

    def client(self, identity: str = "runner") -> MemoryCluster:
        """An in-process client; ``identity`` (runner, kubelet, driver) is what API faults target."""
        return MemoryCluster(self.store, client=identity)

    def kubeconfig(self) -> Path:
        """Start the HTTP server (127.0.0.1, a free port) once and return its kubeconfig."""
        if self._http is None:
            from drasim.apiserver.http import HttpApiServer

            self._dir = Path(tempfile.mkdtemp(prefix="drasim-api-"))
            self._http = HttpApiServer(self.store).start()
        assert self._dir is not None
        return Path(self._http.write_kubeconfig(self._dir / "kubeconfig"))

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>/<token>`` (starts the server like :meth:`kubeconfig`): every
        request under it carries the server's token, so plain HTTP tools need nothing else."""
        if self._http is None:
            self.kubeconfig()
        return str(self._http.client_url)

    @property
    def token(self) -> str:
        """The server's bearer token (``Authorization: Bearer <token>`` on requests to its port)."""
        if self._http is None:
            self.kubeconfig()
        return str(self._http.token)

    def close(self) -> None:
        """Stop the HTTP server and remove its directory."""
        if self._http is not None:
            self._http.stop()
            self._http = None
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


class JournalAssertions:
    """Assertions over a node's journal.

    Their failures name what was missing; the pytest plugin adds the journal tail, the driver's
    output and a reproduce line to the failing test's report (:mod:`drasim.pytest_plugin.pyitems`).
    """

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def mark(self) -> int:
        """A position; pass it as ``since`` to look only at what happened afterwards."""
        return self.journal.mark()

    def calls(self, method: str = "", *, driver: str | None = None, since: int = 0) -> list[RpcCall]:
        """gRPC calls the kubelet made (``method`` is a suffix such as ``NodePrepareResources``)."""
        return self.journal.rpc_calls(method, side="kubelet", driver=driver, since_seq=since)

    def assert_calls(
        self, method: str, count: int, *, claim: str = "", driver: str | None = None, since: int = 0
    ) -> list[RpcCall]:
        """Exactly ``count`` calls of ``method`` (carrying ``claim``, ``name`` or ``namespace/name``)."""
        __tracebackhide__ = True
        key = claim if "/" in claim or not claim else f"default/{claim}"
        calls = [c for c in self.calls(method, driver=driver, since=since) if not key or key in c.claim_keys]
        if len(calls) != count:
            what = f"{method} calls" + (f" for claim {key}" if key else "")
            raise AssertionError(f"expected {count} {what}, found {len(calls)}")
        return calls

    def assert_event(self, kind: str, *, since: int = 0, **match: Any) -> dict[str, Any]:
        """The first journal event of ``kind`` whose fields equal ``match``."""
        __tracebackhide__ = True
        events = self.journal.events(kind, since_seq=since, **match)
        if not events:
            shown = ", ".join(f"{k}={v!r}" for k, v in match.items())
            raise AssertionError(f"no {kind} event with {shown or 'any fields'}")
        return dict(events[0])

    def assert_no_event(self, kind: str, *, since: int = 0, **match: Any) -> None:
        """No journal event of ``kind`` matches ``match``."""
        __tracebackhide__ = True
        events = self.journal.events(kind, since_seq=since, **match)
        if events:
            raise AssertionError(f"unexpected event: {describe_event(events[0])}")

    def wait_for(self, kind: str, *, timeout: float = 10.0, since: int = 0, **match: Any) -> dict[str, Any]:
        """Block until a matching event exists (no sleeping: the journal signals new events)."""
        __tracebackhide__ = True
        event = self.journal.wait_for(timeout, kind, since_seq=since, **match)
        if event is None:
            shown = ", ".join(f"{k}={v!r}" for k, v in match.items())
            raise AssertionError(f"no {kind} event with {shown} within {timeout:g}s")
        return dict(event)
