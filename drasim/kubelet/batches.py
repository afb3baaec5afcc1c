"""One NodePrepareResources / NodeUnprepareResources call and the checks of its reply.

The RPC loops of ``prepareResources`` and ``unprepareResources`` in
pkg/kubelet/cm/dra/manager.go, with upstream's exact error texts. A reply is
checked entry by entry in the order the plugin client returns it (upstream walks a
Go map, so with several bad entries the one reported is random there).
"""

from __future__ import annotations

from collections.abc import Mapping

from drasim.errors import DrasimError, KubeletError
from drasim.interfaces import DriverClient
from drasim.kubelet.claiminfo import ClaimInfoCache
from drasim.kubelet.objects import ClaimView
from drasim.state import Device
from drasim.values import ClaimRef, PrepareResult, UnprepareResult

__all__ = ["prepare_batch", "stored_device", "unprepare_batch"]


def _lookup(claims: list[ClaimRef], uid: str) -> ClaimRef | None:
    """Mirrors ``lookupClaimRequest``."""
    for claim in claims:
        if claim.uid == uid:
            return claim
    return None


def stored_device(device: Device) -> Device:
    """A reply device as the kubelet stores it: an empty repeated field decodes to nil upstream."""
    return Device(
        pool_name=device.pool_name,
        device_name=device.device_name,
        request_names=tuple(device.request_names) if device.request_names else None,
        cdi_device_ids=tuple(device.cdi_device_ids) if device.cdi_device_ids else None,
        share_id=device.share_id,
    )


def _missing(claim: ClaimView) -> KubeletError:
    return KubeletError(
        f"internal error: unable to get claim info for ResourceClaim {claim.name} "
        f"in namespace {claim.namespace}"
    )


def prepare_batch(
    cache: ClaimInfoCache,
    plugin: DriverClient,
    claims: list[ClaimRef],
    sent: Mapping[str, ClaimView],
    *,
    replace: bool = True,
) -> None:
    """Call NodePrepareResources for one plugin's batch and record the returned devices.

    Each successful entry REPLACES the driver's devices of that claim under the write
    lock as soon as it is checked (upstream resets them first since
    kubernetes/kubernetes#140274), so a later bad entry or a later failing batch leaves
    them in the cache (not prepared) and a retry records them again without duplicates.
    With ``replace=False`` (kubelets without that fix) the devices are APPENDED, so a
    retry or a re-prepare after a restart duplicates them.
    """
    try:
        reply: Mapping[str, PrepareResult | None] = plugin.node_prepare_resources(claims)
    except DrasimError as err:  # RpcError per the port; any error is wrapped upstream
        raise KubeletError(f"NodePrepareResources: {err}") from err
    for uid, result in reply.items():
        requested = _lookup(claims, uid)
        if requested is None:
            raise KubeletError(f"NodePrepareResources returned result for unknown claim UID {uid}")
        if result is not None and result.error:
            msg = f"NodePrepareResources failed for ResourceClaim {requested.name}: {result.error}"
            raise KubeletError(msg)
        claim = sent[uid]
        with cache.write_locked():
            info = cache.get(claim.name, claim.namespace)
            if info is None:
                raise _missing(claim)
            if replace:
                info.reset_devices(plugin.driver_name)
            for device in () if result is None else result.devices:
                info.add_device(plugin.driver_name, stored_device(device))
    unfinished = len(claims) - len(reply)
    if unfinished != 0:
        raise KubeletError(f"NodePrepareResources skipped {unfinished} ResourceClaims")


def unprepare_batch(plugin: DriverClient, claims: list[ClaimRef]) -> None:
    """Call NodeUnprepareResources for one driver's batch and check the reply."""
    try:
        reply: Mapping[str, UnprepareResult | None] = plugin.node_unprepare_resources(claims)
    except DrasimError as err:  # RpcError per the port; any error is wrapped upstream
        raise KubeletError(f"NodeUnprepareResources: {err}") from err
    for uid, result in reply.items():
        requested = _lookup(claims, uid)
        if requested is None:
            raise KubeletError(f"NodeUnprepareResources returned result for unknown claim UID {uid}")
        if result is not None and result.error:
            msg = f"NodeUnprepareResources failed for ResourceClaim {requested.name}: {result.error}"
            raise KubeletError(msg)
    unfinished = len(claims) - len(reply)
    if unfinished != 0:
        raise KubeletError(f"NodeUnprepareResources skipped {unfinished} ResourceClaims")
