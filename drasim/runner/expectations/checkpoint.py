"""``expectCheckpoint``: the kubelet's ``dra_manager_state`` file as it is on disk.

The file is read and decoded afresh (envelope, CRC-32, kind, apiVersion), never
taken from the kubelet's memory: what a restarted kubelet would find is what
counts. A legacy (1.26-1.30) file decodes but today's kubelet refuses it, so it
counts as not valid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drasim.checkpoint.codec import CheckpointFormat
from drasim.checkpoint.store import FileCheckpointStore
from drasim.errors import CheckpointError
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.expectations.common import claim_key, plural, pod_key
from drasim.runner.expectations.registry import checks
from drasim.scenario.expectations import ClaimCheckpoint, DeviceMatch, DriverCheckpoint, ExpectCheckpoint
from drasim.state import ClaimInfoState, Device, DriverState

if TYPE_CHECKING:
    from drasim.runner.world import World


def read_checkpoint(world: World) -> tuple[list[ClaimInfoState] | None, str]:
    """The file's entries, or ``None`` and why it is not valid."""
    entries, problem, _ = _read(world)
    return entries, problem


def _read(world: World) -> tuple[list[ClaimInfoState] | None, str, bool | None]:
    """Entries, why they are missing, and whether devices carry the ShareID key (None: no devices)."""
    path = world.workspace.checkpoint_path
    try:
        decoded = FileCheckpointStore(path).load()
    except CheckpointError as err:
        return None, str(err), None
    if decoded.format is CheckpointFormat.LEGACY:
        return None, f"{path}: legacy checkpoint format ({decoded.variant}), which the kubelet refuses", None
    return list(decoded.entries), "", decoded.share_id_written


def device_data(device: Device) -> dict[str, Any]:
    """One checkpointed device as plain data (keys as in the scenario)."""
    return {
        "pool": device.pool_name,
        "device": device.device_name,
        "requests": None if device.request_names is None else list(device.request_names),
        "cdiIDs": None if device.cdi_device_ids is None else list(device.cdi_device_ids),
        "shareID": device.share_id,
    }


def entry_data(world: World, entry: ClaimInfoState) -> dict[str, Any]:
    """One checkpoint entry as plain data, pods by name."""
    drivers = entry.driver_state or {}
    return {
        "uid": entry.claim_uid,
        "pods": pod_names(world, entry),
        "drivers": {
            name: {"devices": [device_data(d) for d in state.devices or []]}
            for name, state in sorted(drivers.items())
        },
    }


def pod_names(world: World, entry: ClaimInfoState) -> list[str]:
    """``namespace/name`` of each pod in PodUIDs; a UID the runner never gave is shown as ``uid:<uid>``."""
    by_uid = {record.uid: key for key, record in world.pods.items()}
    return sorted(by_uid.get(uid, f"uid:{uid}") for uid in entry.pod_uids or ())


@checks(ExpectCheckpoint)
def check_checkpoint(world: World, args: ExpectCheckpoint, ctx: StepContext) -> None:  # noqa: C901 - one expectation, one branch per checkpoint field
    """expectCheckpoint: validity, entry count, per-claim contents, absent claims, ShareID key."""
    entries, problem, share_id_key = _read(world)
    path = world.workspace.checkpoint_path
    if not args.valid:
        if entries is not None:
            raise StepFailure(
                f"expected the checkpoint {path} to be missing or not to decode; "
                f"it decodes with {plural(len(entries), 'entry', 'entries')}",
                expected={"valid": False},
                actual={"valid": True, "entries": len(entries)},
            )
        return
    if entries is None:
        raise StepFailure(
            f"expected a valid checkpoint; {problem}",
            expected={"valid": True},
            actual={"valid": False, "error": problem},
        )
    by_key = {entry.key: entry for entry in entries}
    problems: list[str] = []
    expected: dict[str, Any] = {}
    actual: dict[str, Any] = {}
    if args.entries is not None and len(entries) != args.entries:
        problems.append(f"expected {args.entries} checkpoint entries; found {len(entries)} ({_keys(by_key)})")
        expected["entries"], actual["entries"] = args.entries, len(entries)
    for ref, want in args.claims.items():
        key = claim_key(ref, world)
        entry = by_key.get(key)
        if entry is None:
            problems.append(f"expected a checkpoint entry for claim {key}; found none ({_keys(by_key)})")
            expected.setdefault("claims", {})[key] = _want_data(want)
            actual.setdefault("claims", {})[key] = None
            continue
        found = _claim_problems(world, key, want, entry)
        if found:
            problems.extend(found)
            expected.setdefault("claims", {})[key] = _want_data(want)
            actual.setdefault("claims", {})[key] = entry_data(world, entry)
    if args.share_id_key is not None and share_id_key != args.share_id_key:
        shown = "the file has no device" if share_id_key is None else f"ShareID key written: {share_id_key}"
        problems.append(f"expected the ShareID key written: {args.share_id_key}; {shown}")
        expected["shareIDKey"], actual["shareIDKey"] = args.share_id_key, share_id_key
    for ref in args.absent:
        key = claim_key(ref, world)
        if key in by_key:
            problems.append(f"expected no checkpoint entry for claim {key}; found one")
            expected.setdefault("absent", []).append(key)
            actual.setdefault("present", {})[key] = entry_data(world, by_key[key])
    if problems:
        raise StepFailure(
            "; ".join(problems), expected=expected, actual=actual, similar=_recent_writes(world)
        )


def _recent_writes(world: World) -> list[dict[str, Any]]:
    """The last checkpoint writes (their decoded entries show how the file got here)."""
    return world.journal.events("checkpoint")[-3:]


def _keys(by_key: dict[str, ClaimInfoState]) -> str:
    return "claims: " + (", ".join(sorted(by_key)) or "none")


def _want_data(want: ClaimCheckpoint) -> dict[str, Any]:
    """The given fields of a ClaimCheckpoint as plain data."""
    data: dict[str, Any] = {}
    if want.uid is not None:
        data["uid"] = want.uid
    if want.pods is not None:
        data["pods"] = sorted(pod_key(p) for p in want.pods)
    if want.device_count is not None:
        data["deviceCount"] = want.device_count
    if want.drivers is not None:
        data["drivers"] = {name: _driver_want(d) for name, d in sorted(want.drivers.items())}
    return data


def _driver_want(want: DriverCheckpoint) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if want.devices is not None:
        data["devices"] = [_device_want(d) for d in want.devices]
    if want.device_count is not None:
        data["deviceCount"] = want.device_count
    return data


def _device_want(want: DeviceMatch) -> dict[str, Any]:
    data: dict[str, Any] = {"device": want.device}
    if want.pool:
        data["pool"] = want.pool
    if want.requests is not None:
        data["requests"] = list(want.requests)
    if want.cdi_ids is not None:
        data["cdiIDs"] = list(want.cdi_ids)
    if want.share_id is not None:
        data["shareID"] = want.share_id
    return data


def _claim_problems(world: World, key: str, want: ClaimCheckpoint, entry: ClaimInfoState) -> list[str]:
    problems: list[str] = []
    drivers = entry.driver_state or {}
    if want.uid is not None and entry.claim_uid != want.uid:
        problems.append(f"claim {key}: expected ClaimUID {want.uid}; found {entry.claim_uid}")
    if want.pods is not None:
        pods = sorted(pod_key(p, world) for p in want.pods)
        found = pod_names(world, entry)
        if pods != found:
            problems.append(f"claim {key}: expected pods [{', '.join(pods)}]; found [{', '.join(found)}]")
    if want.device_count is not None:
        count = sum(len(state.devices or []) for state in drivers.values())
        if count != want.device_count:
            problems.append(
                f"claim {key}: expected {plural(want.device_count, 'device')} over all drivers; found {count}"
            )
    if want.drivers is not None:
        if sorted(want.drivers) != sorted(drivers):
            problems.append(
                f"claim {key}: expected drivers [{', '.join(sorted(want.drivers))}]; "
                f"found [{', '.join(sorted(drivers))}]"
            )
        for name, driver_want in sorted(want.drivers.items()):
            if name in drivers:
                problems.extend(_driver_problems(f"claim {key} driver {name}", driver_want, drivers[name]))
    return problems


def _driver_problems(where: str, want: DriverCheckpoint, state: DriverState) -> list[str]:
    devices = state.devices or []
    problems: list[str] = []
    if want.device_count is not None and len(devices) != want.device_count:
        problems.append(f"{where}: expected {plural(want.device_count, 'device')}; found {len(devices)}")
    if want.devices is not None:
        if len(devices) != len(want.devices):
            names = ", ".join(d.device_name for d in devices)
            problems.append(f"{where}: expected {plural(len(want.devices), 'device')}; found {len(devices)} "
                            f"[{names}]")  # fmt: skip
        else:
            for index, (match, device) in enumerate(zip(want.devices, devices, strict=True), start=1):
                diff = _device_diff(match, device)
                if diff:
                    problems.append(f"{where} device {index}: {diff}")
    return problems


def _device_diff(want: DeviceMatch, device: Device) -> str:
    """What differs between an expected and a stored device ("" when they agree)."""
    found = device_data(device)
    expected = _device_want(want)
    diffs = [
        f"expected {name} {value!r}; found {found[name]!r}"
        for name, value in expected.items()
        if found[name] != value
    ]
    return ", ".join(diffs)
