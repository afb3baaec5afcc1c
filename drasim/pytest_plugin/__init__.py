"""The drasim pytest plugin (entry point ``pytest11``: ``drasim = "drasim.pytest_plugin"``).

- Scenario YAML files become test items (:mod:`.collect`), one per scenario.
- ``--drasim-*`` options / ``drasim_*`` ini keys configure the driver under test,
  the kubelet profile, a built-in suite and a report directory (:mod:`.options`).
- ``@pytest.mark.drasim_requires("health")`` skips a test when the driver lacks a
  capability; scenario items get that marker from what they use.
- Fixtures for tests written in Python live in :mod:`.fixtures`; a failing test that used
  them gets a scenario's failure details, and the report directory lists it (:mod:`.pyitems`).

docs/pytest-plugin.md shows the whole surface with examples.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from drasim.conformance import FAKE_PLUGIN, PROXY, skip_reason
from drasim.grpc_logging import quiet_grpc_logs
from drasim.pytest_plugin.collect import RESULT_ATTRIBUTE, ScenarioFile, ScenarioItem, matches
from drasim.pytest_plugin.fixtures import (
    drasim_api_server,
    drasim_control_plane,
    drasim_factory,
    drasim_journal,
    drasim_kubelet_version,
    drasim_node,
    drasim_plugin,
    drasim_run,
    drasim_run_options,
    drasim_scenario,
    drasim_settings,
)
from drasim.pytest_plugin.options import SETTINGS_KEY, Settings, add_options, resolve, settings_of
from drasim.pytest_plugin.pyitems import annotate, uses_drasim
from drasim.pytest_plugin.reports import COLLECTOR_KEY, ResultCollector
from drasim.report.model import ScenarioResult

quiet_grpc_logs()  # pytest loads this plugin before any test module imports grpc

__all__ = [
    "drasim_api_server",
    "drasim_control_plane",
    "drasim_factory",
    "drasim_journal",
    "drasim_kubelet_version",
    "drasim_node",
    "drasim_plugin",
    "drasim_run",
    "drasim_run_options",
    "drasim_scenario",
    "drasim_settings",
]
FIXTURE_NAMES = frozenset(__all__)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Options and ini keys."""
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Validate the options, register markers, add the suite's directory to the collection."""
    config.addinivalue_line(
        "markers",
        "drasim_requires(*capabilities): skip unless the driver under test has these capabilities "
        "(see --drasim-capability)",
    )
    config.addinivalue_line(
        "markers",
        "drasim_node(driver=None, claims=None, objects=None, kubelet=None): "
        "configure the drasim_node fixture",
    )
    settings = resolve(config)
    config.stash[SETTINGS_KEY] = settings
    collector = ResultCollector(
        settings,
        is_worker=hasattr(config, "workerinput"),
        per_worker=config.getoption("dist", "no") == "each",
    )
    config.stash[COLLECTOR_KEY] = collector
    config.pluginmanager.register(collector, "drasim-report-collector")
    if settings.suite_dirs:
        _add_suite_args(config, settings.suite_dirs)


def _add_suite_args(config: pytest.Config, dirs: tuple[Path, ...]) -> None:
    """Collect the suite: alone when no paths were given, else next to the given paths.

    Paths from the ini file's ``testpaths`` count as given (a driver repository's own
    ``scenarios/`` next to the suite, as ``drasim init`` configures it).
    """
    explicit = config.args_source in (pytest.Config.ArgsSource.ARGS, pytest.Config.ArgsSource.TESTPATHS)
    wanted = [str(d) for d in dirs]
    if not explicit:
        config.args[:] = wanted
        return
    present = {str(Path(a.split("::")[0]).resolve()) for a in config.args}
    config.args.extend(d for d in wanted if d not in present)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """With several ``--drasim-kubelet-version`` values, Python tests run once per version."""
    versions = settings_of(metafunc.config).kubelet_versions
    if len(versions) > 1 and "drasim_kubelet_version" in metafunc.fixturenames:
        metafunc.parametrize(
            "drasim_kubelet_version", versions, indirect=True, ids=[f"kubelet-{v}" for v in versions]
        )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Scenario files by glob or suite directory."""
    if matches(file_path, settings_of(parent.config)):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep ``--drasim-shard``'s items; mark those whose required capabilities the driver lacks as
    skipped, with the reason.

    Decided at collection time (the capabilities are known from the options), so the
    skip is reported at the scenario's own file and line.
    """
    settings = settings_of(config)
    if settings.shard is not None:
        from drasim.runner.shard import in_shard

        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            (keep if in_shard(shard_row(item), settings.shard) else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    for item in items:
        reason = missing_capability_reason(item, settings)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"drasim: {reason}"))


def shard_row(item: pytest.Item) -> str:
    """The name ``--drasim-shard`` splits by: a scenario item's row name (``name`` or
    ``name[kubelet-1.34]``, as ``drasim run --shard`` splits), else the node id."""
    return item.name if isinstance(item, ScenarioItem) else item.nodeid


def missing_capability_reason(item: pytest.Item, settings: Settings) -> str:
    """Why ``item`` cannot run against the configured driver ('' when it can)."""
    required: list[str] = []
    for mark in item.iter_markers("drasim_requires"):
        required += [str(c) for c in mark.args]
    have = settings.capabilities
    missing = [c for c in dict.fromkeys(required) if c not in have]
    if not missing:
        return ""
    label = settings.driver_label
    if isinstance(item, ScenarioItem):
        reqs = [r for r in item.drasim_requirements if r.capability in missing]
        named = {r.capability for r in reqs}
        parts = [skip_reason(reqs, label)] if reqs else []
        parts += [f"{label} lacks capability {c!r}" for c in missing if c not in named]
        reason = "; ".join(parts)
    else:
        reason = "; ".join(f"{label} lacks capability {c!r}" for c in missing)
    if settings.driver_cmd and not set(missing) & {FAKE_PLUGIN, PROXY}:  # declaring grants neither
        reason += " (declare what the driver supports with --drasim-capability)"
    if isinstance(item, ScenarioItem):
        item.record(ScenarioResult.of(item.scenario, "skipped", skip_reason=reason))
    return reason


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Hook: a scenario item's report carries its result for the report directory; a Python
    test that used drasim's fixtures gets a scenario's failure sections and a result too."""
    report = yield
    if isinstance(item, ScenarioItem):
        item.attach_result(report)
    elif uses_drasim(item, FIXTURE_NAMES):
        error = call.excinfo.value if call.excinfo is not None else None
        annotate(item, report, error, settings_of(item.config), RESULT_ATTRIBUTE)
    return report


def pytest_unconfigure(config: pytest.Config) -> None:
    """Drop the report collector plugin."""
    collector = config.stash.get(COLLECTOR_KEY, None)
    if collector is not None and config.pluginmanager.is_registered(collector):
        config.pluginmanager.unregister(collector)
