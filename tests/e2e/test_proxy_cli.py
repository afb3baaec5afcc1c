"""``drasim proxy`` standalone: a driver process behind it, called like any kubelet would."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
import yaml

from drasim._proto.dra.v1 import api_pb2 as dra_v1
from drasim._proto.dra.v1 import api_pb2_grpc as dra_v1_grpc
from drasim._proto.pluginregistration.v1 import api_pb2 as reg_pb
from drasim._proto.pluginregistration.v1 import api_pb2_grpc as reg_grpc
from drasim.cli import main

REPO = Path(__file__).parents[2]
CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "a", "namespace": "default", "uid": "uid-a"},
    "spec": {"devices": {"requests": [{"name": "gpu"}]}},
    "status": {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
                ]
            }
        }
    },
}


def _until(what: str, predicate: Callable[[], bool], timeout: float = 30.0, every: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        tick.wait(every)


@pytest.fixture
def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short directory: pytest's tmp_path under xdist is too long for unix socket paths."""
    root = Path(tempfile.mkdtemp(prefix="drasim-pxc-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_a_driver_behind_drasim_proxy(
    short_dir: Path, env: dict[str, str], processes: list[subprocess.Popen[bytes]]
) -> None:
    tmp_path = short_dir
    registry, driver_registry, journal = (
        tmp_path / "registry",
        tmp_path / "driver-reg",
        tmp_path / "calls.jsonl",
    )
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(CLAIM))
    faults = tmp_path / "faults.yaml"
    faults.write_text("- {rpc: NodePrepareResources, code: UNAVAILABLE, message: not now, times: 1}\n")
    driver = subprocess.Popen(
        [
            sys.executable, "-m", "fake_plugins", "--registry-dir", str(driver_registry),
            "--plugin-dir", str(tmp_path / "plugin"), "--cdi-dir", str(tmp_path / "cdi"),
            "--state-dir", str(tmp_path / "state"), "--claims", str(tmp_path / "claims.yaml"),
        ],
        env=env,
    )  # fmt: skip
    processes.append(driver)
    proxy = subprocess.Popen(
        [
            sys.executable, "-m", "drasim", "proxy", "--registry-dir", str(registry),
            "--driver-registry-dir", str(driver_registry), "--journal", str(journal),
            "--faults", str(faults), "--driver-pid", str(driver.pid),
        ],
        env=env,
    )  # fmt: skip
    processes.append(proxy)
    socket = registry / "gpu.example.com-reg.sock"
    _until("the proxy's registration socket", socket.exists)

    options = [("grpc.use_local_subchannel_pool", 1)]
    with grpc.insecure_channel(f"unix:{socket}", options=options) as channel:
        info = reg_grpc.RegistrationStub(channel).GetInfo(reg_pb.InfoRequest(), timeout=10)
    assert info.name == "gpu.example.com"
    assert not info.endpoint.startswith(str(tmp_path / "plugin"))  # the proxy's own DRA socket
    request = dra_v1.NodePrepareResourcesRequest(
        claims=[dra_v1.Claim(namespace="default", name="a", uid="uid-a")]
    )
    with grpc.insecure_channel(f"unix:{info.endpoint}", options=options) as channel:
        stub = dra_v1_grpc.DRAPluginStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            stub.NodePrepareResources(request, timeout=10)
        assert (err.value.code(), err.value.details()) == (grpc.StatusCode.UNAVAILABLE, "not now")
        reply = stub.NodePrepareResources(request, timeout=10)
    assert reply.claims["uid-a"].devices[0].device_name == "gpu-0"

    proxy.send_signal(signal.SIGTERM)
    assert proxy.wait(timeout=30) == 0
    assert not socket.exists()
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    calls = [(e["method"].rsplit("/", 1)[1], e["code"], e["side"]) for e in events if e["kind"] == "rpc"]
    assert calls == [
        ("GetInfo", "OK", "kubelet"),
        ("NodePrepareResources", "Unavailable", "kubelet"),
        ("NodePrepareResources", "OK", "kubelet"),
    ]
    assert events[-1]["response"]["claims"]["uid-a"]["devices"][0]["device_name"] == "gpu-0"


def test_bad_fault_rules_are_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    faults = tmp_path / "faults.yaml"
    faults.write_text("- {rpc: NodePrepareResources, code: NOPE}\n")
    code = main(
        [
            "proxy", "--registry-dir", str(tmp_path / "r"), "--driver-registry-dir", str(tmp_path / "d"),
            "--faults", str(faults),
        ]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert str(faults) in err
    assert "code" in err
    assert not (tmp_path / "r").exists()  # nothing started


def test_sigterm_while_the_proxy_starts_stops_it_cleanly(
    short_dir: Path, env: dict[str, str], processes: list[subprocess.Popen[bytes]]
) -> None:
    """SIGTERM as soon as the proxy's registration socket appears (the proxy may still be
    starting its grpc servers): it exits 0 and removes its socket, every time. A signal raised
    as KeyboardInterrupt inside that start once left a lock held and the proxy hung."""
    driver_registry = short_dir / "driver-reg"
    driver = subprocess.Popen(
        [
            sys.executable, "-m", "fake_plugins", "--registry-dir", str(driver_registry),
            "--plugin-dir", str(short_dir / "plugin"), "--cdi-dir", str(short_dir / "cdi"),
            "--state-dir", str(short_dir / "state"),
        ],
        env=env,
    )  # fmt: skip
    processes.append(driver)
    _until("the driver's registration socket", (driver_registry / "gpu.example.com-reg.sock").exists)
    for attempt in range(5):
        registry = short_dir / f"registry-{attempt}"
        proxy = subprocess.Popen(
            [
                sys.executable, "-m", "drasim", "proxy", "--registry-dir", str(registry),
                "--driver-registry-dir", str(driver_registry),
                "--socket-dir", str(short_dir / f"px-{attempt}"),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        processes.append(proxy)
        socket = registry / "gpu.example.com-reg.sock"
        _until("the proxy's registration socket", socket.exists, every=0.0005)  # at once
        proxy.send_signal(signal.SIGTERM)
        assert proxy.wait(timeout=30) == 0, f"attempt {attempt}"
        assert not socket.exists(), f"attempt {attempt}"
