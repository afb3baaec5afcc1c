"""`drasim run --kubelet-version all` on the built-in library is green, and its skips are the documented ones.

docs/kubelet-versions.md lists every library scenario that carries ``kubeletVersions`` with the
versions it runs as (and why not the others). A (scenario, version) row of ``--kubelet-version all``
is skipped exactly when the version is not in that list, so comparing the table with the library
pins the whole set of skipped rows without running the matrix; the documented counts are checked
against the same arithmetic. The scenarios that used to fail as 1.31 (and those whose pins were
widened) are run for real as every version.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drasim.profiles import VERSIONS
from drasim.report.model import RESULTS
from drasim.runner.options import RunOptions
from drasim.runner.run import run_scenario
from drasim.runner.versions import allowed
from drasim.scenario import builtin_scenario_dir, load_paths
from drasim.scenario.schema import Scenario

DOC = Path(__file__).resolve().parents[2] / "docs" / "kubelet-versions.md"
LIBRARY: dict[str, Scenario] = {s.name: s for s in load_paths([builtin_scenario_dir()])}

# Failed as kubelet 1.31 before they were pinned (issue 28 item 8), and pins widened to versions they pass as.
FORMERLY_FAILING = [
    "registration-kubelet-profile-v1beta1-only",
    "registration-services-reverse-order",
    "registration-services-v1beta1-only",
    "slices-same-objects-after-plugin-restart",
    "slices-wiped-after-deregistration",
]
WIDENED = [
    "faults-kubelet-claim-fetch-fails",
]


def documented_pins() -> dict[str, tuple[str, ...]]:
    text = DOC.read_text()
    block = text.split("<!-- library-pins:start -->", 1)[1].split("<!-- library-pins:end -->", 1)[0]
    pins: dict[str, tuple[str, ...]] = {}
    for line in block.splitlines():
        match = re.match(r"^\| `([a-z0-9-]+)` \| ([0-9., ]+) \| (.+) \|$", line)
        if match:
            assert match[1] not in pins, f"{match[1]} is listed twice"
            assert match[3].strip(), f"{match[1]}: no reason given"
            pins[match[1]] = tuple(v.strip() for v in match[2].split(","))
    return pins


def test_the_documented_table_is_exactly_the_librarys_pins() -> None:
    pinned = {name: allowed(s) for name, s in LIBRARY.items() if s.spec.kubelet_versions}
    assert documented_pins() == pinned


def test_the_documented_counts_match_the_pins() -> None:
    rows = len(LIBRARY) * len(VERSIONS)
    skipped = sum(len(VERSIONS) - len(allowed(s)) for s in LIBRARY.values())
    text = " ".join(DOC.read_text().split())
    matrix = f"{len(LIBRARY)} scenarios \N{MULTIPLICATION SIGN} {len(VERSIONS)} versions"
    assert f"{matrix} = {rows} rows, {skipped} of them skipped" in text
    assert f"{rows - skipped} passed, 0 failed, {skipped} skipped" in text
    as_131 = sum("1.31" not in allowed(s) for s in LIBRARY.values())
    assert f"{len(LIBRARY) - as_131} passed, 0 failed, {as_131} skipped" in text


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", FORMERLY_FAILING + WIDENED)
def test_formerly_failing_and_widened_scenarios_pass_or_skip_with_the_reason(name: str, version: str) -> None:
    scenario = LIBRARY[name]
    result = run_scenario(scenario, RunOptions(kubelet_version=version), results=RESULTS)
    if version in allowed(scenario):
        assert result.status == "passed", result.failure.message if result.failure else result.skip_reason
    else:
        assert result.status == "skipped"
        assert f"kubelet {version} is outside this scenario's kubeletVersions" in result.skip_reason
