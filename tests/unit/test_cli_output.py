"""What `drasim` prints besides its own output: no traceback on a closed pipe, no gRPC INFO lines."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


@pytest.mark.parametrize("argv", [["list"], ["run", "-k", "prepare-unprepare-round-trip"]])
def test_reader_closing_the_pipe_ends_drasim_quietly(argv: list[str]) -> None:
    """`drasim list | head`: the reader goes away before drasim writes; no BrokenPipeError traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "drasim", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()  # before the interpreter has even started: every write hits a closed pipe
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert "Traceback" not in err
    assert "BrokenPipe" not in err
    assert err == ""
    assert code == 141  # 128 + SIGPIPE, as `yes | head` gives


def test_reader_leaving_after_the_first_line_stops_the_whole_run() -> None:
    """`drasim run | head -1` on the built-in library: drasim stops after the pipe closes
    instead of running (or hanging in) the remaining scenarios."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "drasim", "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    first = proc.stdout.readline().decode()
    proc.stdout.close()
    try:
        code = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("drasim run kept going after its reader closed the pipe")
    err = proc.stderr.read().decode()
    assert first.startswith(("PASS ", "SKIP ", "FAIL ")), first
    assert "Traceback" not in err
    assert code == 141, err


GOAWAY = textwrap.dedent(
    """\
    import os, sys, tempfile, time
    from concurrent import futures
    {setup}
    import grpc

    print("GRPC_VERBOSITY=" + os.environ.get("GRPC_VERBOSITY", ""), flush=True)

    def stream(request, context):
        yield b"first"
        while context.is_active():
            time.sleep(0.005)

    for _ in range(10):  # a plugin server stopped under an open stream, as killPlugin does
        address = "unix:" + tempfile.mkdtemp() + "/dra.sock"
        server = grpc.server(futures.ThreadPoolExecutor(2))
        handler = grpc.method_handlers_generic_handler(
            "t.T", {{"S": grpc.unary_stream_rpc_method_handler(stream)}}
        )
        server.add_generic_rpc_handlers((handler,))
        server.add_insecure_port(address)
        server.start()
        channel = grpc.insecure_channel(address)
        responses = channel.unary_stream("/t.T/S")(b"x", timeout=10)
        assert next(responses) == b"first"
        server.stop(0).wait()
        try:
            next(responses)
        except grpc.RpcError:
            pass
        time.sleep(0.02)
        channel.close()
    """
)


@pytest.mark.parametrize(
    "setup",
    [
        "import drasim.cli",
        "import drasim.pytest_plugin",
        "from fake_plugins.cli import main; main(['--help'])",
    ],
)
def test_grpc_info_lines_do_not_reach_stderr(setup: str) -> None:
    if "main(" in setup:
        setup = f"try:\n    {setup}\nexcept SystemExit:\n    pass"
    result = subprocess.run(
        [sys.executable, "-c", GOAWAY.format(setup=setup)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
        check=True,
    )
    assert "GRPC_VERBOSITY=ERROR" in result.stdout
    assert "goaway" not in result.stderr.lower()
    assert "chttp2_transport" not in result.stderr


def test_grpc_verbosity_the_user_set_is_kept() -> None:
    code = "import os, drasim.cli; print(os.environ['GRPC_VERBOSITY'])"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(GRPC_VERBOSITY="debug"),
        check=True,
    )
    assert result.stdout.strip() == "debug"
