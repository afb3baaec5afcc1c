"""Invariants checked while an exploration runs: after every step, and once at the end.

:class:`Oracle` reads only what a scenario can observe: the journal's kubelet-side
RPC events, the runner's pod records, the manager's cache and the checkpoint file.
Each check returns :class:`~drasim.explore.violations.Violation` values that name
the invariant and carry the data that shows it broken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from drasim.checkpoint.store import FileCheckpointStore
from drasim.errors import CheckpointError
from drasim.explore.outcomes import OutcomeChecks
from drasim.explore.violations import Violation
from drasim.journal import RpcCall
from drasim.runner.expectations.cdi import duplicate_problems
from drasim.runner.world import World
from drasim.state import ClaimInfoState

PREPARE = "NodePrepareResources"
UNPREPARE = "NodeUnprepareResources"
UNPREPARE_CRASH = "unprepare:after-rpc"

DeviceKey = tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], str], ...]


def running_claims(world: World) -> dict[str, set[str]]:
    """claim ``namespace/name`` -> keys of the Running pods that use it."""
    users: dict[str, set[str]] = {}
    for rec in world.pods.values():
        if rec.phase != "Running":
            continue
        for pc in rec.claims:
            name = rec.claim_name(pc)
            if name:
                users.setdefault(f"{rec.namespace}/{name}", set()).add(rec.key)
    return users


def reply_devices(call: RpcCall, uid: str) -> DeviceKey | None:
    """The devices of a successful reply entry for ``uid``, normalised; ``None`` if it is not a success."""
    if not call.ok:
        return None
    entry = call.claim_results.get(uid)
    if not isinstance(entry, Mapping) or entry.get("error"):
        return None
    devices = []
    for dev in entry.get("devices") or []:
        devices.append(
            (
                str(dev.get("pool_name", "")),
                str(dev.get("device_name", "")),
                tuple(str(r) for r in dev.get("request_names") or ()),
                tuple(str(c) for c in dev.get("cdi_device_ids") or ()),
                str(dev.get("share_id") or ""),
            )
        )
    return tuple(sorted(devices))


def clean_call(call: RpcCall) -> bool:
    """The whole call succeeded: gRPC OK and every requested claim answered without an error."""
    if not call.ok:
        return False
    results = call.claim_results
    return all(
        isinstance(results.get(c.uid), Mapping) and not results[c.uid].get("error") for c in call.claims
    )


def _devices_of(state: ClaimInfoState) -> dict[str, list[dict[str, Any]]]:
    return {
        driver: [asdict(d) for d in (ds.devices or [])]
        for driver, ds in sorted((state.driver_state or {}).items())
    }


class Oracle:
    """Per-run invariant state; call :meth:`before_step`, run the step, then :meth:`after_step`."""

    def __init__(self) -> None:
        self.seq = 0
        self.devices: dict[str, tuple[int, DeviceKey]] = {}
        self.running_before: dict[str, set[str]] = {}
        self.outcomes = OutcomeChecks()

    # ------------------------------------------------------------------ per step
    def before_step(self, world: World, step: str) -> None:
        """Remember which pods were Running before the step, and what may make ``step`` fail."""
        self.running_before = running_claims(world)
        self.outcomes.before(world, step)

    def after_step(self, world: World, index: int) -> list[Violation]:
        """Every per-step invariant, over what happened during step ``index``."""
        upto = world.journal.mark()
        calls = [c for c in world.journal.rpc_calls(side="kubelet", since_seq=self.seq) if c.seq <= upto]
        self.seq = upto
        found: list[Violation] = []
        found += self.outcomes.after(world, calls, index)
        found += self._unprepare_in_use(world, calls, index)
        found += self._idempotent(calls, index)
        found += check_unique_cdi(world, index)
        found += check_checkpoint(world, index)
        return found

    def _unprepare_in_use(self, world: World, calls: list[RpcCall], index: int) -> list[Violation]:
        after = running_claims(world)
        found = []
        for call in calls:
            if call.name != UNPREPARE:
                continue
            for key in call.claim_keys:
                users = self.running_before.get(key, set()) & after.get(key, set())
                if users:
                    found.append(
                        Violation(
                            "no-unprepare-in-use",
                            f"NodeUnprepareResources for claim {key} (journal #{call.seq}) while "
                            f"Running pod(s) {', '.join(sorted(users))} use it",
                            {"claim": key, "pods": sorted(users), "call_seq": call.seq, "code": call.code},
                            index,
                        )
                    )
        return found

    def _idempotent(self, calls: list[RpcCall], index: int) -> list[Violation]:
        found = []
        for call in calls:
            if call.name == UNPREPARE:
                # Whatever the outcome, the driver may have released the claim: start afresh.
                for claim in call.claims:
                    self.devices.pop(claim.uid, None)
                continue
            if call.name != PREPARE:
                continue
            for claim in call.claims:
                devices = reply_devices(call, claim.uid)
                if devices is None:
                    continue
                previous = self.devices.get(claim.uid)
                if previous is not None and previous[1] != devices:
                    found.append(
                        Violation(
                            "idempotent-prepare",
                            f"NodePrepareResources for claim {claim.namespace}/{claim.name} "
                            f"(uid {claim.uid}) answered different devices in #{call.seq} than in "
                            f"#{previous[0]}, with no unprepare in between",
                            {
                                "claim": f"{claim.namespace}/{claim.name}",
                                "uid": claim.uid,
                                "first": {"seq": previous[0], "devices": [list(d) for d in previous[1]]},
                                "then": {"seq": call.seq, "devices": [list(d) for d in devices]},
                            },
                            index,
                        )
                    )
                self.devices[claim.uid] = (call.seq, devices)
        return found

    # ------------------------------------------------------------------ end of run
    def final(self, world: World) -> list[Violation]:
        """End-of-run invariants, after the settle steps ran (all pods gone, faults cleared)."""
        return check_unprepared_once(world) + check_released(world)


def check_unique_cdi(world: World, index: int | None) -> list[Violation]:
    """``unique-cdi-ids``: the CDI IDs each container was handed (at its start) hold no duplicate.

    Duplicates as ``expectCdiDevices {unique: true}`` defines them: an ID a device lists
    twice, or devices that share all their IDs (an ID common to every device is fine).
    """
    found = []
    for rec in world.pods.values():
        for container, groups in rec.cdi.items():
            problems = duplicate_problems(groups)
            if problems:
                ids = [cdi_id for group in groups for cdi_id in group]
                found.append(
                    Violation(
                        "unique-cdi-ids",
                        f"container {container} of pod {rec.key} was handed CDI IDs twice: "
                        + "; ".join(problems),
                        {"pod": rec.key, "container": container, "ids": ids, "duplicates": problems},
                        index,
                    )
                )
    return found


def load_checkpoint(world: World) -> list[ClaimInfoState] | str:
    """The checkpoint's entries, or the error text when it cannot be read."""
    try:
        return list(FileCheckpointStore(world.workspace.checkpoint_path).load().entries)
    except CheckpointError as err:
        return str(err)


def check_checkpoint(world: World, index: int | None) -> list[Violation]:
    """``checkpoint-matches-cache``, when a kubelet runs (between steps it is idle).

    Upstream deliberately delays checkpointing a dropped pod reference of a shared claim
    until the whole UnprepareResources succeeded, so the file may list *more* pods than
    the cache; and devices of a claim whose prepare failed half-way are only in memory.
    Hence: same claim set, checkpoint pods ⊇ cache pods, equal devices for prepared claims.
    """
    kubelet = world.kubelet
    if kubelet is None:
        return []
    manager = kubelet
    cache = {s.key: s for s in manager.claim_infos()}
    disk = load_checkpoint(world)
    if isinstance(disk, str):
        if not cache:
            return []
        return [
            Violation(
                "checkpoint-matches-cache",
                f"the checkpoint cannot be read ({disk}) but the cache holds {', '.join(sorted(cache))}",
                {"cache": sorted(cache), "error": disk},
                index,
            )
        ]
    stored = {s.key: s for s in disk}
    problems: list[str] = []
    details: dict[str, Any] = {}
    if set(stored) != set(cache):
        problems.append(f"claims differ: checkpoint {sorted(stored)}, cache {sorted(cache)}")
        details["claims"] = {"checkpoint": sorted(stored), "cache": sorted(cache)}
    for key in sorted(set(stored) & set(cache)):
        mem, file = cache[key], stored[key]
        if mem.claim_uid != file.claim_uid:
            problems.append(f"{key}: uid {file.claim_uid} on disk, {mem.claim_uid} in memory")
        missing = set(mem.pod_uids or ()) - set(file.pod_uids or ())
        if missing:
            problems.append(f"{key}: pod reference(s) {sorted(missing)} in memory only")
        namespace, name = key.split("/", 1)
        if manager.is_prepared(namespace, name) and _devices_of(mem) != _devices_of(file):
            problems.append(f"{key}: prepared devices differ")
            details[key] = {"checkpoint": _devices_of(file), "cache": _devices_of(mem)}
    if not problems:
        return []
    details["problems"] = problems
    details["expected"] = _cache_summary(world, cache)
    return [
        Violation(
            "checkpoint-matches-cache",
            "the checkpoint on disk does not match the manager's cache: " + "; ".join(problems),
            details,
            index,
        )
    ]


def _cache_summary(world: World, cache: dict[str, ClaimInfoState]) -> dict[str, Any]:
    """claim name -> pods (by name) and device count, as the cache holds it (for expectCheckpoint)."""
    names = {rec.uid: rec.name for rec in world.pods.values()}
    summary: dict[str, Any] = {}
    for key, state in cache.items():
        entry: dict[str, Any] = {"pods": sorted(names.get(uid, uid) for uid in state.pod_uids or ())}
        count = sum(len(ds.devices or []) for ds in (state.driver_state or {}).values())
        entry["devices"] = count
        summary[key] = entry
    return summary


def check_unprepared_once(world: World) -> list[Violation]:
    """``unprepared-once`` over the whole journal, after the final settle."""
    calls = world.journal.rpc_calls(side="kubelet")
    crashes = [e["seq"] for e in world.journal.events("kubelet", operation="crash", point=UNPREPARE_CRASH)]
    # The claims the driver prepared, each with its last NodePrepareResources call, whatever that
    # call's outcome: a prepare that fails after an unprepare leaves the claim in the kubelet's cache,
    # and the kubelet (as upstream) unprepares it again when the pod goes.
    prepared: set[str] = set()
    last_prepare: dict[str, tuple[int, str]] = {}
    for call in calls:
        if call.name == PREPARE:
            for claim in call.claims:
                last_prepare[claim.uid] = (call.seq, f"{claim.namespace}/{claim.name}")
                if reply_devices(call, claim.uid) is not None:
                    prepared.add(claim.uid)
    found = []
    for uid, (seq, key) in sorted(last_prepare.items(), key=lambda item: item[1][0]):
        if uid not in prepared:
            continue
        after = [
            c for c in calls if c.name == UNPREPARE and c.seq > seq and any(x.uid == uid for x in c.claims)
        ]
        clean = [c.seq for c in after if clean_call(c)]
        allowed = 1 + sum(1 for s in crashes if s > seq)
        if 1 <= len(clean) <= allowed:
            continue
        what = "never" if not clean else f"{len(clean)} times"
        found.append(
            Violation(
                "unprepared-once",
                f"claim {key} (uid {uid}), last sent to NodePrepareResources in #{seq}, "
                f"was unprepared {what} afterwards (expected 1{f' to {allowed}' if allowed > 1 else ''})",
                {
                    "claim": key,
                    "uid": uid,
                    "last_prepare_seq": seq,
                    "unprepare_seqs": clean,
                    "all_unprepare_seqs": [c.seq for c in after],
                    "allowed": allowed,
                },
            )
        )
    return found


def check_released(world: World) -> list[Violation]:
    """``all-released``: nothing is left in the cache, the checkpoint or the CDI directory."""
    left: dict[str, Any] = {}
    if world.kubelet is not None:
        cache = [s.key for s in world.kubelet.claim_infos()]
        if cache:
            left["cache"] = cache
    disk = load_checkpoint(world)
    if not isinstance(disk, str) and disk:
        left["checkpoint"] = [s.key for s in disk]
    specs = sorted(p.name for p in world.workspace.cdi_dir.iterdir() if p.is_file())
    if specs:
        left["cdi_specs"] = specs
    if not left:
        return []
    parts = [f"{where}: {', '.join(items)}" for where, items in left.items()]
    return [Violation("all-released", "left behind after every pod went: " + "; ".join(parts), left)]
