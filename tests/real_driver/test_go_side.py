"""``go vet`` and ``go test`` of upstream/cmd/test-driver (the wrapper around upstream's command)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from drasim import gobuild

UPSTREAM = Path(__file__).parents[2] / "upstream"


@pytest.mark.skipif(gobuild.go_problem() is not None, reason=str(gobuild.go_problem()))
def test_go_vet_and_go_test_of_the_test_driver_command() -> None:
    env = gobuild._go_env()
    for args in (["go", "vet", "./cmd/test-driver"], ["go", "test", "./cmd/test-driver"]):
        done = subprocess.run(
            args, cwd=UPSTREAM, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    gofmt = shutil.which("gofmt")
    if gofmt:
        done = subprocess.run([gofmt, "-l", "cmd"], cwd=UPSTREAM, capture_output=True, text=True, check=False)
        assert done.stdout == "", f"not gofmt-clean: {done.stdout}"
