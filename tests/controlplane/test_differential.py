"""drasim's HTTP API server held against a real kube-apiserver: the same requests to both.

Each case sends the requests a caller of drasim's server sends (the kubernetes Python client,
client-go drivers with protobuf bodies and watch-lists, the emulated kubelet) to drasim's
server and to the real one (``drasim_control_plane``), reduces each answer to what callers
read (status code, the Status body, object fields, resourceVersion behaviour, watch event
sequences), with names, uids, timestamps and resourceVersion values normalized, and compares.

Differences that do not matter to a driver are listed in KNOWN (and in docs/apiserver.md,
"Held against a real kube-apiserver"); any other difference fails the test.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import secrets
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from drasim.allocator import allocate
from drasim.apiserver import ObjectStore
from drasim.apiserver.http import HttpApiServer
from drasim.apiserver.k8spb.codec import decode_request_body, encode_object
from drasim.controlplane import ControlPlane

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
DRIVER = "gpu.example.com"
V1 = "/apis/resource.k8s.io/v1"

#: case -> why the difference does not matter to a driver (docs/apiserver.md says the same).
_JSON_ONLY = "drasim's server always answers JSON; client-go asks for protobuf or JSON and reads either"
_GENERATION = (
    "drasim's server sets metadata.generation on every kind; kube-apiserver only on those whose "
    "strategy does (Pod, ResourceSlice, DeviceClass), not on ResourceClaims. Drivers do not read a "
    "claim's generation"
)
KNOWN: dict[str, str] = {
    "create claim: generation": _GENERATION,
    "get claim: generation": _GENERATION,
    "update labels: generation": _GENERATION,
    "get claim through v1beta1: generation": _GENERATION,
    "create claim: status": (
        "a new claim has `status: {}` from kube-apiserver (Go's encoder keeps an empty struct) and no "
        "status from drasim's server; both decode to an empty status in client-go and the Python client"
    ),
    "list claims: item kinds": (
        "list items carry kind/apiVersion in drasim's server, none in kube-apiserver's; clients take "
        "the kind from the list"
    ),
    "list with an unsupported field selector: message": (
        "kube-apiserver's words for an unknown field label differ per kind (here the generic "
        '"is not a known field selector"); drasim uses the core group\'s "field label not supported". '
        "Same 400 BadRequest; drivers only send supported selectors"
    ),
    "get claim through an unserved version: status": (
        "the 404 for a version that is not served has `details: {}` from kube-apiserver and none from "
        "drasim's server; client-go's version fallback looks only at the 404"
    ),
    "publish a slice with a protobuf body: response type": _JSON_ONLY,
    "publish the slice again: response type": _JSON_ONLY,
    "create claim: spec": (
        "the real server defaults requests (exactly.allocationMode: ExactCount, count: 1); drasim "
        "stores the spec as sent. Drivers read status.allocation, not the defaulted request fields"
    ),
    "update claim spec: code": (
        "a ResourceClaim's spec is immutable on a real server (422); drasim's server does not validate "
        "this. Drivers never write claim specs"
    ),
    "get claim through v1beta1: spec": (
        "no schema conversion in drasim's server: a v1 object keeps its v1 shape under v1beta1 "
        "(docs/apiserver.md, 'No schema conversion'); drivers read claims through v1"
    ),
}


class Raw:
    """Plain HTTP(S) requests with a kubeconfig's server, CA and token (if any)."""

    def __init__(self, kubeconfig: Path) -> None:
        cfg = yaml.safe_load(kubeconfig.read_text())
        cluster = cfg["clusters"][0]["cluster"]
        user = cfg["users"][0].get("user") or {}
        self.url = urlsplit(cluster["server"])
        self.token = user.get("token")
        self.content_type = ""
        self.context: ssl.SSLContext | None = None
        if self.url.scheme == "https":
            ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
            self.context = ssl.create_default_context(cadata=ca)

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        host, port = self.url.hostname or "127.0.0.1", self.url.port
        if self.context is not None:
            return http.client.HTTPSConnection(host, port, context=self.context, timeout=timeout)
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def _headers(self, content_type: str, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, "Content-Type": content_type, "User-Agent": "drasim-differential"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def send(
        self, method: str, path: str, body: Any = None, *, content_type: str = JSON, accept: str = JSON
    ) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
        conn = self._connection(30)
        try:
            conn.request(method, path, body=data, headers=self._headers(content_type, accept))
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        self.content_type = response.getheader("Content-Type", "")
        if self.content_type.startswith(PROTOBUF) and raw.startswith(b"k8s\0"):
            # Only the slice case asks for protobuf; decode the answer with drasim's codec.
            return response.status, decode_request_body(
                raw, group="resource.k8s.io", version="v1", kind="ResourceSlice"
            )
        try:
            return response.status, json.loads(raw) if raw else None
        except ValueError:
            return response.status, raw.decode(errors="replace")

    @dataclass
    class Stream:
        status: int
        lines: Iterator[bytes]
        close: Callable[[], None]

    def watch(self, path: str) -> Raw.Stream:
        conn = self._connection(30)
        conn.request("GET", path, headers=self._headers(JSON, JSON))
        response = conn.getresponse()

        def lines() -> Iterator[bytes]:
            while True:
                line = response.readline()
                if not line:
                    return
                if line.strip():
                    yield line

        return Raw.Stream(response.status, lines(), conn.close)


@dataclass
class Side:
    """One server under test: its client and the names it sees."""

    name: str
    raw: Raw
    namespace: str
    seen: dict[str, str] = field(default_factory=dict)

    def norm(self, value: Any) -> Any:
        """Names, uids, timestamps and resourceVersions replaced by placeholders."""
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if key in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"):
                    out[key] = f"<{key}>" if item else item
                elif key in ("managedFields", "selfLink"):
                    continue
                else:
                    out[key] = self.norm(item)
            return out
        if isinstance(value, list | tuple):
            return [self.norm(v) for v in value]
        if isinstance(value, str):
            return _UUID.sub("<uid>", value.replace(self.namespace, "<ns>"))
        return value


def _status(body: Any) -> Any:
    """What callers read of a Status (client-go's errors, the Python client's ApiException)."""
    if not isinstance(body, dict) or body.get("kind") != "Status":
        return {"not a Status": type(body).__name__}
    return {k: body.get(k) for k in ("kind", "apiVersion", "status", "reason", "code", "message", "details")}


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    md = obj.get("metadata") or {}
    return {
        "kind": obj.get("kind"),
        "apiVersion": obj.get("apiVersion"),
        "name": md.get("name"),
        "namespace": md.get("namespace"),
        "has uid": bool(md.get("uid")),
        "has resourceVersion": bool(md.get("resourceVersion")),
        "generation": md.get("generation"),
    }


# ------------------------------------------------------------------------------- the servers
@pytest.fixture(scope="module")
def drasim_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    store = ObjectStore(served={"resource.k8s.io": ["v1", "v1beta2", "v1beta1"]})
    with HttpApiServer(store) as server:
        yield server.write_kubeconfig(tmp_path_factory.mktemp("drasim-server") / "kubeconfig")


@pytest.fixture(scope="module")
def sides(drasim_server: Path, drasim_control_plane: ControlPlane) -> Iterator[list[Side]]:
    namespace = f"drasim-diff-{secrets.token_hex(3)}"
    pair = [
        Side("drasim", Raw(drasim_server), namespace),
        Side("real", Raw(drasim_control_plane.admin_kubeconfig), namespace),
    ]
    for side in pair:
        code, body = side.raw.send("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
        assert code == 201, (side.name, body)
    yield pair
    for side in pair:
        side.raw.send("DELETE", f"/api/v1/namespaces/{namespace}")
        side.raw.send("DELETE", f"/api/v1/nodes/{namespace}-node")
        side.raw.send("DELETE", f"{V1}/deviceclasses/{namespace}-class")
        side.raw.send("DELETE", f"{V1}/resourceslices?fieldSelector=spec.nodeName%3D{namespace}-node")


class Differences:
    """Observations per case and side; the differences among them."""

    def __init__(self) -> None:
        self.found: dict[str, tuple[Any, Any]] = {}

    def compare(self, case: str, drasim: Any, real: Any) -> None:
        if isinstance(drasim, dict) and isinstance(real, dict):
            for key in sorted(set(drasim) | set(real)):
                if drasim.get(key) != real.get(key):
                    self.found[f"{case}: {key}"] = (drasim.get(key), real.get(key))
        elif drasim != real:
            self.found[case] = (drasim, real)


@pytest.fixture(scope="module")
def differences() -> Differences:
    return Differences()


def _both(
    sides: list[Side], differences: Differences, case: str, observe: Callable[[Side], Any]
) -> list[Any]:
    seen = [observe(side) for side in sides]
    if os.environ.get("DRASIM_DIFF_SHOW"):  # every observation, for a look with -s
        print(f"{case}: {sides[1].norm(seen[1])!r}")
    differences.compare(case, *(side.norm(s) for side, s in zip(sides, seen, strict=True)))
    return seen


def _claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
    }


def _claims(side: Side, name: str = "") -> str:
    return f"{V1}/namespaces/{side.namespace}/resourceclaims" + (f"/{name}" if name else "")


# ------------------------------------------------------------------------------- the cases
def test_claim_crud_answers_alike(sides: list[Side], differences: Differences) -> None:  # noqa: C901 - one request sequence, compared step by step
    def create(side: Side) -> Any:
        code, body = side.raw.send("POST", _claims(side), _claim("c1"))
        return {"code": code, **_meta(body), "spec": body.get("spec"), "status": body.get("status")}

    _both(sides, differences, "create claim", create)

    def get(side: Side) -> Any:
        code, body = side.raw.send("GET", _claims(side, "c1"))
        side.seen["c1"] = body["metadata"]["resourceVersion"]
        return {"code": code, **_meta(body)}

    _both(sides, differences, "get claim", get)
    _both(
        sides, differences, "get missing claim", lambda s: _status(s.raw.send("GET", _claims(s, "nope"))[1])
    )
    _both(
        sides,
        differences,
        "create existing claim",
        lambda s: _status(s.raw.send("POST", _claims(s), _claim("c1"))[1]),
    )

    def stale(side: Side) -> Any:
        obj = side.raw.send("GET", _claims(side, "c1"))[1]
        obj["metadata"]["resourceVersion"] = "1"
        obj["metadata"]["labels"] = {"x": "y"}
        return _status(side.raw.send("PUT", _claims(side, "c1"), obj)[1])

    _both(sides, differences, "update with a stale resourceVersion", stale)

    def noop(side: Side) -> Any:
        obj = side.raw.send("GET", _claims(side, "c1"))[1]
        code, body = side.raw.send("PUT", _claims(side, "c1"), obj)
        return {
            "code": code,
            "same resourceVersion": body["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"],
        }

    _both(sides, differences, "update that changes nothing", noop)

    def label(side: Side) -> Any:
        obj = side.raw.send("GET", _claims(side, "c1"))[1]
        obj["metadata"]["labels"] = {"x": "y"}
        code, body = side.raw.send("PUT", _claims(side, "c1"), obj)
        newer = int(body["metadata"]["resourceVersion"]) > int(obj["metadata"]["resourceVersion"])
        return {
            "code": code,
            "newer resourceVersion": newer,
            "generation": body["metadata"].get("generation"),
        }

    _both(sides, differences, "update labels", label)

    def spec(side: Side) -> Any:
        obj = side.raw.send("GET", _claims(side, "c1"))[1]
        obj["spec"]["devices"]["requests"][0]["name"] = "other"
        code, _body = side.raw.send("PUT", _claims(side, "c1"), obj)
        return {"code": code}

    _both(sides, differences, "update claim spec", spec)

    def main_ignores_status(side: Side) -> Any:
        """A PUT on the main resource does not change .status (it has a status subresource)."""
        obj = side.raw.send("GET", _claims(side, "c1"))[1]
        obj["status"] = {"reservedFor": [{"resource": "pods", "name": "x", "uid": "1234"}]}
        code, body = side.raw.send("PUT", _claims(side, "c1"), obj)
        return {"code": code, "status": body.get("status") or {}}

    _both(sides, differences, "update that carries a status", main_ignores_status)

    def precondition(side: Side) -> Any:
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "not-the-uid"}}
        return _status(side.raw.send("DELETE", _claims(side, "c1"), body)[1])

    _both(sides, differences, "delete with a uid precondition that fails", precondition)

    def listing(side: Side) -> Any:
        code, body = side.raw.send("GET", _claims(side))
        return {
            "code": code,
            "kind": body.get("kind"),
            "apiVersion": body.get("apiVersion"),
            "names": [i["metadata"]["name"] for i in body.get("items", [])],
            "item kinds": sorted({str(i.get("kind")) for i in body.get("items", [])}),
            "has resourceVersion": bool(body.get("metadata", {}).get("resourceVersion")),
        }

    _both(sides, differences, "list claims", listing)
    _both(
        sides,
        differences,
        "list with an unsupported field selector",
        lambda s: _status(s.raw.send("GET", _claims(s) + "?fieldSelector=spec.foo%3Dbar")[1]),
    )

    def beta(side: Side) -> Any:
        code, body = side.raw.send("GET", _claims(side, "c1").replace("/v1/", "/v1beta1/"))
        return {"code": code, **_meta(body), "spec": body.get("spec")}

    _both(sides, differences, "get claim through v1beta1", beta)

    def alpha(side: Side) -> Any:
        code, body = side.raw.send("GET", _claims(side, "c1").replace("/v1/", "/v1alpha3/"))
        return {"code": code, "status": _status(body) if isinstance(body, dict) else body}

    _both(sides, differences, "get claim through an unserved version", alpha)


def test_paging_and_selectors_alike(sides: list[Side], differences: Differences) -> None:
    """List pages (limit/continue, as client-go's pager and the Python client page) and selectors."""

    def pages(side: Side) -> Any:
        for name in ("p1", "p2", "p3"):
            claim = _claim(name)
            claim["metadata"]["labels"] = {"page": "yes", "n": name}
            side.raw.send("POST", _claims(side), claim)
        code, first = side.raw.send("GET", _claims(side) + "?labelSelector=page%3Dyes&limit=2")
        token = first["metadata"].get("continue", "")
        _, second = side.raw.send(
            "GET", _claims(side) + f"?labelSelector=page%3Dyes&limit=2&continue={token}"
        )
        _, chosen = side.raw.send("GET", _claims(side) + "?labelSelector=n+in+(p1,p3),page!%3Dno")
        return {
            "code": code,
            "first page": [i["metadata"]["name"] for i in first["items"]],
            "has continue": bool(token),
            "remainingItemCount": first["metadata"].get("remainingItemCount"),
            "second page": [i["metadata"]["name"] for i in second["items"]],
            "last page continue": second["metadata"].get("continue", ""),
            "set-based selector": [i["metadata"]["name"] for i in chosen["items"]],
        }

    _both(sides, differences, "list in pages with a label selector", pages)


def test_watch_sequences_alike(sides: list[Side], differences: Differences) -> None:  # noqa: C901 - one watch sequence, compared event by event
    def sequence(side: Side) -> Any:
        rv = side.raw.send("GET", _claims(side))[1]["metadata"]["resourceVersion"]
        stream = side.raw.watch(_claims(side) + f"?watch=true&resourceVersion={rv}&timeoutSeconds=20")
        try:
            side.raw.send("POST", _claims(side), _claim("w1"))
            obj = side.raw.send("GET", _claims(side, "w1"))[1]
            obj["metadata"]["labels"] = {"step": "2"}
            side.raw.send("PUT", _claims(side, "w1"), obj)
            side.raw.send("DELETE", _claims(side, "w1"))
            events = []
            versions = []
            for line in stream.lines:
                event = json.loads(line)
                events.append(
                    (event["type"], event["object"]["metadata"]["name"], event["object"].get("kind"))
                )
                versions.append(int(event["object"]["metadata"]["resourceVersion"]))
                if event["type"] == "DELETED":
                    break
        finally:
            stream.close()
        return {"status": stream.status, "events": events, "increasing": versions == sorted(versions)}

    _both(sides, differences, "watch from a resourceVersion", sequence)

    def selector(side: Side) -> Any:
        """Objects that start or stop matching a watch's label selector."""
        rv = side.raw.send("GET", _claims(side))[1]["metadata"]["resourceVersion"]
        query = f"?watch=true&resourceVersion={rv}&labelSelector=sel%3Dyes&timeoutSeconds=20"
        stream = side.raw.watch(_claims(side) + query)
        try:
            claim = _claim("s1")
            claim["metadata"]["labels"] = {"sel": "yes"}
            side.raw.send("POST", _claims(side), claim)
            for value in ("no", "yes"):
                obj = side.raw.send("GET", _claims(side, "s1"))[1]
                obj["metadata"]["labels"] = {"sel": value}
                side.raw.send("PUT", _claims(side, "s1"), obj)
            side.raw.send("DELETE", _claims(side, "s1"))
            events = []
            for line in stream.lines:
                event = json.loads(line)
                labels = event["object"]["metadata"].get("labels") or {}
                events.append((event["type"], labels.get("sel")))
                if len(events) == 4:
                    break
        finally:
            stream.close()
        return {"status": stream.status, "events": events}

    _both(sides, differences, "watch with a label selector", selector)

    def watch_list(side: Side) -> Any:
        query = (
            "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        )
        stream = side.raw.watch(_claims(side) + query + "&timeoutSeconds=20")
        events = []
        try:
            for line in stream.lines:
                event = json.loads(line)
                md = event["object"].get("metadata", {})
                annotations = md.get("annotations") or {}
                events.append(
                    (event["type"], md.get("name") or "", annotations.get("k8s.io/initial-events-end", ""))
                )
                if event["type"] == "BOOKMARK" and annotations.get("k8s.io/initial-events-end") == "true":
                    break
        finally:
            stream.close()
        return {"status": stream.status, "events": events}

    _both(sides, differences, "watch-list with sendInitialEvents", watch_list)

    def no_match(side: Side) -> Any:
        code, body = side.raw.send(
            "GET", _claims(side) + "?watch=true&sendInitialEvents=true&timeoutSeconds=1"
        )
        return {"code": code, "reason": body.get("reason") if isinstance(body, dict) else body}

    _both(sides, differences, "sendInitialEvents without resourceVersionMatch", no_match)


def test_a_driver_and_the_kubelet_are_answered_alike(sides: list[Side], differences: Differences) -> None:
    """The driver's slice publishing (protobuf), the kubelet's slice wipe, the allocator's write."""
    ns = sides[0].namespace
    node, klass = f"{ns}-node", f"{ns}-class"

    def setup(side: Side) -> Any:
        codes = [
            side.raw.send(
                "POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}
            )[0],
            side.raw.send(
                "POST",
                f"{V1}/deviceclasses",
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "DeviceClass",
                    "metadata": {"name": klass},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
                },
            )[0],
        ]
        return {"codes": codes}

    _both(sides, differences, "create node and device class", setup)

    def publish(side: Side) -> Any:
        node_uid = side.raw.send("GET", f"/api/v1/nodes/{node}")[1]["metadata"]["uid"]
        slice_ = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {
                "generateName": f"{node}-{DRIVER}-",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid, "controller": True}
                ],
            },
            "spec": {
                "driver": DRIVER,
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {"name": f"gpu-{i}", "attributes": {"index": {"int": i}, "model": {"string": "A"}}}
                    for i in range(4)
                ],
            },
        }
        code, body = side.raw.send(
            "POST",
            f"{V1}/resourceslices",
            encode_object(slice_, go_zero_fields=True),
            content_type=PROTOBUF,
            accept=f"{PROTOBUF},{JSON}",
        )
        side.seen["slice"] = body["metadata"]["name"]
        return {
            "code": code,
            "response type": side.raw.content_type.split(";")[0],
            **{k: v for k, v in _meta(body).items() if k != "name"},  # generated: differs
            "generated name": body["metadata"]["name"].startswith(f"{node}-{DRIVER}-"),
            "spec": body.get("spec"),
            "ownerReferences": body["metadata"].get("ownerReferences"),
        }

    _both(sides, differences, "publish a slice with a protobuf body", publish)

    def allocate_and_reserve(side: Side) -> Any:
        claim = _claim("alloc")
        claim["spec"]["devices"]["requests"] = [
            {
                "name": "two",
                "exactly": {"deviceClassName": klass, "allocationMode": "ExactCount", "count": 2},
            },
            {
                "name": "third",
                "exactly": {
                    "deviceClassName": klass,
                    "selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].index == 3"}}],
                },
            },
        ]
        created = side.raw.send("POST", _claims(side), claim)[1]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": ns},
            "spec": {
                "nodeName": node,
                "containers": [{"name": "ctr", "image": "registry.k8s.io/pause:3.10"}],
                "resourceClaims": [{"name": "alloc", "resourceClaimName": "alloc"}],
            },
        }
        pod = side.raw.send("POST", f"/api/v1/namespaces/{ns}/pods", pod)[1]
        slices = side.raw.send("GET", f"{V1}/resourceslices?fieldSelector=spec.nodeName%3D{node}")[1]["items"]
        classes = [side.raw.send("GET", f"{V1}/deviceclasses/{klass}")[1]]
        done = allocate(
            created, slices=slices, classes=classes, allocated_claims=[], node_name=node, pods=[pod]
        )
        code, body = side.raw.send("PUT", _claims(side, "alloc") + "/status", done)
        status = body.get("status") if code == 200 else _status(body)
        return {"code": code, "status": status}

    _both(sides, differences, "the allocator's claim status", allocate_and_reserve)

    def delete_slice(side: Side) -> Any:
        """client-go's delete: protobuf DeleteOptions with a UID precondition."""
        path = f"{V1}/resourceslices/{side.seen['slice']}"

        def options(uid: str) -> bytes:
            body = {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}}
            return encode_object(body)

        stale = side.raw.send("DELETE", path, options("0000"), content_type=PROTOBUF)
        uid = side.raw.send("GET", path)[1]["metadata"]["uid"]
        code, body = side.raw.send("DELETE", path, options(uid), content_type=PROTOBUF)
        refused = json.loads(json.dumps(_status(stale[1])).replace(side.seen["slice"], "<slice>"))
        return {"stale uid": (stale[0], refused), "right uid": (code, body.get("kind"))}

    _both(sides, differences, "delete a slice with a protobuf uid precondition", delete_slice)
    _both(sides, differences, "publish the slice again", publish)

    def wipe(side: Side) -> Any:
        code, body = side.raw.send("DELETE", f"{V1}/resourceslices?fieldSelector=spec.nodeName%3D{node}")
        after = side.raw.send("GET", f"{V1}/resourceslices?fieldSelector=spec.nodeName%3D{node}")[1]
        return {"code": code, "kind": body.get("kind"), "left": len(after["items"])}

    _both(sides, differences, "delete the node's slices by collection", wipe)


def test_every_difference_is_known(sides: list[Side], differences: Differences) -> None:
    """Runs last in this module: what differed, against the documented list."""
    for case, (drasim, real) in differences.found.items():
        print(f"{case}\n  drasim: {drasim!r}\n  real:   {real!r}")  # shown with -s
    unknown = {case: pair for case, pair in differences.found.items() if case not in KNOWN}
    report = "\n".join(f"- {case}:\n    drasim: {d!r}\n    real:   {r!r}" for case, (d, r) in unknown.items())
    assert not unknown, f"drasim's server answers differently from kube-apiserver:\n{report}"
