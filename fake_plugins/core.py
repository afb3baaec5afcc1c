"""What a fake driver does on NodePrepareResources / NodeUnprepareResources.

This is protocol-neutral (plain values in, plain values out); the gRPC layer in
:mod:`fake_plugins.servicers` converts messages. The shape follows a driver built on
the stock ``kubeletplugin`` helper: the helper's ``NodePrepareResources`` fetches
every claim first (failing the whole call for a claim that is missing, not
allocated or replaced), then takes the serialization lock and lets the driver
prepare each claim; ``NodeUnprepareResources`` takes the lock and never reads the
API. The driver part is modelled on the reference example driver: a checkpoint of
prepared claims, one CDI spec per claim, idempotent repeats, unknown claims on
unprepare succeed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from drasim.errors import CheckpointError
from drasim.faults import PluginFault
from drasim.values import ClaimRef, Device, PrepareResult, UnprepareResult
from fake_plugins import cdi, names
from fake_plugins.behaviour import Behaviour, claim_matches
from fake_plugins.claims import (
    ClaimSource,
    KubeObject,
    allocated_devices,
    base_request,
    claim_uid,
    is_allocated,
)
from fake_plugins.config import FakeDriverConfig
from fake_plugins.state import DriverState, PreparedClaim


class CallError(Exception):
    """Fail the whole RPC with a gRPC status (``code`` is the canonical name, e.g. UNKNOWN)."""

    def __init__(self, code: str, details: str) -> None:
        super().__init__(f"{code}: {details}")
        self.code = code
        self.details = details


class CallEffects(Protocol):
    """Call-level faults (delay, hang, crash, status code), applied by the driver."""

    def before(self, faults: Sequence[PluginFault], context: Any = None) -> None:
        """Runs after the lock is taken, before any side effect; may raise CallError.

        ``context`` is the gRPC call's context, so a hang ends when the caller gives up.
        """
        ...

    def after(self, faults: Sequence[PluginFault]) -> None:
        """Runs after side effects, before the reply is sent (crash ``after``)."""
        ...


class DriverCore:
    """Prepared-claim bookkeeping, CDI specs and the scripted per-claim faults."""

    def __init__(
        self,
        config: FakeDriverConfig,
        *,
        claim_source: ClaimSource | None,
        effects: CallEffects,
        behaviour: Behaviour | None = None,
    ) -> None:
        self.config = config
        self.behaviour = behaviour or config.behaviour
        self.claim_source = claim_source
        self.effects = effects
        forgets = self.behaviour.has_bug("forgets-state")
        self.state = DriverState.load(
            config.driver_name, None if forgets else config.state_directory, sync=config.fsync
        )
        self._lock = threading.Lock()
        self._generation = 0

    @contextlib.contextmanager
    def _serialized(self) -> Iterator[None]:
        if not self.config.serialize:
            yield
            return
        with self._lock:
            yield

    def _bug(self, name: str) -> bool:
        return self.behaviour.has_bug(name)

    # --- NodePrepareResources -------------------------------------------------

    def prepare(
        self, claims: Sequence[ClaimRef], faults: Sequence[PluginFault], context: Any = None
    ) -> dict[str, PrepareResult]:
        """Prepare every claim; whole-call problems raise :class:`CallError`."""
        _check_refs(claims)
        try:
            objects = self._fetch_claims(claims)
        except CallError:
            if not self._bug("ignores-claim-errors"):
                raise
            # The bug: a claim that cannot be read is answered as prepared, with no devices.
            return {ref.uid: PrepareResult() for ref in claims}
        with self._serialized():
            if context is None:
                self.effects.before(faults)
            else:
                self.effects.before(faults, context)
            results: dict[str, PrepareResult] = {}
            changed = False
            for ref, obj in zip(claims, objects, strict=True):
                error = _claim_error(faults, ref)
                if error:
                    results[ref.uid] = (
                        PrepareResult() if self._bug("ignores-claim-errors") else PrepareResult(error=error)
                    )
                    continue
                result, did_change = self._prepare_one(ref, obj)
                results[ref.uid] = result
                changed = changed or did_change
            if changed or self.state.claims.pending:
                _save(self.state)  # also what an earlier failed save left unwritten
            _shape_reply(results, claims, faults, PrepareResult())
            if self._bug("drops-claim") and claims:
                results.pop(claims[-1].uid, None)
            self.effects.after(faults)
            return results

    def _fetch_claims(self, claims: Sequence[ClaimRef]) -> list[KubeObject]:
        """Mirrors the helper's ``getResourceClaims``: the first bad claim fails the whole call."""
        objects = []
        for ref in claims:
            where = f"{ref.namespace}/{ref.name}"
            if self.claim_source is None:
                raise CallError(
                    "UNKNOWN", f"get resource claims: retrieve claim {where}: no claim source configured"
                )
            try:
                obj = self.claim_source(ref.namespace, ref.name)
            except Exception as err:  # ApiError, or a transport error from the kubernetes client
                raise CallError("UNKNOWN", f"get resource claims: retrieve claim {where}: {err}") from err
            if not is_allocated(obj):
                raise CallError("UNKNOWN", f"get resource claims: claim {where} not allocated")
            if claim_uid(obj) != ref.uid:
                raise CallError("UNKNOWN", f"get resource claims: claim {where} got replaced")
            objects.append(obj)
        return objects

    def _prepare_one(self, ref: ClaimRef, obj: KubeObject) -> tuple[PrepareResult, bool]:
        known = self.state.claims.get(ref.uid)
        path = cdi.spec_path(self.config.cdi_dir, self.config.driver_name, ref.uid)
        if known is not None and not self._bug("non-idempotent"):
            if not path.exists() and not self._bug("no-cdi-spec"):
                self._write_spec(ref.uid, known.devices)  # e.g. after a reboot cleared the CDI dir
            return PrepareResult(devices=known.devices), False
        allocated = allocated_devices(obj, self.config.driver_name)
        if not self._bug("double-allocates"):
            for dev in allocated:
                holder = (
                    None
                    if dev.admin_access
                    else self.state.holder_of(dev.pool, dev.device, dev.share_id, except_uid=ref.uid)
                )
                if holder is not None:
                    other = self.state.claims[holder]
                    error = (
                        f"device {dev.pool}/{dev.device} is already in use by claim "
                        f"{other.namespace}/{other.name} ({holder})"
                    )
                    return (
                        PrepareResult() if self._bug("ignores-claim-errors") else PrepareResult(error=error)
                    ), False
        self._generation += 1
        devices = tuple(self._device(dev.request, dev.pool, dev.device, dev.share_id) for dev in allocated)
        self._write_spec(ref.uid, devices)
        self.state.claims[ref.uid] = PreparedClaim(ref.namespace, ref.name, devices)
        return PrepareResult(devices=devices), True

    def _cdi_name(self, device: str) -> str:
        return f"{device}-{self._generation}" if self._bug("non-idempotent") else device

    def _device(self, request: str, pool: str, device: str, share_id: str | None) -> Device:
        cdi_id = cdi.device_id(self.config.cdi_kind, self._cdi_name(device))
        ids = (cdi_id, cdi_id) if self._bug("duplicate-cdi-ids") else (cdi_id,)
        return Device(pool, device, (base_request(request),), ids, share_id)

    def _write_spec(self, uid: str, devices: Sequence[Device]) -> None:
        if self._bug("no-cdi-spec"):
            return
        entries = [
            ((d.cdi_device_ids or ("=",))[0].split("=", 1)[1], d.pool_name, d.device_name) for d in devices
        ]
        spec = cdi.build_spec(self.config.cdi_kind, self.config.driver_name, uid, entries)
        path = cdi.spec_path(self.config.cdi_dir, self.config.driver_name, uid)
        try:
            cdi.write_spec(path, spec, sync=self.config.fsync)
        except OSError as err:
            raise CallError("INTERNAL", f"{path}: cannot write CDI spec: {err.strerror or err}") from None

    # --- NodeUnprepareResources -----------------------------------------------

    def unprepare(
        self, claims: Sequence[ClaimRef], faults: Sequence[PluginFault], context: Any = None
    ) -> dict[str, UnprepareResult]:
        """Unprepare every claim; an unknown claim is a success."""
        _check_refs(claims)
        with self._serialized():
            if context is None:
                self.effects.before(faults)
            else:
                self.effects.before(faults, context)
            results: dict[str, UnprepareResult] = {}
            changed = False
            for ref in claims:
                error = _claim_error(faults, ref)
                if error:
                    results[ref.uid] = (
                        UnprepareResult()
                        if self._bug("ignores-claim-errors")
                        else UnprepareResult(error=error)
                    )
                    continue
                known = self.state.claims.pop(ref.uid, None)
                if known is not None or not self._bug("forgets-state"):
                    path = cdi.spec_path(self.config.cdi_dir, self.config.driver_name, ref.uid)
                    try:
                        cdi.remove_spec(path, sync=self.config.fsync)
                    except OSError as err:
                        if known is not None:
                            self.state.claims[ref.uid] = known  # still prepared: a retry removes it
                        reason = err.strerror or err
                        raise CallError("INTERNAL", f"{path}: cannot remove CDI spec: {reason}") from None
                changed = changed or known is not None
                results[ref.uid] = UnprepareResult()
            if changed or self.state.claims.pending:
                _save(self.state)  # also what an earlier failed save left unwritten
            _shape_reply(results, claims, faults, UnprepareResult())
            self.effects.after(faults)
            return results

    def prepared_claims(self) -> dict[str, PreparedClaim]:
        """A copy of the prepared claims, keyed by UID."""
        return dict(self.state.claims)


def _claim_error(faults: Sequence[PluginFault], ref: ClaimRef) -> str:
    for fault in faults:
        if fault.error and claim_matches(fault.claim, ref):
            return fault.error
    return ""


def _shape_reply(
    results: dict[str, PrepareResult] | dict[str, UnprepareResult],
    claims: Sequence[ClaimRef],
    faults: Sequence[PluginFault],
    empty: PrepareResult | UnprepareResult,
) -> None:
    """Apply the ``missing_claim``, ``nil_entry`` and ``unknown_uid`` faults to a reply."""
    for fault in faults:
        if fault.nil_entry:
            for ref in claims:
                if claim_matches(fault.claim, ref) and ref.uid in results:
                    results[ref.uid] = empty  # type: ignore[assignment]
        if fault.missing_claim:
            for ref in claims:
                if claim_matches(fault.claim, ref):
                    results.pop(ref.uid, None)
        if fault.unknown_uid:
            results[fault.added_uid] = empty  # type: ignore[assignment]


def _save(state: DriverState) -> None:
    """Write the driver's checkpoint; a file-system failure fails the call with the file and reason."""
    try:
        state.save()
    except CheckpointError as err:
        raise CallError("INTERNAL", str(err)) from None


def _check_refs(claims: Sequence[ClaimRef]) -> None:
    """Refuse the whole call (INVALID_ARGUMENT) when a claim's UID, name or namespace could not
    come from Kubernetes: the UID becomes part of a file name (see :mod:`fake_plugins.names`)."""
    problem = names.first_problem(claims)
    if problem is not None:
        raise CallError("INVALID_ARGUMENT", problem)
