"""``drasim control-plane start|stop|status``: a real kube-apiserver and etcd on 127.0.0.1.

Built from published Kubernetes modules by drasim's Go program ``upstream/cmd/control-plane``
(cached like drasim's other Go programs). Its admin kubeconfig is what ``drasim run --backend
kubeconfig --kubeconfig`` takes; its driver kubeconfig holds exactly the RBAC docs/backends.md
lists for a run.
"""

from __future__ import annotations

import argparse
import json
import select
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``control-plane`` subcommand and its actions."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "control-plane",
        help="run a real kube-apiserver with etcd on 127.0.0.1 (needs Go; built once, cached)",
        description=(
            "A real kube-apiserver with an embedded etcd on 127.0.0.1 (free ports), resource.k8s.io "
            "v1 (and v1beta2, v1beta1), Node and RBAC authorization, the namespace and service "
            "account controllers; no scheduler, no kubelet. It writes admin, driver and node "
            "kubeconfigs into its data directory."
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    default_dir = Path(".drasim") / "control-plane"

    start = actions.add_parser(
        "start",
        help="start one in the background (or --foreground) and print its kubeconfigs",
        description="Start a control plane; it runs in the background until `drasim control-plane stop`.",
    )
    _dir_option(start, default_dir)
    start.add_argument(
        "--release", metavar="RELEASE", help="Kubernetes release (default: drasim's Go module's)"
    )
    start.add_argument("--node-name", default="node-1", help="the node of node.kubeconfig (default: node-1)")
    start.add_argument(
        "--foreground",
        action="store_true",
        help="stay attached: stop it (and remove the data directory) on Ctrl-C or SIGTERM",
    )
    start.add_argument("--keep", action="store_true", help="with --foreground: keep the data directory")
    start.add_argument("--json", action="store_true", help="print the control plane's JSON description")
    start.set_defaults(func=_start)

    stop = actions.add_parser(
        "stop", help="stop it and remove its data directory", description="Stop a control plane."
    )
    _dir_option(stop, default_dir)
    stop.add_argument("--keep", action="store_true", help="keep the data directory (etcd data, kubeconfigs)")
    stop.set_defaults(func=_stop)

    status = actions.add_parser(
        "status",
        help="say whether one runs (exit 0) or not (exit 1)",
        description="Say whether a control plane runs with data in --dir.",
    )
    _dir_option(status, default_dir)
    status.add_argument("--json", action="store_true", help="print the control plane's JSON description")
    status.set_defaults(func=_status)


def _dir_option(parser: argparse.ArgumentParser, default: Path) -> None:
    parser.add_argument("--dir", type=Path, default=default, help=f"its data directory (default: {default})")


def _describe(plane: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(_as_dict(plane)), flush=True)
        return
    print(f"control plane {plane.version} serving {plane.server} (pid {plane.pid}, data {plane.dir})")
    for name, path in plane.kubeconfigs.items():
        print(f"  {name:<6} kubeconfig {path}  ({plane.identities.get(name, '')})")
    print(f"  run:  drasim run --backend kubeconfig --kubeconfig {plane.admin_kubeconfig}", flush=True)


def _as_dict(plane: Any) -> dict[str, Any]:
    return {
        "server": plane.server,
        "port": plane.port,
        "etcd": plane.etcd,
        "pid": plane.pid,
        "dir": str(plane.dir),
        "version": plane.version,
        "kubeconfigs": {k: str(v) for k, v in plane.kubeconfigs.items()},
        "identities": plane.identities,
    }


def _start(args: argparse.Namespace) -> int:
    from drasim import controlplane

    plane, process = controlplane.start(
        args.dir,
        release=args.release,
        node_name=args.node_name,
        quiet=False,
        exit_with_caller=args.foreground,
    )
    _describe(plane, args.json)
    if not args.foreground:
        if not args.json:
            print(f"  stop: drasim control-plane stop --dir {plane.dir}")
        return 0
    try:
        # The process's own end (a crash) or Ctrl-C/SIGTERM (KeyboardInterrupt) ends the wait.
        select.select([_pidfd(plane.pid)], [], [])
        code = process.wait()
        log = plane.dir / "control-plane.log"
        print(f"drasim control-plane: the control plane exited ({code}); log {log}", file=sys.stderr)
        controlplane.stop(plane.dir, keep=True)
        return 1
    except KeyboardInterrupt:
        controlplane.stop(plane.dir, keep=args.keep)
        process.wait(10)
        print("drasim control-plane: stopped", file=sys.stderr)
        return 0


def _pidfd(pid: int) -> int:
    import os

    return os.pidfd_open(pid)


def _stop(args: argparse.Namespace) -> int:
    from drasim import controlplane

    was = controlplane.stop(args.dir, keep=args.keep)
    print(f"drasim control-plane: {'stopped' if was else 'none was running'} ({args.dir.resolve()})")
    return 0


def _status(args: argparse.Namespace) -> int:
    from drasim import controlplane, gobuild

    plane = controlplane.find(args.dir.resolve())
    if plane is None:
        print(f"no control plane runs with data in {args.dir.resolve()}")
        problem = gobuild.go_problem()
        if problem:
            print(f"(and none can start here: {problem})")
        return 1
    _describe(plane, args.json)
    return 0
