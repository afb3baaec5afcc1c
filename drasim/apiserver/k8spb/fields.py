"""Which scalar fields keep a zero value in Kubernetes JSON.

Go's protobuf marshaller writes every non-pointer scalar field, even when it is
zero, but Go's JSON encoder drops zero values of ``omitempty`` fields. So a zero
on the wire usually means "unset" and the decoder drops it. Two kinds of field
are different and listed here, per message (full protobuf name):

* ``POINTER_FIELDS``: Go pointers (``*bool``, ``*int64``, ``*string``, ``*Time``).
  They are only on the wire when set, and then ``false``/``0``/``""`` is a real
  value (``allNodes: false``, a ``bool`` attribute that is false, an ``int``
  attribute that is 0).
* ``REQUIRED_FIELDS``: value fields without ``omitempty``; the API shows them
  even when zero (``pool.generation: 0``).

Both keep a zero scalar that is present on the wire. Only pointer fields are
left out when :func:`drasim.apiserver.k8spb.encode_object` mimics Go's
zero-writing (which also writes non-pointer ``Time`` fields as empty messages).
"""

from __future__ import annotations

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_CORE = "k8s.io.api.core.v1."
_RES = "k8s.io.api.resource.v1."
_RES_BETA1 = "k8s.io.api.resource.v1beta1."


def _table(prefix: str, entries: dict[str, str]) -> dict[str, frozenset[str]]:
    return {prefix + msg: frozenset(names.split()) for msg, names in entries.items()}


POINTER_FIELDS: dict[str, frozenset[str]] = {
    **_table(
        _META,
        {
            "ObjectMeta": "deletionGracePeriodSeconds deletionTimestamp",
            "ManagedFieldsEntry": "time fieldsV1",
            "OwnerReference": "controller blockOwnerDeletion",
            "ListMeta": "remainingItemCount",
            "DeleteOptions": "gracePeriodSeconds orphanDependents propagationPolicy "
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            "Preconditions": "uid resourceVersion",
        },
    ),
    **_table(_CORE, {"Taint": "timeAdded"}),
    **_table(
        _RES,
        {
            "ResourceSliceSpec": "nodeName allNodes perDeviceNodeSelection",
            "Device": "nodeName allNodes bindsToNode allowMultipleAllocations",
            "DeviceAttribute": "int bool string version",
            "DeviceClassSpec": "extendedResourceName",
            "DeviceTaint": "timeAdded",
            "AllocationResult": "allocationTimestamp",
            "ExactDeviceRequest": "adminAccess",
            "DeviceToleration": "tolerationSeconds",
            "DeviceConstraint": "matchAttribute distinctAttribute",
            "DeviceRequestAllocationResult": "adminAccess shareID",
            "AllocatedDeviceStatus": "shareID",
        },
    ),
    **_table(
        _RES_BETA1,
        {
            "ResourceSliceSpec": "nodeName allNodes perDeviceNodeSelection",
            "BasicDevice": "nodeName allNodes bindsToNode allowMultipleAllocations",
        },
    ),
}

REQUIRED_FIELDS: dict[str, frozenset[str]] = {
    **_table(
        _META,
        {
            "OwnerReference": "apiVersion kind name uid",
            "Condition": "type status reason message",
            "LabelSelectorRequirement": "key operator",
        },
    ),
    **_table(
        _CORE,
        {
            "NodeSelectorRequirement": "key operator",
            "Taint": "key effect",
            "NodeCondition": "type status",
            "NodeAddress": "type address",
            "NodeSystemInfo": "machineID systemUUID bootID kernelVersion osImage "
            "containerRuntimeVersion kubeletVersion kubeProxyVersion operatingSystem architecture",
        },
    ),
    **_table(
        _RES,
        {
            "ResourceSliceSpec": "driver",
            "ResourcePool": "name generation resourceSliceCount",
            "Device": "name",
            "CounterSet": "name",
            "DeviceCounterConsumption": "counterSet",
            "DeviceTaint": "key effect",
            "CELDeviceSelector": "expression",
            "OpaqueDeviceConfiguration": "driver",
            "DeviceRequest": "name",
            "ExactDeviceRequest": "deviceClassName",
            "DeviceSubRequest": "name deviceClassName",
            "DeviceRequestAllocationResult": "request driver pool device",
            "DeviceAllocationConfiguration": "source",
            "ResourceClaimConsumerReference": "resource name uid",
            "AllocatedDeviceStatus": "driver pool device",
        },
    ),
    **_table(_RES_BETA1, {"ResourceSliceSpec": "driver", "Device": "name"}),
}

# Go structs embedded with ``json:",inline"``: on the wire they are a nested
# message, in JSON their fields sit directly in the parent object.
INLINE_FIELDS: dict[str, frozenset[str]] = _table(
    _RES,
    {
        "DeviceClaimConfiguration": "deviceConfiguration",
        "DeviceClassConfiguration": "deviceConfiguration",
        "DeviceAllocationConfiguration": "deviceConfiguration",
    },
)

_EMPTY: frozenset[str] = frozenset()


def keeps_zero(message: str, field: str) -> bool:
    """Whether a zero value of ``message.field`` that is on the wire is shown in JSON."""
    return field in POINTER_FIELDS.get(message, _EMPTY) or field in REQUIRED_FIELDS.get(message, _EMPTY)


def inline_fields(message: str) -> frozenset[str]:
    """Names of the fields of ``message`` whose JSON is merged into the parent object."""
    return INLINE_FIELDS.get(message, _EMPTY)


def is_pointer(message: str, field: str) -> bool:
    """Whether Go declares ``message.field`` as a pointer (written only when set)."""
    return field in POINTER_FIELDS.get(message, _EMPTY)
