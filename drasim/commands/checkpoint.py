"""``drasim checkpoint show|verify FILE``: inspect a kubelet ``dra_manager_state`` file.

``show`` prints the format, the checksum status and a table of the claims (or, with
``--json``, the same as JSON); a damaged checksum is shown, not refused. ``verify``
exits 0 with a one-line summary when a current kubelet would load the file, 1 when
it would not (bad checksum, bad structure, legacy format), and 2 when the file
cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from drasim.errors import CorruptCheckpointError

_EXIT_OK, _EXIT_FAILED = 0, 1


def register(subparsers: Any) -> None:
    """Add ``checkpoint`` with its ``show`` and ``verify`` actions."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "checkpoint",
        help="decode or verify a kubelet dra_manager_state file",
        description="Decode or verify a kubelet DRA checkpoint (dra_manager_state).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print the claims a checkpoint holds")
    show.add_argument("file", metavar="FILE", help="path of a dra_manager_state file")
    show.add_argument("--json", action="store_true", help="print JSON instead of a table")
    show.set_defaults(func=_show)
    verify = actions.add_parser("verify", help="check that a kubelet would accept a checkpoint")
    verify.add_argument("file", metavar="FILE", help="path of a dra_manager_state file")
    verify.add_argument(
        "--legacy-ok",
        action="store_true",
        help="accept a valid 1.26-1.30 (legacy) file instead of failing on it",
    )
    verify.set_defaults(func=_verify)


def _load(path: str, *, verify: bool) -> Any:
    from drasim.checkpoint.store import FileCheckpointStore

    return FileCheckpointStore(path).load(verify=verify)


def _show(args: argparse.Namespace) -> int:
    from drasim.checkpoint import view as checkpoint_view

    decoded = _load(args.file, verify=False)
    if args.json:
        print(json.dumps(checkpoint_view.to_json(args.file, decoded), indent=2, ensure_ascii=False))
    else:
        print(checkpoint_view.render(args.file, decoded))
    return _EXIT_OK


def _verify(args: argparse.Namespace) -> int:
    from drasim.checkpoint.codec import CheckpointFormat

    try:
        decoded = _load(args.file, verify=True)
    except CorruptCheckpointError as err:
        print(f"FAIL: {err}", file=sys.stderr)
        return _EXIT_FAILED
    if decoded.format is CheckpointFormat.LEGACY:
        claims = len(decoded.legacy_entries)
        summary = f"{args.file}: legacy 1.26-1.30 format ({decoded.variant} layout), {claims} claim(s)"
        if args.legacy_ok:
            print(f"OK: {summary}, checksum {decoded.stored_checksum}")
            return _EXIT_OK
        print(
            f"FAIL: {summary}: a kubelet 1.31 or later cannot load it; drain the node and remove the file",
            file=sys.stderr,
        )
        return _EXIT_FAILED
    claims = len(decoded.entries)
    print(
        f"OK: {args.file}: current format ({decoded.variant}), {claims} claim(s), "
        f"checksum {decoded.stored_checksum}"
    )
    return _EXIT_OK
