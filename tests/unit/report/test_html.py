"""The HTML report: self-contained, escaped, with a sequence diagram per scenario."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

from drasim.report import RunReport, ScenarioResult, render_html, write_html
from drasim.report.html_diagram import APISERVER, KUBELET, build_rows, lifelines, render_diagram

VOID = {"meta", "br", "hr", "img", "input", "link"}


class Collector(HTMLParser):
    """Checks nesting and gathers tags, attributes and the text of diagram rows."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.errors: list[str] = []
        self.texts: list[tuple[str, str]] = []  # (class of the enclosing span, text)
        self._classes: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag not in VOID:
            self.stack.append(tag)
            self._classes.append(attributes.get("class") or "")

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with open {self.stack[-3:]}")
            return
        self.stack.pop()
        self._classes.pop()

    def handle_data(self, data):
        if data.strip() and self._classes:
            self.texts.append((self._classes[-1], data))


def parse(text: str) -> Collector:
    collector = Collector()
    collector.feed(text)
    collector.close()
    assert collector.errors == []
    assert collector.stack == []
    return collector


def test_html_is_well_formed_and_self_contained(report: RunReport):
    text = render_html(report)
    assert text.startswith("<!DOCTYPE html>")
    doc = parse(text)
    tags = {tag for tag, _ in doc.tags}
    assert "link" not in tags
    assert "img" not in tags
    for _, attrs in doc.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), name  # no inline event handlers
            assert not (value or "").startswith(("http:", "https:", "//", "javascript:")), (name, value)
    # One script, inline (the filter), allowed by its hash and nothing else.
    scripts = [a for t, a in doc.tags if t == "script"]
    assert scripts == [{}]
    (source,) = re.findall(r"<script>(.*?)</script>", text, re.S)
    digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
    csp = [a for t, a in doc.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp
    assert csp[0]["content"] == f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    assert "@import" not in text
    assert "url(" not in text
    assert "fetch(" not in source
    assert "XMLHttpRequest" not in source
    assert "import(" not in source


def test_summary_table_links_each_scenario(report: RunReport):
    doc = parse(render_html(report))
    links = [a["href"] for t, a in doc.tags if t == "a" and a["href"].startswith("#scenario-")]
    assert links == [f"#scenario-{i}" for i in range(1, 6)]
    sections = [a for t, a in doc.tags if t == "details" and "scenario" in (a.get("class") or "").split()]
    assert [a["id"] for a in sections] == [f"scenario-{i}" for i in range(1, 6)]
    # Failed and errored scenarios come first (open), then the rest, each group in run order.
    assert ["open" in a for a in sections] == [True, True, False, False, False]
    bad = [r.name for r in report.results if r.status in ("failed", "error")]
    rest = [r.name for r in report.results if r.status not in ("failed", "error")]
    table = [text for cls, text in doc.texts if cls == "" and text in bad + rest]
    assert table[: len(report.results)] == bad + rest
    assert ("", "2 passed, 1 failed, 1 skipped, 1 error in 1.25s") in doc.texts


def test_diagram_draws_arrows_notes_and_steps_in_journal_order(report: RunReport):
    failed = report.results[1]
    doc = parse(render_diagram(failed.journal, failing_step=2))
    heads = [text for cls, text in doc.texts if cls == "head"]
    assert heads == ["kubelet", "gpu.example.com", "API server"]
    drawn = [(cls, text) for cls, text in doc.texts if cls in ("label", "note", "band")]
    assert drawn == [
        ("note", "process started pid 4242"),
        ("label", "register v1.DRAPlugin → registered"),
        ("band", "Step 1: start_pod p1"),
        ("label", "GET resourceclaims default/gpu → 200 1.0ms"),
        ("label", "NodePrepareResources(gpu) → OK 1.5ms"),
        ("note", "checkpoint write: 1 entry, 412 B"),
        ("note", "PrepareResources default/p1 → ok 4.0ms"),
        ("band", "Step 2: delete_pod p1"),
        ("note", "fault: NodeUnprepareResources -> Unavailable"),
        ("label", "NodeUnprepareResources(gpu) → Unavailable 1.5ms"),
        ("note", "UnprepareResources default/p1 → error"),
    ]
    rows = [a for t, a in doc.tags if t == "details"]
    assert [a["data-seq"] for a in rows] == [str(i) for i in range(1, 12)]
    assert rows[9]["class"] == "ev rpc err"
    assert rows[4]["class"] == "ev rpc"
    assert rows[7]["class"] == "ev step failing"
    assert rows[2]["class"] == "ev step"
    arrows = [a for t, a in doc.tags if t == "span" and (a.get("class") or "").startswith("arrow")]
    # kubelet (column 0 of 3) -> plugin (column 1) spans 16.667% .. 50%
    assert arrows[2] == {"class": "arrow ltr", "style": "left:16.667%;width:33.333%"}
    assert arrows[1]["style"] == "left:16.667%;width:66.667%"  # kubelet -> API server
    # the expanded row carries the request and response
    pres = [text for cls, text in doc.texts if cls == "" and '"method"' in text]
    assert '"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"' in pres[-1]
    assert '"code": "Unavailable"' in pres[-1]


def test_per_claim_errors_other_clients_and_several_drivers():
    events = [
        {
            "seq": 1,
            "t": 0,
            "kind": "api",
            "client": "scenario",
            "verb": "CREATE",
            "resource": "pods",
            "namespace": "default",
            "name": "p1",
            "code": 201,
        },
        {
            "seq": 2,
            "t": 0,
            "kind": "api",
            "client": "net.example.com",
            "verb": "CREATE",
            "resource": "resourceslices",
            "name": "node-1-net",
            "code": 409,
            "error": "AlreadyExists",
        },
        {
            "seq": 3,
            "t": 0,
            "kind": "rpc",
            "side": "kubelet",
            "driver": "gpu.example.com",
            "method": "/x/NodePrepareResources",
            "code": "OK",
            "request": {"claims": [{"namespace": "d", "uid": f"u{i}", "name": f"c{i}"} for i in range(5)]},
            "response": {"claims": {"u1": {"error": "no such device"}}},
        },
        {
            "seq": 4,
            "t": 0,
            "kind": "rpc",
            "side": "kubelet",
            "driver": "net.example.com",
            "method": "/x/NodeUnprepareResources",
            "code": "OK",
            "request": {"claims": []},
        },
        {
            "seq": 5,
            "t": 0,
            "kind": "rpc",
            "side": "plugin",
            "driver": "net.example.com",
            "method": "/x/NodeUnprepareResources",
            "code": "OK",
            "request": {"claims": []},
        },
    ]
    columns = lifelines(events)
    # drivers come in the order their first RPC, registration or process event names them
    assert columns == ["scenario", KUBELET, "gpu.example.com", "net.example.com", APISERVER]
    rows = build_rows(events, columns)
    assert [(r.src, r.dst, r.error) for r in rows] == [
        (0, 4, False),
        (3, 4, True),
        (1, 2, True),
        (1, 3, False),
        (3, 3, False),
    ]
    assert rows[2].label == "NodePrepareResources(c0, c1, c2, +2 more) → OK"
    assert rows[4].label == "plugin saw NodeUnprepareResources() → OK"
    assert "No journal events" in render_diagram([])


def test_malicious_content_is_escaped(report: RunReport):
    text = render_html(report)
    assert text.count("<script") == 1  # the filter's own, at the end
    assert text.count("</script>") == 1
    assert text.rstrip().endswith("</script></body></html>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    doc = parse(text)
    labels = [t for cls, t in doc.texts if cls == "label"]
    assert "NodePrepareResources(<script>alert(1)</script>) → OK 1.5ms" in labels
    # attribute injection through a driver name or a scenario status-like value
    evil = ScenarioResult(
        name='x" onmouseover="alert(1)',
        status="passed",
        journal=[
            {
                "seq": 1,
                "t": 0,
                "kind": "rpc",
                "driver": '"><img src=x onerror=alert(1)>',
                "method": "/x/NodePrepareResources",
                "code": "OK",
                "side": "kubelet",
            }
        ],
    )
    evil_text = render_html(RunReport(results=[evil]))
    evil_doc = parse(evil_text)
    assert not any("onmouseover" in attrs or "onerror" in attrs for _, attrs in evil_doc.tags)
    assert "img" not in {t for t, _ in evil_doc.tags}


def test_write_html(report: RunReport, tmp_path):
    target = tmp_path / "report.html"
    write_html(report, target, title="nightly <run>")
    text = target.read_text(encoding="utf-8")
    assert re.search(r"<title>nightly &lt;run&gt;</title>", text)
    assert text == render_html(report, title="nightly <run>")
