"""Scenario files, manifests and checkpoints are checked for kind and size before they are read.

A FIFO would block a reader forever, /dev/zero or a huge (here: sparse) file would be read
whole into memory. Each gets one clear line and exit code 2, at once.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drasim.checkpoint.store import MAX_CHECKPOINT_BYTES
from drasim.cli import main
from drasim.fsutil import UnsuitableFileError, read_regular_file
from drasim.limits import MAX_DECODED_VALUES, MAX_FILE_BYTES

pytestmark = pytest.mark.timeout(20)  # a regression blocks on the FIFO: fail instead of hanging

SCENARIO_HEAD = "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: big}\nspec:\n  steps:\n"


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    with path.open("wb") as out:
        out.write(head)
        out.truncate(size)
    return path


def test_validate_refuses_a_fifo_without_blocking(fifo, capsys):
    assert main(["validate", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert f"{fifo}:1:1: cannot read file: not a regular file: it is a FIFO" in err
    assert "Traceback" not in err


def test_validate_refuses_a_file_above_the_limit_before_reading_it(tmp_path, capsys):
    path = sparse(tmp_path / "huge.yaml", 8 * 1024**3, SCENARIO_HEAD.encode())  # 8 GiB, no blocks used
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"the file is {8 * 1024**3} bytes, more than the limit of {MAX_FILE_BYTES} bytes" in err


def test_validate_stops_counting_at_the_value_limit(tmp_path, capsys, monkeypatch):
    limit = 1000  # the same check as at MAX_DECODED_VALUES, a hundred times faster
    monkeypatch.setattr("drasim.scenario.yamlsrc.MAX_DECODED_VALUES", limit)
    items = "".join(f"  - {i}\n" for i in range(limit + 10))
    path = tmp_path / "many.yaml"
    path.write_text(SCENARIO_HEAD + "    - wait: 1\n" + "  extra:\n" + items)
    assert path.stat().st_size < MAX_FILE_BYTES
    assert main(["validate", str(path)]) == 2
    assert f"more than {limit} values" in capsys.readouterr().err
    assert MAX_DECODED_VALUES == 100_000


def test_a_manifest_file_that_is_a_fifo_is_a_problem_not_a_hang(tmp_path, fifo, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(
        "apiVersion: drasim.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n"
        f"spec:\n  objects:\n  - file: {fifo.name}\n  steps:\n  - wait: 1\n"
    )
    assert main(["validate", str(path)]) == 2
    assert "not a regular file: it is a FIFO" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["show", "verify"])
def test_checkpoint_commands_refuse_a_fifo(fifo, command, capsys):
    assert main(["checkpoint", command, str(fifo)]) == 2
    err = capsys.readouterr().err
    assert "not a regular file: it is a FIFO" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["show", "verify"])
def test_checkpoint_commands_refuse_dev_zero(command, capsys):
    assert main(["checkpoint", command, "/dev/zero"]) == 2
    assert "not a regular file: it is a character device" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["show", "verify"])
def test_checkpoint_commands_refuse_a_huge_file(tmp_path, command, capsys):
    path = sparse(tmp_path / "dra_manager_state", 8 * 1024**3)
    assert main(["checkpoint", command, str(path)]) == 2
    assert f"more than the limit of {MAX_CHECKPOINT_BYTES} bytes" in capsys.readouterr().err


def test_read_regular_file_reads_up_to_the_limit(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_regular_file(path, 10) == b"x" * 10
    with pytest.raises(UnsuitableFileError, match="more than the limit of 9 bytes"):
        read_regular_file(path, 9)
    with pytest.raises(UnsuitableFileError, match="it is a directory"):
        read_regular_file(tmp_path, 10)
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "missing", 10)
