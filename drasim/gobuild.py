"""Build drasim's Go programs from published modules, on demand, into a cache.

drasim's Go side is one Go module (``upstream/`` in a checkout; ``drasim/_data/upstream``, package
data, when installed from a wheel). Each program is a directory ``cmd/<program>`` in it. The module
pins ``k8s.io/kubernetes`` and its staging modules to one release (the *default release*); a
build for another release copies the module into the cache, re-pins it to that release (the
staging ``replace`` lines are taken from that release's own go.mod) and lets ``go mod tidy``
resolve it through the module proxy. Code that differs between releases is selected with the
build tag ``drasim_k8s_1_<minor>``.

Where upstream has no hook that drasim needs, a program may add a file of its own to an upstream
package at build time: files under ``cmd/<program>/_overlay/<import path>/`` are handed to
``go build -overlay`` as if they were in that package's directory (the leading underscore keeps
``go build ./...`` from compiling them as packages of our own). Upstream files are never copied or
changed.

Binaries land in ``$DRASIM_GO_CACHE`` (default ``~/.cache/drasim/go``), keyed by a hash of the
module's sources, the release and the Go version, so a change to the Go code rebuilds and an
unchanged one is reused. Concurrent builds of one binary (pytest-xdist workers) wait for each
other on a file lock.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from drasim.errors import DrasimError
from drasim.fsutil import exclusive_lock

SOURCE_ENV = "DRASIM_GO_SOURCE"
CACHE_ENV = "DRASIM_GO_CACHE"
KUBERNETES = "k8s.io/kubernetes"

# The newest patch of each minor release that the module proxy served when this table was
# written; `1.35` means `1.35.4`. A full version (`1.35.2`) is used as given.
NEWEST_PATCH: dict[str, str] = {
    "1.34": "1.34.4",
    "1.35": "1.35.4",
    "1.36": "1.36.3",
    "1.37": "1.37.2",
}
OLDEST_MINOR = 34  # the first release drasim's Go programs are written for

_RELEASE = re.compile(r"^v?(1)\.(\d{1,3})(?:\.(\d{1,3}))?$")
_PROGRAM = re.compile(r"^[a-z][a-z0-9-]{0,40}$")


class GoError(DrasimError):
    """Go is missing, or a build failed; the message says what to do."""


@dataclass(frozen=True)
class Release:
    """One Kubernetes release, e.g. ``1.37.2``."""

    minor: int
    patch: int

    @property
    def version(self) -> str:
        return f"1.{self.minor}.{self.patch}"

    @property
    def tag(self) -> str:
        """The Go build tag that selects code written for this minor release."""
        return f"drasim_k8s_1_{self.minor}"

    @property
    def staging(self) -> str:
        """The version of the staging modules (k8s.io/api, ...) published with it."""
        return f"v0.{self.minor}.{self.patch}"

    def __str__(self) -> str:
        return self.version


def parse_release(text: str) -> Release:
    """``1.37``, ``1.37.2`` or ``v1.37.2``; a minor alone means its newest known patch."""
    match = _RELEASE.match(text.strip())
    if not match:
        raise GoError(f"release {text!r}: expected a Kubernetes release such as 1.37 or 1.37.2")
    minor = int(match.group(2))
    if minor < OLDEST_MINOR:
        raise GoError(
            f"release {text!r}: drasim's Go programs are written for 1.{OLDEST_MINOR} and newer "
            f"(known: {', '.join(NEWEST_PATCH.values())})"
        )
    if match.group(3) is not None:
        return Release(minor, int(match.group(3)))
    newest = NEWEST_PATCH.get(f"1.{minor}")
    if newest is None:
        raise GoError(
            f"release {text!r}: no newest patch known for 1.{minor}; give the full version (1.{minor}.N)"
        )
    return Release(minor, int(newest.rsplit(".", 1)[1]))


def go_problem() -> str | None:
    """Why drasim's Go programs cannot be built here, or None when they can."""
    if shutil.which("go") is None:
        return "Go is not installed (no `go` on PATH); drasim's Go programs need Go 1.26 or newer"
    return None


def source_dir() -> Path:
    """The Go module's directory: ``$DRASIM_GO_SOURCE``, a wheel's package data, or the checkout's."""
    override = os.environ.get(SOURCE_ENV)
    if override:
        return Path(override)
    package = Path(__file__).resolve().parent
    packaged = package / "_data" / "upstream"  # a wheel's copy (see setup.py)
    if (packaged / "go.mod").is_file():
        return packaged
    return package.parent / "upstream"


def cache_dir() -> Path:
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "drasim" / "go"


def default_release(source: Path | None = None) -> Release:
    """The release the module's go.mod pins."""
    gomod = (source or source_dir()) / "go.mod"
    try:
        text = gomod.read_text(encoding="utf-8")
    except OSError as err:
        raise GoError(f"{gomod}: cannot read drasim's Go module: {err.strerror}") from None
    match = re.search(r"^\s*(?:require\s+)?k8s\.io/kubernetes\s+(v\S+)", text, re.MULTILINE)
    if not match:
        raise GoError(f"{gomod}: no `require k8s.io/kubernetes vX.Y.Z` line")
    return parse_release(match.group(1))


def programs(source: Path | None = None) -> list[str]:
    """The programs the module has (directories under cmd/)."""
    cmd = (source or source_dir()) / "cmd"
    return sorted(p.name for p in cmd.iterdir() if p.is_dir()) if cmd.is_dir() else []


def binary_path(program: str, release: Release | str | None = None) -> Path:
    """Where the binary for this program, release and source would be (it may not exist yet)."""
    source = source_dir()
    rel = _release(release, source)
    return cache_dir() / "bin" / rel.version / f"drasim-{program}-{_source_key(source, rel)}"


def cached(program: str, release: Release | str | None = None) -> Path | None:
    """The built binary if it is in the cache and current, else None (never builds)."""
    try:
        path = binary_path(program, release)
    except GoError:
        return None
    return path if path.is_file() else None


def build(program: str, release: Release | str | None = None, *, quiet: bool = True) -> Path:
    """Build ``cmd/<program>`` for a release (default: the module's own) and return the binary.

    Reuses a cached binary built from the same sources; raises :class:`GoError` with the
    reason (Go missing, the release not served, a compile error with its last lines).
    """
    if not _PROGRAM.match(program):
        raise GoError(f"program {program!r}: expected a name such as kubelet or control-plane")
    problem = go_problem()
    if problem:
        raise GoError(problem)
    source = source_dir()
    if not (source / "cmd" / program).is_dir():
        known = ", ".join(programs(source)) or "none"
        raise GoError(f"no Go program {program!r} in {source / 'cmd'} (known: {known})")
    rel = _release(release, source)
    target = binary_path(program, rel)
    if target.is_file():
        _touch(target)
        return target
    cache = cache_dir()
    (cache / "locks").mkdir(parents=True, exist_ok=True)
    with exclusive_lock(cache / "locks" / f"{program}-{rel.version}.lock"):
        if target.is_file():  # another process built it while we waited
            _touch(target)
            return target
        program_dir = source / "cmd" / program
        workdir = _module_for(source, rel, cache, program, private=bool(_overlay_files(program_dir)))
        env = _go_env()
        args = ["go", "build", "-tags", rel.tag, "-ldflags", _ldflags(rel), "-o", "", f"./cmd/{program}"]
        overlay = _overlay(program_dir / "_overlay", workdir, cache, program, rel, env=env)
        if overlay is not None:
            args[2:2] = ["-overlay", str(overlay)]
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
            out = Path(tmp) / target.name
            args[args.index("-o") + 1] = str(out)
            if not quiet:
                print(
                    f"drasim: building {program} for Kubernetes {rel} (go build; cached after)",
                    file=sys.stderr,
                )
            _run(args, workdir, env, f"building {program} for Kubernetes {rel}")
            os.replace(out, target)
        _prune(target)
    return target


def check(program: str, release: Release | str | None = None) -> str:
    """``go vet`` and ``go test`` of ``cmd/<program>`` for a release, with its overlay files.

    The program's packages only compile with the overlay (they call our hooks in upstream
    packages), so this runs in the build's module copy, with the program's ``_test.go`` files
    added by the same overlay. Returns go test's output; raises :class:`GoError` on a failure.
    """
    build(program, release)
    source = source_dir()
    rel = _release(release, source)
    cache = cache_dir()
    program_dir = source / "cmd" / program
    workdir = _module_for(source, rel, cache, program, private=bool(_overlay_files(program_dir)))
    env = _go_env()
    # Written afresh: the binary may come from the cache, built in another build directory.
    overlay_path = _overlay(program_dir / "_overlay", workdir, cache, program, rel, env=env)
    replace: dict[str, str] = {}
    if overlay_path is not None:
        replace.update(json.loads(overlay_path.read_text(encoding="utf-8"))["Replace"])
    if workdir != source:
        for test in sorted(program_dir.glob("*_test.go")):
            replace[str(workdir / "cmd" / program / test.name)] = str(test)
    args: list[str] = ["-tags", rel.tag]
    if replace:
        check_overlay = _overlay_path(cache, program, workdir, "-check")
        check_overlay.write_text(json.dumps({"Replace": replace}, indent=1), encoding="utf-8")
        args += ["-overlay", str(check_overlay)]
    _run(["go", "vet", *args, f"./cmd/{program}"], workdir, env, f"go vet of {program} for Kubernetes {rel}")
    return _run(
        ["go", "test", *args, f"./cmd/{program}"], workdir, env, f"go test of {program} for Kubernetes {rel}"
    )


def _release(release: Release | str | None, source: Path) -> Release:
    if release is None:
        return default_release(source)
    if isinstance(release, Release):
        return release
    return parse_release(release)


def _ldflags(rel: Release) -> str:
    """Stamp the release into k8s.io/component-base/version, as Kubernetes' own build does
    (without it a server's /version says v0.0.0-master)."""
    pkg = "k8s.io/component-base/version"
    return f"-X {pkg}.gitVersion=v{rel.version} -X {pkg}.gitMajor=1 -X {pkg}.gitMinor={rel.minor}"


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GOFLAGS", "-buildvcs=false")
    return env


def _go_version() -> str:
    try:
        done = subprocess.run(
            ["go", "env", "GOVERSION"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() or "unknown"


def _source_key(source: Path, rel: Release) -> str:
    digest = hashlib.sha256()
    digest.update(f"{rel.version}\0{_go_version_cached()}\0{_ldflags(rel)}\0".encode())
    for path in sorted(source.rglob("*")):
        if path.is_file() and (path.suffix in {".go", ".json", ".txt"} or path.name in {"go.mod", "go.sum"}):
            digest.update(str(path.relative_to(source)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.cache
def _go_version_cached() -> str:
    """``go version`` once per process (``none`` without Go): part of every build's cache key."""
    return _go_version() if go_problem() is None else "none"


def _module_for(source: Path, rel: Release, cache: Path, program: str, private: bool) -> Path:
    """The module directory to build in.

    The source itself for its own release; otherwise (another release, or a program with an
    overlay, which needs module directories of its own) a copy in the cache, re-pinned to the
    release.
    """
    if rel == default_release(source) and not private:
        return source
    key = _source_key(source, rel)
    # Keyed by the source too: several checkouts (worktrees) may build the same release at once.
    workdir = cache / "src" / (f"{program}-{rel.version}-{key}" if private else f"{rel.version}-{key}")
    stamp = workdir / ".drasim-source"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == key:
        os.utime(stamp)  # in use: not pruned (see _prune)
        return workdir
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.copytree(source, workdir, ignore=shutil.ignore_patterns(".git", "*_test.go", "_overlay"))
    env = _go_env()
    if rel != default_release(source):
        _repin(workdir, rel, env)
    stamp.write_text(key, encoding="utf-8")
    return workdir


def _repin(workdir: Path, rel: Release, env: dict[str, str]) -> None:
    """Point the copied module at another release: its require, and its staging replace lines."""
    what = f"pinning drasim's Go module to Kubernetes {rel}"
    done = _run(["go", "mod", "download", "-json", f"{KUBERNETES}@v{rel.version}"], workdir, env, what)
    info = json.loads(done)
    upstream_mod = Path(info["GoMod"]).read_text(encoding="utf-8")
    staging = sorted(set(re.findall(r"^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/", upstream_mod, re.MULTILINE)))
    gomod = json.loads(_run(["go", "mod", "edit", "-json"], workdir, env, what))
    edits = [f"-require={KUBERNETES}@v{rel.version}"]
    for rep in gomod.get("Replace") or []:
        old = rep["Old"]["Path"]
        if old.startswith("k8s.io/"):
            edits.append(f"-dropreplace={old}")
    edits += [f"-replace={mod}={mod}@{rel.staging}" for mod in staging]
    _run(["go", "mod", "edit", *edits], workdir, env, what)
    _run(["go", "mod", "tidy"], workdir, env, what)


def _overlay_files(program_dir: Path) -> list[Path]:
    root = program_dir / "_overlay"
    return sorted(p for p in root.rglob("*.go") if p.is_file()) if root.is_dir() else []


def _overlay(
    overlay_root: Path, workdir: Path, cache: Path, program: str, rel: Release, *, env: dict[str, str]
) -> Path | None:
    """Write go build's overlay file, adding our files to upstream package directories.

    go build refuses overlay files beneath the module cache, so each module an overlay file
    goes into is first linked, file by file and unchanged, into a directory of the cache and
    the build's copy of our module is pointed at it with a ``replace`` line.
    """
    files = _overlay_files(overlay_root.parent)
    if not files:
        return None
    what = f"building {program} for Kubernetes {rel}"
    modules: dict[str, tuple[str, str]] = {}  # path -> (dir, version)
    for chunk in _json_stream(_run(["go", "list", "-m", "-json", "all"], workdir, env, what)):
        replaced = chunk.get("Replace")
        info = replaced if isinstance(replaced, dict) else chunk
        mod_dir = info.get("Dir")
        # The version the build requires: a module this function already replaced with its
        # linked copy (a second run on the same build directory) keeps that copy's name.
        version = info.get("Version") or chunk.get("Version")
        if isinstance(mod_dir, str):
            modules[str(chunk["Path"])] = (mod_dir, str(version or "local"))
    replace: dict[str, str] = {}
    linked: dict[str, Path] = {}
    for file in files:
        rel_dir = file.parent.relative_to(overlay_root).as_posix()
        module = max(
            (m for m in modules if rel_dir == m or rel_dir.startswith(m + "/")), key=len, default=None
        )
        if module is None:
            raise GoError(f"{file}: no module in the build provides package {rel_dir}")
        if module not in linked:
            mod_dir, version = modules[module]
            local = cache / "mods" / f"{module.replace('/', '_')}@{version}"
            if Path(mod_dir) != local:
                _link_tree(Path(mod_dir), local)
                _run(["go", "mod", "edit", f"-replace={module}={local}"], workdir, env, what)
            linked[module] = local
        pkg_dir = linked[module] / rel_dir[len(module) :].lstrip("/")
        if not pkg_dir.is_dir():
            raise GoError(f"{file}: package {rel_dir} does not exist in Kubernetes {rel}")
        replace[str(pkg_dir / file.name)] = str(file)
    path = _overlay_path(cache, program, workdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"Replace": replace}, indent=1), encoding="utf-8")
    return path


def _overlay_path(cache: Path, program: str, workdir: Path, suffix: str = "") -> Path:
    """The overlay file of one build directory (named after it: one per release and source)."""
    return cache / "overlay" / f"{program}-{workdir.name}{suffix}.json"


def _link_tree(src: Path, dst: Path) -> None:
    """Hard-link (or copy) a module directory unchanged; done once per module version."""
    if (dst / ".drasim-linked").is_file():
        return
    shutil.rmtree(dst, ignore_errors=True)

    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dst, copy_function=link)
    for sub in [dst, *(p for p in dst.rglob("*") if p.is_dir())]:
        sub.chmod(0o755)
    (dst / ".drasim-linked").write_text(str(src), encoding="utf-8")


def _json_stream(text: str) -> Iterator[dict[str, object]]:
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return
        obj, pos = decoder.raw_decode(text, pos)
        yield obj


def _run(args: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    try:
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    except OSError as err:
        raise GoError(f"{what}: cannot run {args[0]}: {err.strerror}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-30:])
        raise GoError(f"{what} failed ({' '.join(args[:3])} exited {done.returncode}):\n{tail}")
    return done.stdout


def _touch(binary: Path) -> None:
    """Mark a cached build as used now: :func:`_prune` removes builds by their mtime."""
    with contextlib.suppress(OSError):
        os.utime(binary)


PRUNE_AFTER = 24 * 3600.0
"""Seconds after which another build of the same program and release is removed when it has not
been used (a cache hit marks it used): not at once, as another checkout of drasim (a worktree)
may be running its own build right now."""


def _prune(keep: Path) -> None:
    """Remove builds of the same program and release (and their build directories) made more
    than :data:`PRUNE_AFTER` ago."""
    prefix = keep.name.rsplit("-", 1)[0] + "-"
    old = time.time() - PRUNE_AFTER
    for other in keep.parent.glob(prefix + "*"):
        if other != keep and other.is_file() and len(other.name) == len(keep.name):
            with contextlib.suppress(OSError):
                if other.stat().st_mtime < old:
                    other.unlink()
    src = keep.parent.parent.parent / "src"
    for other in src.glob("*-" + "?" * 16) if src.is_dir() else ():
        with contextlib.suppress(OSError):
            stamp = other / ".drasim-source"
            if stamp.stat().st_mtime < old:
                shutil.rmtree(other, ignore_errors=True)
