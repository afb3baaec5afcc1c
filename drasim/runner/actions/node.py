"""Action steps on the node's files and the node as a whole: the checkpoint, the CDI
directory, and a reboot."""

from __future__ import annotations

import contextlib
import re

from drasim.runner import podworker
from drasim.runner.actions.kubelet import start_and_sync
from drasim.runner.actions.registry import handles
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.RebootNode reads like the YAML

_LEGACY_CHECKPOINT = (
    '{"version":"v1","entries":[{"DriverName":"test-driver.cdi.k8s.io","ClassName":"class-name",'
    '"ClaimUID":"067798be-454e-4be4-9047-1aa06aea63f7","ClaimName":"example","Namespace":"default",'
    '"PodUIDs":{"139cdb46-f989-4f17-9561-ca10cfb509a6":{}},"ResourceHandles":[{"driverName":'
    '"test-driver.cdi.k8s.io","data":"{\\"a\\": \\"b\\"}"}],"CDIDevices":{"test-driver.cdi.k8s.io":'
    '["example.com/example=cdi-example"]}}],"checksum":113577689}'
)


@handles(S.CorruptCheckpoint)
def corrupt_checkpoint(world: World, args: S.CorruptCheckpoint, ctx: StepContext) -> None:
    """Damage dra_manager_state."""
    path = world.workspace.checkpoint_path
    data = path.read_bytes() if path.exists() else b""
    if args.mode == "checksum":
        match = re.search(rb'"Checksum":(\d+)', data)
        if match is None:
            raise StepFailure("corruptCheckpoint: the checkpoint has no Checksum to damage")
        wrong = str((int(match.group(1)) + 1) % 2**32).encode()
        data = data[: match.start(1)] + wrong + data[match.end(1) :]
    elif args.mode == "truncate":
        data = data[: len(data) // 2]
    elif args.mode == "invalidJson":
        data = b"{"
    elif args.mode == "legacyFormat":
        data = _LEGACY_CHECKPOINT.encode()
    else:
        data = args.content.encode()
    path.write_bytes(data)
    world.journal.record("fault", where="checkpoint", description=f"corruptCheckpoint {args.mode}")


@handles(S.DeleteCheckpoint)
def delete_checkpoint(world: World, args: S.DeleteCheckpoint, ctx: StepContext) -> None:
    """Remove dra_manager_state."""
    with contextlib.suppress(FileNotFoundError):
        world.workspace.checkpoint_path.unlink()


@handles(S.ClearCdiDir)
def clear_cdi_dir(world: World, args: S.ClearCdiDir, ctx: StepContext) -> None:
    """Delete every CDI spec file."""
    for path in world.workspace.cdi_dir.iterdir():
        if path.is_file():
            path.unlink()


@handles(S.RebootNode)
def reboot_node(world: World, args: S.RebootNode, ctx: StepContext) -> None:
    """Kubelet down, plugins killed, CDI tmpfs cleared, stale sockets gone, then everything back."""
    world.stop_kubelet()
    for handle in world.fleet.drivers.values():
        handle.kill()
    clear_cdi_dir(world, S.ClearCdiDir(), ctx)
    for directory in (world.workspace.registry_dir, world.workspace.plugins_dir):
        for path in directory.rglob("*"):
            if path.is_socket():
                path.unlink()
    podworker.advance(world, args.downtime)
    for handle in world.fleet.drivers.values():
        world.fleet.start(handle, wait=False)
    start_and_sync(world, None, running_too=True)
