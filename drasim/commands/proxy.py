"""``drasim proxy``: drasim's recording, fault-injecting proxy in front of one driver, for any kubelet.

Give the driver ``--driver-registry-dir`` as its registration directory; the proxy registers
it in ``--registry-dir`` (the kubelet's ``plugins_registry``), forwards both of its sockets,
appends every call to ``--journal`` as JSON lines (the ``rpc`` events of drasim's journal)
and applies the plugin fault rules of ``--faults`` (a YAML list in the scenario language's
``fault: {plugin: ...}`` form). It runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import threading
from pathlib import Path
from typing import IO, Any

from drasim.errors import ConfigError


def register(subparsers: Any) -> None:
    """Add the ``proxy`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "proxy",
        help="register a driver with any kubelet through drasim's recording, fault-injecting proxy",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument(
        "--registry-dir", type=Path, required=True, metavar="DIR", help="the kubelet's plugins_registry"
    )
    parser.add_argument(
        "--driver-registry-dir",
        type=Path,
        required=True,
        metavar="DIR",
        help="where the driver puts its registration socket (its registrar directory)",
    )
    parser.add_argument(
        "--socket-dir",
        type=Path,
        metavar="DIR",
        help="where the proxy's DRA sockets go (default: drasim-proxy next to --registry-dir)",
    )
    parser.add_argument(
        "--journal", type=Path, metavar="FILE", help="append every call to FILE as a JSON line"
    )
    parser.add_argument(
        "--side",
        choices=("kubelet", "plugin"),
        default="kubelet",
        help="the journaled calls' side: kubelet (the default; the kubelet journals nothing itself) "
        "or plugin (next to drasim's kubelet, which journals its DRA calls)",
    )
    parser.add_argument("--faults", type=Path, metavar="FILE", help="a YAML list of plugin fault rules")
    parser.add_argument(
        "--driver-pid", type=int, metavar="PID", help="the driver's process, SIGKILLed by crash rules"
    )
    parser.add_argument(
        "--advertise",
        nargs="*",
        metavar="SERVICE",
        help="DRA services GetInfo advertises in place of the driver's own",
    )
    parser.add_argument(
        "--no-splice",
        dest="splice",
        action="store_false",
        help="serve DRA sockets through the grpcio path even without fault rules "
        "(by default their bytes are spliced to the driver's: see docs/real-driver.md)",
    )
    parser.set_defaults(func=_run)


def load_faults(path: Path) -> list[Any]:
    """The plugin fault rules of a YAML file: a list of ``fault: {plugin: ...}`` mappings' insides."""
    import yaml

    from drasim.faults import PluginFault, plugin_fault_problem
    from drasim.scenario.decoder import INVALID, Decoder
    from drasim.scenario.yamlsrc import Loc, parse_documents

    try:
        documents, _ = parse_documents(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read fault rules: {err}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not YAML: {err}") from None
    data = [d for d in documents if d.data is not None]
    if len(data) != 1 or not isinstance(data[0].data, list):
        raise ConfigError(f"{path}:1:1: expected one YAML list of plugin fault rules")
    decoder = Decoder(str(path))
    rules: list[PluginFault] = []
    for i, item in enumerate(data[0].data):
        rule = decoder.decode(item, PluginFault, f"faults[{i}]", getattr(item, "loc", Loc(str(path), 1, 1)))
        if rule is INVALID or decoder.problems:
            break
        problem = plugin_fault_problem(rule)
        if problem is not None:
            raise ConfigError(f"{path}: faults[{i}].{problem[0]}: {problem[1]}")
        rules.append(rule)
    if decoder.problems:
        raise ConfigError("; ".join(str(p) for p in decoder.problems))
    return rules


class JsonLinesRecorder:
    """A recorder that appends each event to a file as one JSON object (``seq``, ``t``, ``kind``, fields)."""

    def __init__(self, stream: IO[str]) -> None:
        import time

        self._stream = stream
        self._lock = threading.Lock()
        self._seq = 0
        self._start = time.monotonic()
        self._clock = time.monotonic

    def record(self, kind: str, **fields: Any) -> None:
        """Append one event."""
        with self._lock:
            self._seq += 1
            event = {"seq": self._seq, "t": round(self._clock() - self._start, 6), "kind": kind, **fields}
            self._stream.write(json.dumps(event, sort_keys=True, default=str) + "\n")
            self._stream.flush()


def _run(args: argparse.Namespace) -> int:
    from drasim.commands.waiting import stop_signals_held
    from drasim.proxy.proxy import make_proxy

    faults = load_faults(args.faults) if args.faults else []
    journal = args.journal.open("a", encoding="utf-8") if args.journal else None
    # SIGINT and SIGTERM are held while the proxy runs and taken only where it waits for them:
    # as KeyboardInterrupt (drasim's main turns SIGTERM into one) a signal could land inside the
    # start of a grpc server or channel and leave a lock held, and the stop would hang. Every
    # thread the proxy starts inherits the held signals. Stopped however this ends.
    try:
        with stop_signals_held() as wait_for_stop:
            proxy = make_proxy(
                args.registry_dir,
                args.driver_registry_dir,
                args.socket_dir,
                recorder=JsonLinesRecorder(journal) if journal is not None else None,
                side=args.side,
                faults=faults,
                driver_pid=args.driver_pid,
                advertise=args.advertise,
                splice=args.splice,
            )
            try:
                proxy.start()
                print(
                    f"drasim proxy: {args.driver_registry_dir} -> {args.registry_dir}"
                    f" ({len(faults)} fault rule(s)); SIGTERM stops it",
                    flush=True,
                )
                wait_for_stop()
            finally:
                proxy.stop()
    finally:
        if journal is not None:
            journal.close()
    return 0
