"""drasim.gobuild without building: releases, sources, the cache key, and a missing Go."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from drasim import gobuild


@pytest.mark.parametrize(
    ("text", "version", "tag", "staging"),
    [
        ("1.37", "1.37.2", "drasim_k8s_1_37", "v0.37.2"),
        ("v1.35.4", "1.35.4", "drasim_k8s_1_35", "v0.35.4"),
        ("1.34.0", "1.34.0", "drasim_k8s_1_34", "v0.34.0"),
        (" 1.36 ", "1.36.3", "drasim_k8s_1_36", "v0.36.3"),
    ],
)
def test_parse_release(text: str, version: str, tag: str, staging: str) -> None:
    rel = gobuild.parse_release(text)
    assert (rel.version, rel.tag, rel.staging) == (version, tag, staging)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1.33", "1.34 and newer"),
        ("2.0", "expected a Kubernetes release"),
        ("1.37.2; rm -rf /", "expected a Kubernetes release"),
        ("1.99", "give the full version"),
        ("", "expected a Kubernetes release"),
    ],
)
def test_parse_release_refuses(text: str, words: str) -> None:
    with pytest.raises(gobuild.GoError, match=words):
        gobuild.parse_release(text)


def test_default_release_is_what_go_mod_pins() -> None:
    text = (gobuild.source_dir() / "go.mod").read_text()
    rel = gobuild.default_release()
    assert f"k8s.io/kubernetes v{rel.version}" in text
    # Every staging module is pinned to the matching version.
    pins = [line for line in text.splitlines() if "=> k8s.io/" in line]
    assert pins
    assert all(line.strip().endswith(rel.staging) for line in pins)


def test_source_key_follows_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cmd" / "x").mkdir(parents=True)
    (tmp_path / "go.mod").write_text("module x\n\nrequire k8s.io/kubernetes v1.37.2\n")
    main = tmp_path / "cmd" / "x" / "main.go"
    main.write_text("package main\n\nfunc main() {}\n")
    monkeypatch.setenv(gobuild.SOURCE_ENV, str(tmp_path))
    monkeypatch.setenv(gobuild.CACHE_ENV, str(tmp_path / "cache"))
    first = gobuild.binary_path("x")
    assert first == gobuild.binary_path("x")
    assert first.parent == tmp_path / "cache" / "bin" / "1.37.2"
    main.write_text("package main\n\nfunc main() { println() }\n")
    assert gobuild.binary_path("x") != first
    assert gobuild.binary_path("x", "1.35") != gobuild.binary_path("x")
    assert gobuild.programs() == ["x"]
    assert gobuild.cached("x") is None


def test_build_refuses_unknown_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cmd" / "kubelet").mkdir(parents=True)
    (tmp_path / "go.mod").write_text("module x\n\nrequire k8s.io/kubernetes v1.37.2\n")
    monkeypatch.setenv(gobuild.SOURCE_ENV, str(tmp_path))
    if gobuild.go_problem():
        pytest.skip(gobuild.go_problem() or "")
    with pytest.raises(gobuild.GoError, match=r"no Go program 'nope' .*known: kubelet"):
        gobuild.build("nope")
    with pytest.raises(gobuild.GoError, match="expected a name"):
        gobuild.build("../etc")


def test_cli_without_go_says_what_is_missing(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path), "DRASIM_GO_CACHE": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-m", "drasim", "upstream", "build"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "drasim upstream: error: Go is not installed (no `go` on PATH)" in done.stderr
    assert "Traceback" not in done.stderr
    status = subprocess.run(
        [sys.executable, "-m", "drasim", "upstream", "status"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert status.returncode == 0, status.stderr
    assert "go: Go is not installed" in status.stdout


def test_builds_are_stamped_with_their_release() -> None:
    """A server built from the module reports its release at /version, not v0.0.0-master."""
    flags = gobuild._ldflags(gobuild.parse_release("1.36.3"))
    assert "k8s.io/component-base/version.gitVersion=v1.36.3" in flags
    assert "k8s.io/component-base/version.gitMinor=36" in flags


def test_go_programs_are_gofmt_clean() -> None:
    """`gofmt -l` lists no file of drasim's Go programs (cmd/)."""
    if gobuild.go_problem():
        pytest.skip(gobuild.go_problem() or "")
    done = subprocess.run(
        ["gofmt", "-l", str(gobuild.source_dir() / "cmd")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", f"not gofmt-formatted:\n{done.stdout}"


def test_prune_keeps_other_checkouts_recent_builds(tmp_path: Path) -> None:
    """Another worktree may be running its build of the same release right now: only builds
    older than PRUNE_AFTER go, with their build directories."""
    import os
    import time

    bins = tmp_path / "bin" / "1.34.4"
    bins.mkdir(parents=True)
    keep, recent, old = (bins / f"drasim-kubelet-{c * 16}" for c in "abc")
    for path in (keep, recent, old):
        path.write_text("binary")
    src = tmp_path / "src"
    old_src = src / f"kubelet-1.34.4-{'c' * 16}"
    old_src.mkdir(parents=True)
    (old_src / ".drasim-source").write_text("key")
    day_ago = time.time() - gobuild.PRUNE_AFTER - 60
    os.utime(old, (day_ago, day_ago))
    os.utime(old_src / ".drasim-source", (day_ago, day_ago))
    gobuild._prune(keep)
    assert keep.exists()
    assert recent.exists()
    assert not old.exists()
    assert not old_src.exists()


def test_a_second_overlay_pass_keeps_the_linked_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build directory whose go.mod already points upstream's module at its linked copy (the
    overlay ran there before) is left as it is: no relink under another name, no go.mod edit."""
    import json

    cache = tmp_path / "cache"
    linked = cache / "mods" / "k8s.io_kubernetes@v1.34.4"
    (linked / "pkg" / "kubelet" / "cm" / "dra").mkdir(parents=True)
    program = tmp_path / "cmd" / "kubelet"
    hook = program / "_overlay" / "k8s.io" / "kubernetes" / "pkg" / "kubelet" / "cm" / "dra" / "zz_hooks.go"
    hook.parent.mkdir(parents=True)
    hook.write_text("package dra\n")
    listing = {
        "Path": "k8s.io/kubernetes",
        "Version": "v1.34.4",
        "Replace": {"Path": str(linked), "Dir": str(linked)},
    }
    calls: list[list[str]] = []

    def fake_run(args: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
        calls.append(args)
        return json.dumps(listing) if args[:2] == ["go", "list"] else ""

    monkeypatch.setattr(gobuild, "_run", fake_run)
    path = gobuild._overlay(
        program / "_overlay", tmp_path / "work", cache, "kubelet", gobuild.parse_release("1.34"), env={}
    )
    assert path is not None
    replace = json.loads(path.read_text())["Replace"]
    assert replace == {str(linked / "pkg" / "kubelet" / "cm" / "dra" / "zz_hooks.go"): str(hook)}
    assert [c for c in calls if c[:3] == ["go", "mod", "edit"]] == []
    assert not (cache / "mods" / "k8s.io_kubernetes@local").exists()


def test_a_cache_hit_marks_the_build_used(tmp_path: Path) -> None:
    binary = tmp_path / "drasim-kubelet-0123456789abcdef"
    binary.write_bytes(b"bin")
    os.utime(binary, (0, 0))
    gobuild._touch(binary)
    assert binary.stat().st_mtime > 0
