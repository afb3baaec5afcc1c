"""``expectCdiDevices`` and ``expectCdiSpecs``: what a container runtime would get.

CDI device IDs are computed now with the kubelet's GetResources when the kubelet
runs, else taken from what the runner handed each container at its last start.
Spec files are checked against the rules of the Container Device Interface
specification (github.com/cncf-tags/container-device-interface): a ``cdiVersion``,
a ``kind`` ``vendor/class`` whose parts are valid names, at least one device, unique
valid device names, and devices whose ``containerEdits`` are not empty.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from drasim.errors import ApiError, KubeletError
from drasim.runner.apiside import SLICE_VERSIONS
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.expectations.common import (
    as_error_match,
    container_name,
    describe_match,
    error_matches,
    find_pod,
    plural,
)
from drasim.runner.expectations.registry import checks
from drasim.runner.pods import PodRecord, containers_of
from drasim.scenario.expectations import ExpectCdiDevices, ExpectCdiSpecs

if TYPE_CHECKING:
    from drasim.runner.world import World

_VENDOR = r"[A-Za-z](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?"
_CLASS = _VENDOR
_DEVICE = r"[A-Za-z0-9](?:[A-Za-z0-9_.:-]*[A-Za-z0-9])?"
KIND_RE = re.compile(rf"^{_VENDOR}/{_CLASS}$")
DEVICE_NAME_RE = re.compile(rf"^{_DEVICE}$")
QUALIFIED_RE = re.compile(rf"^{_VENDOR}/{_CLASS}={_DEVICE}$")
VERSION_RE = re.compile(r"^\d+\.\d+\.\d+$")
SPEC_SUFFIXES = (".json", ".yaml")
_EDIT_FIELDS = ("env", "deviceNodes", "hooks", "mounts", "intelRdt", "additionalGids")


# ------------------------------------------------------------------------ device IDs


def cdi_ids(world: World, record: PodRecord, container: str) -> list[str]:
    """The container's CDI IDs: GetResources now, or those handed at its last start (kubelet down).

    Raises :class:`KubeletError` when GetResources fails.
    """
    return [cdi_id for group in cdi_devices(world, record, container) for cdi_id in group]


def cdi_devices(world: World, record: PodRecord, container: str) -> list[tuple[str, ...]]:
    """:func:`cdi_ids` grouped per prepared device (one tuple of IDs per device)."""
    if world.kubelet is not None:
        return list(world.kubelet.get_resources_by_device(record.manifest(world.node), container))
    return list(record.cdi.get(container, []))


def duplicate_problems(groups: list[tuple[str, ...]]) -> list[str]:
    """Why the devices' CDI IDs do not tell the devices apart ([] when they do).

    A device that lists an ID twice is a duplicate, and so is a device none of whose
    IDs is its own (every ID also belongs to another device of the container). An ID
    that several devices share is fine as long as each device has one of its own:
    drivers hand out IDs common to all their devices (the example driver's
    ``k8s.gpu.example.com/gpu=common``), and the kubelet passes one copy per device.
    """
    problems: list[str] = []
    owners: dict[str, set[int]] = {}
    for index, group in enumerate(groups):
        twice = sorted({i for i in group if group.count(i) > 1})
        if twice:
            problems.append(f"device {index + 1} lists {', '.join(twice)} twice")
        for cdi_id in group:
            owners.setdefault(cdi_id, set()).add(index)
    if len(groups) > 1:
        for index, group in enumerate(groups):
            if group and all(len(owners[i]) > 1 for i in group):
                problems.append(f"device {index + 1} has no ID of its own ({', '.join(group)})")
    return problems


@checks(ExpectCdiDevices)
def check_cdi_devices(world: World, args: ExpectCdiDevices, ctx: StepContext) -> None:
    """expectCdiDevices: the exact IDs, their number, uniqueness and syntax, or a GetResources error."""
    record = find_pod(world, args.pod)
    container = container_name(record, args.container)
    where = f"container {container} of pod {record.key}"
    if args.expect_error is not None:
        _check_get_resources_error(world, record, container, as_error_match(args.expect_error), where)
        return
    try:
        groups = cdi_devices(world, record, container)
    except KubeletError as err:
        raise StepFailure(
            f"expected the CDI devices of {where}; GetResources failed: {err}",
            expected="CDI device IDs",
            actual={"error": str(err)},
        ) from None
    ids = [cdi_id for group in groups for cdi_id in group]
    problems = _id_problems(args, groups)
    if problems:
        expected = {k: v for k, v in _wanted(args).items() if v is not None}
        actual: dict[str, Any] = {"ids": ids}
        if args.devices is not None or args.unique is not None:
            actual["devices"] = [list(group) for group in groups]
        raise StepFailure(f"CDI devices of {where}: " + "; ".join(problems), expected=expected, actual=actual)


def _wanted(args: ExpectCdiDevices) -> dict[str, Any]:
    return {
        "ids": args.ids,
        "count": args.count,
        "devices": args.devices,
        "unique": args.unique,
        "wellFormed": args.well_formed,
    }


def _id_problems(args: ExpectCdiDevices, groups: list[tuple[str, ...]]) -> list[str]:  # noqa: C901 - one rule per CDI ID check, as upstream lists them
    ids = [cdi_id for group in groups for cdi_id in group]
    problems: list[str] = []
    if args.ids is not None and ids != list(args.ids):
        problems.append(f"expected {list(args.ids)}; found {ids}")
    if args.count is not None and len(ids) != args.count:
        problems.append(f"expected {plural(args.count, 'ID')}; found {len(ids)}")
    if args.devices is not None:
        if len(groups) != args.devices:
            problems.append(f"expected {plural(args.devices, 'device')} with CDI IDs; found {len(groups)}")
        without = [index + 1 for index, group in enumerate(groups) if not group]
        if without:
            shown = ", ".join(str(index) for index in without)
            problems.append(f"expected every device to have a CDI ID; device {shown} has none")
    duplicates = duplicate_problems(groups)
    if args.unique is True and duplicates:
        problems.append("expected no duplicate IDs; " + "; ".join(duplicates))
    if args.unique is False and not duplicates:
        problems.append("expected some ID to appear twice; every ID is unique")
    if args.well_formed is not None:
        bad = [i for i in ids if not QUALIFIED_RE.match(i)]
        if args.well_formed and bad:
            problems.append(f"expected every ID to be 'vendor/class=name'; malformed: {bad}")
        if not args.well_formed and not bad:
            problems.append("expected some malformed ID; every ID is 'vendor/class=name'")
    return problems


def _check_get_resources_error(
    world: World, record: PodRecord, container: str, match: Any, where: str
) -> None:
    if world.kubelet is None:
        raise StepFailure(
            f"expected GetResources for {where} to fail {describe_match(match)}; the kubelet is not running",
            expected={"error": describe_match(match)},
            actual={"kubelet": "stopped"},
        )
    try:
        ids = cdi_ids(world, record, container)
    except KubeletError as err:
        if error_matches(str(err), match):
            return
        raise StepFailure(
            f"expected GetResources for {where} to fail with an error {describe_match(match)}; "
            f"it failed with: {err}",
            expected={"error": describe_match(match)},
            actual={"error": str(err)},
        ) from None
    raise StepFailure(
        f"expected GetResources for {where} to fail with an error {describe_match(match)}; it returned {ids}",
        expected={"error": describe_match(match)},
        actual={"ids": ids},
    )


# ------------------------------------------------------------------------ spec files


def spec_files(cdi_dir: Path) -> list[Path]:
    """The spec files (``*.json``, ``*.yaml``) directly in the CDI directory, sorted."""
    if not cdi_dir.is_dir():
        return []
    return sorted(p for p in cdi_dir.iterdir() if p.is_file() and p.suffix in SPEC_SUFFIXES)


def load_spec(path: Path) -> tuple[dict[str, Any] | None, list[str]]:
    """Parse and validate one spec file: (document, problems); the document is ``None`` if unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
        document = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as err:
        return None, [f"does not parse: {_first_line(err)}"]
    if not isinstance(document, dict):
        return None, ["is not a mapping"]
    return document, spec_problems(document)


def _first_line(err: Exception) -> str:
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def spec_problems(spec: Mapping[str, Any]) -> list[str]:
    """Why a parsed spec is not valid CDI ([] when it is)."""
    problems: list[str] = []
    version = spec.get("cdiVersion")
    if not isinstance(version, str) or not version:
        problems.append("cdiVersion is missing")
    elif not VERSION_RE.match(version):
        problems.append(f"cdiVersion {version!r} is not a version like 0.6.0")
    kind = spec.get("kind")
    if not isinstance(kind, str) or not KIND_RE.match(kind):
        problems.append(f"kind {kind!r} is not 'vendor/class'")
    devices = spec.get("devices")
    if not isinstance(devices, list) or not devices:
        problems.append("has no devices")
        return problems
    seen: set[str] = set()
    for index, device in enumerate(devices):
        problems.extend(_device_problems(index, device, seen))
    return problems


def _device_problems(index: int, device: Any, seen: set[str]) -> list[str]:
    if not isinstance(device, dict):
        return [f"devices[{index}] is not a mapping"]
    name = device.get("name")
    problems: list[str] = []
    if not isinstance(name, str) or not DEVICE_NAME_RE.match(name):
        problems.append(f"devices[{index}] name {name!r} is not a valid device name")
    elif name in seen:
        problems.append(f"device {name!r} is defined twice")
    else:
        seen.add(name)
    edits = device.get("containerEdits")
    if not isinstance(edits, dict) or not any(edits.get(k) for k in _EDIT_FIELDS):
        problems.append(f"devices[{index}] ({name}) has empty containerEdits")
    return problems


@checks(ExpectCdiSpecs)
def check_cdi_specs(world: World, args: ExpectCdiSpecs, ctx: StepContext) -> None:  # noqa: C901 - one expectation, one branch per spec field
    """expectCdiSpecs: files present/absent/counted, valid, and resolving every running container's IDs."""
    cdi_dir = Path(world.workspace.cdi_dir)
    files = spec_files(cdi_dir)
    names = [p.name for p in files]
    problems: list[str] = []
    expected: dict[str, Any] = {}
    actual: dict[str, Any] = {"files": names}
    for pattern in args.present:
        if not _glob(cdi_dir, pattern):
            problems.append(f"expected a spec file matching {pattern!r}; found none")
            expected.setdefault("present", []).append(pattern)
    for pattern in args.absent:
        matched = _glob(cdi_dir, pattern)
        if matched:
            problems.append(f"expected no file matching {pattern!r}; found {matched}")
            expected.setdefault("absent", []).append(pattern)
    if args.count is not None and len(files) != args.count:
        problems.append(f"expected {plural(args.count, 'spec file')}; found {len(files)} {names}")
        expected["count"] = args.count
        actual["count"] = len(files)
    if args.claim_specs is not None:
        owned = _claim_spec_files(world, files)
        if len(owned) != args.claim_specs:
            problems.append(
                f"expected {plural(args.claim_specs, 'spec file')} for claims; found {len(owned)} {owned}"
            )
            expected["claimSpecs"] = args.claim_specs
            actual["claimSpecs"] = owned
    loaded = {path.name: load_spec(path) for path in files}
    invalid = {name: found for name, (_, found) in loaded.items() if found}
    if args.valid and invalid:
        problems.extend(f"spec {name} {'; '.join(found)}" for name, found in invalid.items())
        expected["valid"], actual["invalid"] = True, invalid
    if not args.valid and not invalid:
        problems.append(f"expected some invalid spec file; all {len(files)} are valid")
        expected["valid"] = False
    if args.resolvable:
        known = {
            f"{doc['kind']}={device['name']}"
            for name, (doc, found) in loaded.items()
            if doc is not None and not found
            for device in doc["devices"]
        }
        unresolved = _unresolved(world, known)
        if unresolved:
            problems.append(
                "expected every CDI ID of a Running pod's containers to name a device in a valid spec; "
                "unresolved: " + ", ".join(unresolved)
            )
            expected["unresolved"], actual["unresolved"] = [], unresolved
            actual["devices"] = sorted(known)
    if problems:
        raise StepFailure(f"CDI specs in {cdi_dir}: " + "; ".join(problems), expected=expected, actual=actual)


def _claim_spec_files(world: World, files: list[Path]) -> list[str]:
    """Names of the spec files whose name or content holds the UID of a ResourceClaim in the API server.

    Drivers name the spec of a claim after it (CDI's transient specs take the claim UID as
    their ID; the example driver names its devices ``<claim UID>-<device>``), while their
    static specs (a device common to every claim) hold no claim UID.
    """
    uids = _claim_uids(world)
    owned: list[str] = []
    for path in files:
        try:
            text = path.name + "\n" + path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(uid in text for uid in uids):
            owned.append(path.name)
    return owned


def _claim_uids(world: World) -> set[str]:
    """UIDs of the ResourceClaims in the API server (from drasim's store when there is one)."""
    store = world.api.backend.store  # None on a real cluster: read through the API then
    for version in SLICE_VERSIONS:
        api_version = f"resource.k8s.io/{version}"
        try:
            if store is not None:
                rtype, served = store.registry.by_kind(api_version, "ResourceClaim")
                items, _ = store.list(rtype, served)
            else:
                items = world.api.runner_api.list(api_version, "ResourceClaim")
        except ApiError:
            continue
        return {str(item["metadata"]["uid"]) for item in items}
    return set()


def _glob(cdi_dir: Path, pattern: str) -> list[str]:
    if not cdi_dir.is_dir():
        return []
    return sorted(str(p.relative_to(cdi_dir)) for p in cdi_dir.glob(pattern) if p.is_file())


def _unresolved(world: World, known: set[str]) -> list[str]:
    """``pod <key> container <name>: <id>`` for every CDI ID of a Running pod that no valid spec defines."""
    missing: list[str] = []
    for key, record in sorted(world.pods.items()):
        if record.phase != "Running":
            continue
        for container in containers_of(record.containers, record.claims):
            try:
                ids = cdi_ids(world, record, container.name)
            except KubeletError as err:
                missing.append(f"pod {key} container {container.name}: GetResources failed: {err}")
                continue
            missing.extend(f"pod {key} container {container.name}: {i}" for i in ids if i not in known)
    return missing
