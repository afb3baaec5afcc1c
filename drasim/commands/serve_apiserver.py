"""``drasim serve-apiserver``: drasim's HTTP API server as its own process, until SIGINT or SIGTERM.

It writes a kubeconfig for the server; anything that takes a kubeconfig can use it, for
example ``drasim run --backend kubeconfig --kubeconfig FILE`` (a stand-in for a real
cluster: no authentication, no controllers) or a driver under development.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from drasim.commands.waiting import stop_signals_held
from drasim.errors import ConfigError


def register(subparsers: Any) -> None:
    """Add the ``serve-apiserver`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve-apiserver",
        help="serve drasim's fake Kubernetes API server over HTTP and write a kubeconfig for it",
        description="Serve drasim's fake Kubernetes API server on loopback until SIGINT or SIGTERM.",
    )
    parser.add_argument(
        "--kubeconfig-out",
        type=Path,
        required=True,
        metavar="FILE",
        help="write a kubeconfig for the server here",
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default: a free one)")
    parser.add_argument(
        "--resource-api-versions",
        default="v1,v1beta2,v1beta1",
        metavar="LIST",
        help="resource.k8s.io versions to serve, comma-separated (default: v1,v1beta2,v1beta1)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; the kubeconfig is written once the port is bound."""
    from drasim.apiserver import ObjectStore
    from drasim.apiserver.http import HttpApiServer

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535, got {args.port}")
    versions = [v.strip() for v in str(args.resource_api_versions).split(",") if v.strip()]
    try:
        store = ObjectStore(served={"resource.k8s.io": versions})
    except ValueError as err:
        raise ConfigError(f"--resource-api-versions: {err}") from None
    # SIGINT and SIGTERM are held (in the server's threads too) and taken only where it waits.
    with stop_signals_held() as wait_for_stop:
        server = HttpApiServer(store, port=args.port)
        try:
            server.start()
        except OSError as err:
            raise ConfigError(f"cannot listen on 127.0.0.1:{args.port}: {err.strerror or err}") from None
        try:
            path = server.write_kubeconfig(args.kubeconfig_out)
            print(f"drasim serve-apiserver: serving {server.url}; kubeconfig {path}", flush=True)
            wait_for_stop()
        except OSError as err:
            raise ConfigError(f"--kubeconfig-out {args.kubeconfig_out}: {err.strerror or err}") from None
        finally:
            server.stop()
    print("drasim serve-apiserver: stopped", file=sys.stderr)
    return 0
