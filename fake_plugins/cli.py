"""Command line of a fake driver process (``python -m fake_plugins`` and ``drasim fake-plugin``).

SIGTERM or SIGINT stop the driver cleanly (sockets removed, exit 0); SIGHUP re-reads
the ``--behaviour`` file; a ``crash`` fault ends the process at once with exit code
:data:`CRASH_EXIT_CODE`, leaving its sockets behind, as SIGKILL does.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from drasim.errors import DrasimError
from drasim.grpc_logging import quiet_grpc_logs
from fake_plugins.behaviour import BUGS, Behaviour
from fake_plugins.config import (
    DEFAULT_CDI_DIR,
    DEFAULT_REGISTRY_DIR,
    DRA_SERVICES,
    HEALTH_V1ALPHA1,
    FakeDriverConfig,
    load_behaviour_file,
    parse_document,
)

CRASH_EXIT_CODE = 86
HANDLED_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


def _devices(text: str) -> int | list[str]:
    """``--devices``: a count, or comma-separated names."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected a count or device names, got {text!r}")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The fake driver's flags (shared by both entry points)."""
    parser.add_argument("--driver-name", default=None, help="DRA driver name (default gpu.example.com)")
    parser.add_argument(
        "--registry-dir", default=None, help=f"registration socket dir (default {DEFAULT_REGISTRY_DIR})"
    )
    parser.add_argument(
        "--plugin-dir", default=None, help="dir of dra.sock (default /var/lib/kubelet/plugins/<driver>)"
    )
    parser.add_argument(
        "--cdi-dir", default=None, help=f"where CDI specs are written (default {DEFAULT_CDI_DIR})"
    )
    parser.add_argument(
        "--state-dir", default=None, help="dir of the driver's prepared-claims/ state (default plugin dir)"
    )
    parser.add_argument("--registration-socket", default=None, help="registration socket file name")
    parser.add_argument("--plugin-socket", default=None, help="DRA socket file name (default dra.sock)")
    parser.add_argument("--node-name", default=None, help="node name = pool name (default node-1)")
    parser.add_argument(
        "--devices",
        type=_devices,
        default=None,
        help="number of devices (default 4), or comma-separated device names (gpu-a,gpu-b)",
    )
    parser.add_argument(
        "--kubeconfig", default=None, help="read claims (and publish slices) through this API server"
    )
    parser.add_argument(
        "--claims", default=None, help="read claims from this manifest file or directory instead"
    )
    parser.add_argument(
        "--behaviour", "--behavior", dest="behaviour", default=None, help="faults/bugs YAML or JSON"
    )
    parser.add_argument(
        "--bug",
        action="append",
        default=[],
        metavar="NAME",
        help=f"switch a bug on (repeatable; added to --behaviour's bugs): {', '.join(BUGS)}",
    )
    parser.add_argument("--journal", default=None, help="append every call as a JSON line to this file")
    parser.add_argument(
        "--services",
        nargs="+",
        default=None,
        help=f"gRPC services to serve and advertise (default {' '.join(DRA_SERVICES)})",
    )
    parser.add_argument(
        "--advertise", nargs="*", default=None, help="override the GetInfo supported_versions list"
    )
    parser.add_argument("--health", action="store_true", help=f"also serve {HEALTH_V1ALPHA1}")
    parser.add_argument(
        "--no-serialize", action="store_true", help="let prepare/unprepare calls run concurrently"
    )
    parser.add_argument(
        "--publish-slices", action="store_true", help="publish a ResourceSlice (needs --kubeconfig)"
    )
    parser.add_argument(
        "--no-fsync",
        action="store_true",
        help="write the state and CDI files atomically but without fsync (faster; not power-loss safe)",
    )
    parser.add_argument("--config", default=None, help="a FakeDriverConfig as YAML/JSON; flags override it")


def config_from_args(args: argparse.Namespace) -> FakeDriverConfig:
    """Build and validate the config: ``--config`` file first, then the flags."""
    data: dict[str, Any] = {}
    if args.config:
        with open(args.config, encoding="utf-8") as handle:
            loaded = parse_document(handle.read(), args.config)
        if not isinstance(loaded, dict):
            raise DrasimError(f"{args.config}: expected a mapping of driver settings")
        data.update(loaded)
    flags = {
        "driverName": args.driver_name,
        "registryDir": args.registry_dir,
        "pluginDir": args.plugin_dir,
        "cdiDir": args.cdi_dir,
        "stateDir": args.state_dir,
        "nodeName": args.node_name,
        "registrationSocket": args.registration_socket,
        "pluginSocket": args.plugin_socket,
        "devices": args.devices,
        "journal": args.journal,
        "services": args.services,
        "advertise": args.advertise,
    }
    data.update({k: v for k, v in flags.items() if v is not None})
    if args.no_serialize:
        data["serialize"] = False
    if args.publish_slices:
        data["publishSlices"] = True
    if args.no_fsync:
        data["fsync"] = False
    config = FakeDriverConfig.from_dict(data, where=args.config or "flags")
    if args.health and HEALTH_V1ALPHA1 not in config.services:
        config.services.append(HEALTH_V1ALPHA1)
    if args.behaviour:
        config.behaviour = load_behaviour_file(args.behaviour)
    config.behaviour = _with_bugs(config.behaviour, args.bug)
    if config.publish_slices and not args.kubeconfig:
        raise DrasimError("--publish-slices needs --kubeconfig")
    return config


def _with_bugs(behaviour: Behaviour, bugs: Sequence[str]) -> Behaviour:
    """``behaviour`` with the ``--bug`` names added, checked."""
    for bug in bugs:
        if bug not in BUGS:
            raise DrasimError(f"--bug: unknown bug {bug!r}; valid bugs: {', '.join(BUGS)}")
        if bug not in behaviour.bugs:
            behaviour.bugs.append(bug)
    return behaviour


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT; returns the exit code."""
    config = config_from_args(args)  # bad input fails before the heavy imports
    # The signals are blocked before any thread exists, so every thread inherits the mask and
    # only the main thread's sigwait() sees them: no Python signal handler has to take a lock.
    signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_SIGNALS)
    try:
        return _serve(args, config)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED_SIGNALS)


#: How often (seconds) a process that publishes slices checks they still exist.
SLICE_CHECK_INTERVAL = 0.5


def _serve(args: argparse.Namespace, config: FakeDriverConfig) -> int:
    from fake_plugins.claims import ClaimSource, FileClaimSource, KubeClaimSource
    from fake_plugins.driver import FakeDriver
    from fake_plugins.slices import KubeSlicePublisher, build_slices, keep_published

    source: ClaimSource | None = None
    if args.claims:
        source = FileClaimSource(args.claims)
    elif args.kubeconfig:
        source = KubeClaimSource(args.kubeconfig)
    publisher = None
    if config.publish_slices:
        publisher = KubeSlicePublisher(args.kubeconfig, driver=config.driver_name, node=config.node_name)

    driver: FakeDriver | None = None

    def crash() -> None:
        if driver is not None:
            driver.journal.close()
        os._exit(CRASH_EXIT_CODE)

    driver = FakeDriver(config, claim_source=source, publisher=publisher, crash_handler=crash)
    driver.start()
    keeper_stop = threading.Event()
    if publisher is not None:
        keep_published(publisher, lambda: build_slices(config), keeper_stop, SLICE_CHECK_INTERVAL)
    print(
        f"fake_plugins: {config.driver_name} serving {config.plugin_path}, "
        f"registration {config.registration_path}",
        file=sys.stderr,
        flush=True,
    )
    while signal.sigwait(HANDLED_SIGNALS) == signal.SIGHUP:
        if args.behaviour:
            try:
                driver.set_behaviour(_with_bugs(load_behaviour_file(args.behaviour), args.bug))
            except DrasimError as err:
                print(f"fake_plugins: behaviour not reloaded: {err}", file=sys.stderr, flush=True)
    keeper_stop.set()
    driver.stop()
    driver.journal.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m fake_plugins``."""
    parser = argparse.ArgumentParser(
        prog="python -m fake_plugins", description="Run a scriptable fake DRA kubelet plugin."
    )
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; a DrasimError is printed as one line and gives exit code 2."""
    quiet_grpc_logs()
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except DrasimError as err:
        print(f"fake_plugins: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"fake_plugins: error: {err}", file=sys.stderr)
        return 2
