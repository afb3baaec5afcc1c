"""The fake driver as its own process: ``python -m fake_plugins`` and ``drasim fake-plugin``."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

import fake_plugins
from fake_plugins import read_journal
from fake_plugins.cli import CRASH_EXIT_CODE

# The package directory's parent, so the child finds fake_plugins however drasim is installed.
REPO = str(Path(fake_plugins.__file__).resolve().parent.parent)


class Process:
    def __init__(self, env, *extra: str, command: tuple[str, ...] = ("-m", "fake_plugins")) -> None:
        self.env = env
        self.journal = env.root / "journal.jsonl"
        (env.root / "claims").mkdir(exist_ok=True)
        args = [
            sys.executable,
            *command,
            "--registry-dir",
            str(env.registry),
            "--plugin-dir",
            str(env.plugin),
            "--cdi-dir",
            str(env.cdi),
            "--claims",
            str(env.root / "claims"),
            "--journal",
            str(self.journal),
            *extra,
        ]
        child_env = {**os.environ, "PYTHONPATH": os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env, text=True
        )

    @property
    def reg_socket(self) -> Path:
        return self.env.registry / "gpu.example.com-reg.sock"

    def wait_listening(self, timeout: float = 20) -> None:
        """Poll the filesystem until the registration socket accepts connections (stale files refuse)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"fake driver exited with {self.proc.returncode}: {self.proc.stderr.read()}")
            if self.reg_socket.is_socket() and _accepts(self.reg_socket):
                return
            time.sleep(0.01)
        pytest.fail(f"registration socket {self.reg_socket} did not appear within {timeout}s")

    def wait(self, timeout: float = 10) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


@pytest.fixture
def processes():
    started: list[Process] = []

    def spawn(env, *extra: str, **kwargs) -> Process:
        process = Process(env, *extra, **kwargs)
        started.append(process)
        return process

    yield spawn
    for process in started:
        process.kill()


@pytest.fixture
def file_claim(env):
    def write(name: str, uid: str, device: str = "gpu-0") -> dict:
        obj = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": uid},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {
                                "request": "gpu",
                                "driver": "gpu.example.com",
                                "pool": "node-1",
                                "device": device,
                            }
                        ]
                    }
                }
            },
        }
        (env.root / "claims").mkdir(exist_ok=True)
        (env.root / "claims" / f"{name}.json").write_text(json.dumps(obj))
        return obj

    return write


class _Handle:
    """What the conftest Wire needs from a driver: its two socket paths."""

    def __init__(self, env) -> None:
        self.registration_socket = str(env.registry / "gpu.example.com-reg.sock")
        self.endpoint = str(env.plugin / "dra.sock")


def test_sigterm_stops_cleanly(processes, env, wire, file_claim):
    process = processes(env)
    process.wait_listening()
    c = file_claim("gpu", "uid-1")
    w = wire(_Handle(env))
    assert w.get_info().endpoint == str(env.plugin / "dra.sock")
    assert w.prepare(c).claims["uid-1"].devices[0].cdi_device_ids == ["gpu.example.com/gpu=gpu-0"]
    process.proc.send_signal(signal.SIGTERM)
    assert process.wait() == 0
    assert not process.reg_socket.exists()
    assert not (env.plugin / "dra.sock").exists()
    assert env.cdi_files() == ["gpu.example.com-claim_uid-1.json"]
    assert [(r["method"].rsplit("/", 1)[1], r["code"]) for r in read_journal(process.journal)] == [
        ("GetInfo", "OK"),
        ("NodePrepareResources", "OK"),
    ]


def test_sigkill_leaves_stale_sockets_and_restart_keeps_devices(processes, env, wire, file_claim):
    c = file_claim("gpu", "uid-1", device="gpu-3")
    first = processes(env)
    first.wait_listening()
    before = wire(_Handle(env)).prepare(c)
    first.proc.send_signal(signal.SIGKILL)
    assert first.wait() == -signal.SIGKILL
    assert process_sockets_are_stale(env)

    second = processes(env)
    second.wait_listening()
    w = wire(_Handle(env))
    assert w.prepare(c) == before
    assert w.unprepare(c).claims["uid-1"].error == ""
    assert env.cdi_files() == []
    second.proc.send_signal(signal.SIGTERM)
    assert second.wait() == 0


def process_sockets_are_stale(env) -> bool:
    paths = [env.registry / "gpu.example.com-reg.sock", env.plugin / "dra.sock"]
    return all(p.is_socket() and not _accepts(p) for p in paths)


def test_crash_fault_ends_the_process(processes, env, wire, file_claim):
    behaviour = env.root / "behaviour.yaml"
    behaviour.write_text("faults:\n  - rpc: NodePrepareResources\n    crash: after\n")
    process = processes(env, "--behaviour", str(behaviour))
    process.wait_listening()
    c = file_claim("gpu", "uid-1")
    with pytest.raises(grpc.RpcError) as err:
        wire(_Handle(env)).prepare(c)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    assert process.wait() == CRASH_EXIT_CODE
    assert process_sockets_are_stale(env)
    assert env.cdi_files() == ["gpu.example.com-claim_uid-1.json"]
    assert read_journal(process.journal)[-1]["code"] == "CRASHED"


def test_drasim_fake_plugin_command(processes, env, wire):
    process = processes(
        env, "--services", "v1beta1.DRAPlugin", "--health", command=("-m", "drasim", "fake-plugin")
    )
    process.wait_listening()
    info = wire(_Handle(env)).get_info()
    assert list(info.supported_versions) == ["v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth"]
    process.proc.send_signal(signal.SIGTERM)
    assert process.wait() == 0


def test_bad_behaviour_file_is_a_clear_error(processes, env):
    behaviour = env.root / "behaviour.yaml"
    behaviour.write_text("bugs: [non-idempotnt]\n")
    process = processes(env, "--behaviour", str(behaviour))
    assert process.proc.wait(20) == 2
    stderr = process.proc.stderr.read()
    assert "bugs[0]: unknown bug 'non-idempotnt'. Did you mean 'non-idempotent'?" in stderr
    assert "Traceback" not in stderr
    process.wait()


def test_sighup_reloads_behaviour_and_health(processes, env, wire):
    from drasim._proto.drahealth.v1alpha1 import api_pb2 as health_pb
    from drasim._proto.drahealth.v1alpha1 import api_pb2_grpc as health_grpc

    behaviour = env.root / "behaviour.yaml"
    behaviour.write_text("health:\n  - {device: gpu-1, health: UNHEALTHY, message: ecc}\n")
    process = processes(env, "--health", "--devices", "2", "--behaviour", str(behaviour))
    process.wait_listening()
    stub = health_grpc.DRAResourceHealthStub(wire(_Handle(env)).dra_channel)
    stream = stub.NodeWatchResources(health_pb.NodeWatchResourcesRequest(), timeout=20)

    def states(message):
        return [(d.device.device_name, health_pb.HealthStatus.Name(d.health)) for d in message.devices]

    assert states(next(stream)) == [("gpu-0", "HEALTHY"), ("gpu-1", "UNHEALTHY")]
    behaviour.write_text("health:\n  - {device: gpu-0, health: UNKNOWN}\n")
    process.proc.send_signal(signal.SIGHUP)
    assert states(next(stream)) == [("gpu-0", "UNKNOWN"), ("gpu-1", "UNHEALTHY")]
    stream.cancel()
    process.proc.send_signal(signal.SIGTERM)
    assert process.wait() == 0
