"""``drasim upstream build|check|path|status``: drasim's Go programs, built from published modules."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``upstream`` subcommand and its actions."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "upstream",
        help="build drasim's Go programs (upstream kubelet, control plane, test driver)",
        description=(
            "Build drasim's Go programs from published Kubernetes modules with the go command, into "
            "a cache ($DRASIM_GO_CACHE, default ~/.cache/drasim/go). A binary is rebuilt only when "
            "drasim's Go sources, the release or the Go version change."
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="build programs for one or more releases",
        description="Build programs for releases (default: the release drasim's Go module pins).",
    )
    build.add_argument(
        "releases", nargs="*", metavar="RELEASE", help="e.g. 1.37 (newest known patch) or 1.35.4"
    )
    build.add_argument(
        "--program",
        action="append",
        metavar="NAME",
        help="a program to build (repeatable; default: all of them)",
    )
    build.set_defaults(func=_build)
    check = actions.add_parser(
        "check",
        help="go vet and go test of programs for one or more releases (their build-tagged files)",
        description=(
            "Run go vet and go test of each program with the build tag and overlay of each release "
            "(default: the release drasim's Go module pins), so each release's tagged files are checked."
        ),
    )
    check.add_argument(
        "releases", nargs="*", metavar="RELEASE", help="e.g. 1.34 (newest known patch) or 1.35.4"
    )
    check.add_argument(
        "--program", action="append", metavar="NAME", help="a program to check (repeatable; default: kubelet)"
    )
    check.set_defaults(func=_check)
    path = actions.add_parser("path", help="print a program's binary path, building it if needed")
    path.add_argument("program", metavar="PROGRAM")
    path.add_argument("--release", metavar="RELEASE", help="default: the release drasim's Go module pins")
    path.set_defaults(func=_path)
    status = actions.add_parser("status", help="say whether Go is there and which binaries are cached")
    status.set_defaults(func=_status)


def _build(args: argparse.Namespace) -> int:
    from drasim import gobuild

    problem = gobuild.go_problem()
    if problem:
        raise gobuild.GoError(problem)
    releases = [gobuild.parse_release(r) for r in args.releases] or [gobuild.default_release()]
    names = args.program or gobuild.programs()
    if not names:
        raise gobuild.GoError(f"drasim's Go module at {gobuild.source_dir()} has no programs under cmd/")
    for release in releases:
        for name in names:
            binary = gobuild.build(name, release, quiet=False)
            print(f"{name} {release}: {binary}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from drasim import gobuild

    problem = gobuild.go_problem()
    if problem:
        raise gobuild.GoError(problem)
    releases = [gobuild.parse_release(r) for r in args.releases] or [gobuild.default_release()]
    failed = 0
    for release in releases:
        for name in args.program or ["kubelet"]:
            try:
                output = gobuild.check(name, release)
            except gobuild.GoError as err:
                print(f"FAIL {name} {release}: {err}", file=sys.stderr)
                failed += 1
                continue
            last = (output.strip().splitlines() or ["ok"])[-1]
            print(f"ok   {name} {release}: go vet clean; go test: {last}")
    return 1 if failed else 0


def _path(args: argparse.Namespace) -> int:
    from drasim import gobuild

    print(gobuild.build(args.program, args.release, quiet=False))
    return 0


def _status(_args: argparse.Namespace) -> int:
    from drasim import gobuild

    problem = gobuild.go_problem()
    print(f"go: {problem or 'available'}")
    print(f"source: {gobuild.source_dir()}")
    print(f"cache: {gobuild.cache_dir()}")
    try:
        default = gobuild.default_release()
    except gobuild.GoError as err:
        print(f"drasim upstream status: error: {err}", file=sys.stderr)
        return 2
    print(f"default release: {default}")
    for name in gobuild.programs():
        for minor in sorted(gobuild.NEWEST_PATCH):
            binary = gobuild.cached(name, gobuild.parse_release(minor)) if problem is None else None
            print(f"  {name:<14} {gobuild.NEWEST_PATCH[minor]:<8} {binary or '-'}")
    return 0
