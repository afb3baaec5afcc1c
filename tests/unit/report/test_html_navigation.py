"""The HTML report's navigation: event links from the failure box to the diagram, the filter,
the time axis, and a header that names what the run really ran against (issue 28, item 14).

Every check parses the generated page with :mod:`html.parser`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from drasim.cli import main
from drasim.commands.run_environment import backend_detail, driver_detail, kubelet_description
from drasim.report import RunEnvironment, RunReport, ScenarioResult, render_html
from drasim.report.html_filter import SCRIPT
from drasim.report.model import STATUSES, FailureInfo
from drasim.runner.options import RunOptions
from drasim.scenario import builtin_scenario_dir, load_paths

VOID = {"meta", "br", "hr", "img", "input", "link"}
ROUND_TRIP = ["--suite", "conformance", "-k", "round-trip"]


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None
    children: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() for c in self.children)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def ancestor(self, tag: str, cls: str) -> Element | None:
        node = self.parent
        while node is not None and not (node.tag == tag and cls in node.classes):
            node = node.parent
        return node


class Tree(HTMLParser):
    """A small DOM: every element with its attributes, text and parent."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_endtag(self, tag):
        assert self.current.tag == tag, f"</{tag}> closes <{self.current.tag}>"
        assert self.current.parent is not None
        self.current = self.current.parent

    def handle_data(self, data):
        self.current.text.append(data)


def parse(text: str) -> tuple[Element, dict[str, Element]]:
    tree = Tree()
    tree.feed(text)
    tree.close()
    assert tree.current is tree.root, "unclosed elements"
    ids: dict[str, Element] = {}
    for element in tree.root.walk():
        if "id" in element.attrs:
            assert element.attrs["id"] not in ids, f"duplicate id {element.attrs['id']}"
            ids[element.attrs["id"]] = element
    return tree.root, ids


def sections(root: Element) -> list[Element]:
    return [e for e in root.walk() if e.tag == "details" and "scenario" in e.classes]


def test_every_internal_link_resolves(report: RunReport) -> None:
    root, ids = parse(render_html(report))
    links = [e.attrs["href"] for e in root.walk() if e.tag == "a"]
    assert links
    for href in links:
        assert href.startswith("#"), href
        assert href[1:] in ids, f"{href} points nowhere"


def test_failure_box_event_numbers_link_to_their_diagram_rows(report: RunReport) -> None:
    root, ids = parse(render_html(report))
    failed = next(s for s in sections(root) if s.attrs["data-status"] == "failed")
    number = failed.attrs["id"].removeprefix("scenario-")
    (box,) = [e for e in failed.walk() if e.tag == "div" and "failure" in e.classes]
    links = [e for e in box.walk() if e.tag == "a"]
    result = next(r for r in report.results if r.status == "failed")
    assert result.failure is not None
    listed = [e["seq"] for e in result.failure.similar_events + result.failure.journal_tail]
    event_links = [a for a in links if "Failing step" not in a.all_text()]
    assert [a.all_text() for a in event_links] == [f"#{seq}" for seq in listed]
    for link, seq in zip(event_links, listed, strict=True):
        assert link.attrs["href"] == f"#s{number}-e{seq}"
        target = ids[f"s{number}-e{seq}"]
        row = target if target.tag == "details" else target.ancestor("details", "ev")
        assert row is not None
        assert "ev" in row.classes
        # the row belongs to this scenario's diagram, and is the event's own row
        assert row.ancestor("details", "scenario") is failed
        assert row.attrs["data-seq"] == str(seq)
    # "Failing step 2" links to the band of step 2, marked failing
    (step_link,) = [a for a in links if "Failing step 2" in a.all_text()]
    band = ids[step_link.attrs["href"][1:]]
    assert band.classes == ["ev", "step", "failing"]
    assert "Step 2: delete_pod p1" in band.all_text()


def test_every_journal_event_has_an_anchor_even_those_drawing_no_row() -> None:
    journal = [
        {"seq": 1, "t": 0.0, "kind": "step", "index": 1, "name": "startPod", "text": "startPod a"},
        {"seq": 2, "t": 0.5, "kind": "kubelet", "operation": "PrepareResources", "pod": "default/a"},
        {"seq": 3, "t": 0.7, "kind": "step-end", "index": 1, "name": "startPod", "outcome": "failed"},
    ]
    failure = FailureInfo.build("boom", step_index=1, step_text="startPod a", journal_tail=journal)
    result = ScenarioResult(name="s", status="failed", failure=failure, journal=journal)
    root, ids = parse(render_html(RunReport(results=[result])))
    assert {"s1-e1", "s1-e2", "s1-e3"} <= set(ids)
    # the step's end draws nothing: its anchor sits on the row before it
    assert ids["s1-e3"].tag == "span"
    row = ids["s1-e3"].ancestor("details", "ev")
    assert row is not None
    assert row.attrs["data-seq"] == "2"
    links = [e.attrs["href"] for e in root.walk() if e.tag == "a" and e.attrs["href"].startswith("#s1-")]
    assert links == ["#s1-e1", "#s1-e1", "#s1-e2", "#s1-e3"]  # failing step, then the tail


def test_a_journal_number_given_twice_gets_one_anchor() -> None:
    journal = [
        {"seq": 1, "t": 0.0, "kind": "kubelet", "operation": "PrepareResources", "pod": "default/a"},
        {"seq": 1, "t": 0.1, "kind": "kubelet", "operation": "PrepareResources", "pod": "default/b"},
        {"seq": True, "t": 0.2, "kind": "kubelet", "operation": "PrepareResources", "pod": "default/c"},
    ]
    result = ScenarioResult(name="s", status="passed", journal=journal)
    _, ids = parse(render_html(RunReport(results=[result])))
    assert [key for key in ids if key.startswith("s1-")] == ["s1-e1"]


def test_diagram_rows_show_seconds_since_the_scenario_started(report: RunReport) -> None:
    root, _ = parse(render_html(report))
    first = sections(root)[0]
    result = next(r for r in report.results if r.status == "failed")
    rows = [e for e in first.walk() if e.tag == "details" and "ev" in e.classes]
    times = [
        next(c for c in row.walk() if c.tag == "span" and "time" in c.classes).all_text() for row in rows
    ]
    assert times == [f"{e['t']:.3f}s" for e in result.journal if e["kind"] != "step-end"]
    axis = [e for e in first.walk() if e.tag == "span" and "axis" in e.classes]
    assert len(axis) == 1
    assert "seconds since the scenario started" in axis[0].attrs["title"]


def test_filter_controls_and_what_each_scenario_matches(report: RunReport) -> None:
    root, ids = parse(render_html(report))
    form = ids["filter"]
    assert form.tag == "form"
    boxes = [e for e in form.walk() if e.tag == "input" and e.attrs.get("type") == "checkbox"]
    assert [b.attrs["value"] for b in boxes] == list(STATUSES)
    assert all("checked" in b.attrs and b.attrs["name"] == "status" for b in boxes)
    assert ids["filter-text"].tag == "input"
    assert ids["filter-text"].attrs["type"] == "search"
    assert ids["filter-count"].tag == "output"
    # one summary row per section, named after it, for the script to hide with it
    for section in sections(root):
        assert f"row-{section.attrs['id']}" in ids
    by_name = {s.attrs["data-text"].split(" ")[0]: s for s in sections(root)}
    failed = by_name["unprepare-is-retried"]
    assert failed.attrs["data-status"] == "failed"
    words = failed.attrs["data-text"].split(" ")
    for word in ("gpu.example.com", "gpu", "default/gpu", "default/p1", "kubelet", "faults"):
        assert word in words, word
    assert [s.attrs["data-status"] for s in sections(root)] == [
        r.status for r in sorted(report.results, key=lambda r: r.status not in ("failed", "error"))
    ]
    # the script is the page's last element, after everything it looks up
    assert root.children[-1].children[-1].children[-1].tag == "script"


def test_hostile_names_stay_text_in_anchors_filter_and_header() -> None:
    evil = '"><script>alert(1)</script>'
    journal = [
        {"seq": 1, "t": 0, "kind": "rpc", "side": "kubelet", "driver": evil, "method": "/x/NodePrepare",
         "code": "Unavailable", "request": {"claims": [{"namespace": evil, "uid": "u", "name": evil}]}},
        {"seq": "1\" onclick=\"x", "t": "now", "kind": "kubelet", "operation": "Prepare", "pod": evil},
    ]  # fmt: skip
    failure = FailureInfo.build(evil, step_index=1, step_text=evil, journal_tail=journal)
    result = ScenarioResult(name=evil, status="failed", failure=failure, journal=journal, tags=[evil])
    environment = RunEnvironment(
        driver=evil, backend=evil, kubelet=evil, driver_detail=evil, extra={"injectedBugs": evil, evil: evil}
    )
    text = render_html(RunReport(results=[result], environment=environment))
    assert text.count("<script") == 1
    root, ids = parse(text)
    for element in root.walk():
        assert not any(name.startswith("on") for name in element.attrs), element.attrs
    assert ids["run-driver"].all_text().startswith(evil)
    assert ids["run-bugs"].all_text() == evil
    (section,) = sections(root)
    assert evil in section.attrs["data-text"]
    # the event with a non-numeric seq gets no anchor and no link, and breaks nothing
    links = [e.attrs["href"] for e in root.walk() if e.tag == "a"]
    assert all(href[1:] in ids for href in links)


def _header(path: Path) -> dict[str, str]:
    _, ids = parse(path.read_text())
    return {key: ids[key].all_text() for key in ids if key.startswith("run-")}


def test_header_of_a_default_run_and_of_an_injected_bug(tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    assert main(["run", *ROUND_TRIP, "-q", "--html", str(html)]) == 0
    header = _header(html)
    assert header["run-driver"] == "fake"
    assert header["run-backend"] == "memory"
    assert header["run-kubelet"] == "emulated (drasim's DRA manager)"
    assert "run-bugs" not in header
    assert "bug-banner" not in html.read_text()

    main(["run", *ROUND_TRIP, "-q", "--inject-bug", "non-idempotent", "--html", str(html)])
    header = _header(html)
    assert header["run-bugs"] == "non-idempotent"
    _, ids = parse(html.read_text())
    assert "non-idempotent" in ids["bug-banner"].all_text()
    assert "--inject-bug" in ids["bug-banner"].all_text()
    assert "Bug injected: non-idempotent (--inject-bug, every fake driver)" in html.read_text()


def test_header_of_a_driver_command_without_proxy(tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    args = ["--driver-cmd", "/nonexistent/driver --flag", "--driver-name", "gpu.example.com", "--no-proxy"]
    assert main(["run", *ROUND_TRIP, "-q", *args, "--html", str(html)]) == 1
    header = _header(html)
    assert header["run-driver"] == (
        "/nonexistent/driver --flag (registers gpu.example.com, --no-proxy: the kubelet reaches it directly)"
    )
    assert header["run-backend"] == "http"  # a real driver reads the API server over HTTP


def test_header_says_the_other_drivers_of_multi_driver_scenarios_stay_fake() -> None:
    scenarios = load_paths([builtin_scenario_dir()])
    several = sum(len(s.spec.all_drivers()) > 1 for s in scenarios)
    assert several > 0
    detail = driver_detail(RunOptions(driver_cmd="drv"), scenarios)
    assert detail.endswith(f"the other drivers of {several} multi-driver scenarios stay fake")


def test_a_scenario_that_switches_a_bug_on_says_so(tmp_path: Path) -> None:
    source = builtin_scenario_dir() / "conformance" / "prepare-unprepare-round-trip.yaml"
    (scenario,) = load_paths([source])
    assert scenario.spec.driver is not None
    assert scenario.spec.driver.fake is not None
    name = scenario.spec.driver.fake.name
    spec = f"fake: {{name: {name}"
    text = source.read_text().replace(spec, f"fake: {{bugs: [non-idempotent], name: {name}", 1)
    assert "bugs: [non-idempotent]" in text
    path = tmp_path / "buggy.yaml"
    path.write_text(text)
    html = tmp_path / "r.html"
    main(["run", str(path), "-q", "--html", str(html)])
    assert "Bug injected: non-idempotent (the scenario's own fake driver spec)" in html.read_text()
    assert "run-bugs" not in _header(html)  # not the whole run's


@pytest.mark.parametrize(
    ("options", "driver", "backend", "kubelet"),
    [
        (RunOptions(), "", "", "emulated (drasim's DRA manager)"),
        (
            RunOptions(driver_cmd="drv --x", driver_name="gpu.example.com", capabilities=("health",)),
            "registers gpu.example.com, behind drasim's proxy, capabilities health",
            "",
            "emulated (drasim's DRA manager)",
        ),
        (
            RunOptions(backend="kubeconfig", kubeconfig=Path("/x/.drasim/control-plane/admin.kubeconfig")),
            "",
            "kubeconfig /x/.drasim/control-plane/admin.kubeconfig, its current context",
            "emulated (drasim's DRA manager)",
        ),
        (
            RunOptions(backend="kubeconfig", kubeconfig=Path("/k.yaml"), context="kind-dra"),
            "",
            "kubeconfig /k.yaml, context kind-dra",
            "emulated (drasim's DRA manager)",
        ),
        (
            RunOptions(kubelet="upstream", kubelet_versions=("1.35", "1.37")),
            "",
            "",
            "upstream (k8s.io/kubernetes v1.35.4, v1.37.2, upstream's DRA manager)",
        ),
        (
            RunOptions(kubelet="upstream@1.36.3", kubelet_versions=("1.36",)),
            "",
            "",
            "upstream@1.36.3 (k8s.io/kubernetes v1.36.3, upstream's DRA manager)",
        ),
    ],
)
def test_header_details_for_option_combinations(
    options: RunOptions, driver: str, backend: str, kubelet: str, tmp_path: Path
) -> None:
    scenarios = load_paths([builtin_scenario_dir() / "conformance" / "prepare-unprepare-round-trip.yaml"])
    environment = RunEnvironment(
        driver=options.driver_cmd or "fake",
        backend=options.backend or "memory",
        driver_detail=driver_detail(options),
        backend_detail=backend_detail(options),
        kubelet=kubelet_description(options, scenarios),
    )
    assert (environment.driver_detail, environment.backend_detail, environment.kubelet) == (
        driver,
        backend,
        kubelet,
    )
    _, ids = parse(render_html(RunReport(environment=environment)))
    assert ids["run-kubelet"].all_text() == kubelet
    assert ids["run-backend"].all_text() == (
        f"{environment.backend} ({backend})" if backend else environment.backend
    )
    # the JSON report keeps the descriptions
    assert RunEnvironment.from_dict(environment.to_dict()) == environment


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the script is not parsed")
def test_the_filter_script_is_valid_javascript(tmp_path: Path) -> None:
    script = tmp_path / "filter.js"
    script.write_text(SCRIPT)
    command = ["node", "--check", str(script)]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the script is not run")
def test_the_filter_hides_by_status_and_text_and_dims_other_rows(report: RunReport, tmp_path: Path) -> None:
    """The real script, run by node against the page's own attributes (a minimal DOM stand-in)."""
    root, _ = parse(render_html(report))
    page = {
        "statuses": list(STATUSES),
        "sections": [
            {
                "id": s.attrs["id"],
                "status": s.attrs["data-status"],
                "text": s.attrs["data-text"],
                "rows": [
                    {"text": r.attrs["data-text"], "classes": r.classes}
                    for r in s.walk()
                    if r.tag == "details" and "ev" in r.classes
                ],
            }
            for s in sections(root)
        ],
        "actions": [{"uncheck": "passed"}, {"text": "  DEFAULT/P1 "}, {"text": ""}, {"text": "nothing-x"}],
    }
    (tmp_path / "page.json").write_text(json.dumps(page))
    (tmp_path / "filter.js").write_text(SCRIPT)
    harness = Path(__file__).parent / "js" / "filter_harness.js"
    command = ["node", str(harness), str(tmp_path / "page.json"), str(tmp_path / "filter.js")]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    states = json.loads(done.stdout)
    ids = [s["id"] for s in page["sections"]]
    by_name = {s["text"].split(" ")[0]: s["id"] for s in page["sections"]}
    retried = by_name["unprepare-is-retried"]
    # at start everything is shown
    assert states[0] == {
        "hidden": [],
        "hiddenRows": [],
        "dimmed": [0] * len(ids),
        "count": "5 of 5 scenarios shown",
    }
    # status: the passed ones are hidden, with their summary rows
    passed = [s["id"] for s in page["sections"] if s["status"] == "passed"]
    assert sorted(states[1]["hidden"]) == sorted(passed)
    assert sorted(states[1]["hiddenRows"]) == sorted(f"row-{i}" for i in passed)
    assert states[1]["count"] == "3 of 5 scenarios shown"
    # and a pod, in any case: only the failed scenario names it; its rows that do not are dimmed
    assert sorted(states[2]["hidden"]) == sorted(i for i in ids if i != retried)
    assert states[2]["count"] == "1 of 5 scenarios shown"
    rows = page["sections"][ids.index(retried)]["rows"]
    steps = sum("step" in r["classes"] for r in rows)
    assert 0 < states[2]["dimmed"][ids.index(retried)] < len(rows) - steps
    # the text cleared: the status filter alone again, nothing dimmed
    assert states[3] == states[1]
    # a word nothing has
    assert states[4]["count"] == "0 of 5 scenarios shown"
