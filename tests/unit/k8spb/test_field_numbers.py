"""Our .proto field numbers equal the numbers upstream publishes.

The expected tables were taken by hand from upstream generated.proto files
(k8s.io/api resource/v1 and core/v1, k8s.io/apimachinery meta/v1, runtime and
api/resource). A mismatch here means a body from client-go would be misread.
"""

from __future__ import annotations

import importlib

import pytest

RES = "drasim._proto.k8s.api.resource.v1.generated_pb2"
CORE = "drasim._proto.k8s.api.core.v1.generated_pb2"
META = "drasim._proto.k8s.apimachinery.pkg.apis.meta.v1.generated_pb2"
RUNTIME = "drasim._proto.k8s.apimachinery.pkg.runtime.generated_pb2"
QUANTITY = "drasim._proto.k8s.apimachinery.pkg.api.resource.generated_pb2"
BETA1 = "drasim._proto.k8s.api.resource.v1beta1.generated_pb2"

UPSTREAM: list[tuple[str, str, dict[str, int]]] = [
    (RUNTIME, "Unknown", {"typeMeta": 1, "raw": 2, "contentEncoding": 3, "contentType": 4}),
    (RUNTIME, "TypeMeta", {"apiVersion": 1, "kind": 2}),
    (RUNTIME, "RawExtension", {"raw": 1}),
    (QUANTITY, "Quantity", {"string": 1}),
    (META, "Time", {"seconds": 1, "nanos": 2}),
    (
        META,
        "ObjectMeta",
        {
            "name": 1,
            "generateName": 2,
            "namespace": 3,
            "selfLink": 4,
            "uid": 5,
            "resourceVersion": 6,
            "generation": 7,
            "creationTimestamp": 8,
            "deletionTimestamp": 9,
            "deletionGracePeriodSeconds": 10,
            "labels": 11,
            "annotations": 12,
            "ownerReferences": 13,
            "finalizers": 14,
            "managedFields": 17,
        },
    ),
    (
        META,
        "OwnerReference",
        {"kind": 1, "name": 3, "uid": 4, "apiVersion": 5, "controller": 6, "blockOwnerDeletion": 7},
    ),
    (
        META,
        "ManagedFieldsEntry",
        {
            "manager": 1,
            "operation": 2,
            "apiVersion": 3,
            "time": 4,
            "fieldsType": 6,
            "fieldsV1": 7,
            "subresource": 8,
        },
    ),
    (META, "FieldsV1", {"Raw": 1}),
    (META, "ListMeta", {"selfLink": 1, "resourceVersion": 2, "continue": 3, "remainingItemCount": 4}),
    (META, "Status", {"metadata": 1, "status": 2, "message": 3, "reason": 4, "details": 5, "code": 6}),
    (
        META,
        "StatusDetails",
        {"name": 1, "group": 2, "kind": 3, "causes": 4, "retryAfterSeconds": 5, "uid": 6},
    ),
    (META, "StatusCause", {"reason": 1, "message": 2, "field": 3}),
    (META, "Preconditions", {"uid": 1, "resourceVersion": 2}),
    (
        META,
        "DeleteOptions",
        {
            "gracePeriodSeconds": 1,
            "preconditions": 2,
            "orphanDependents": 3,
            "propagationPolicy": 4,
            "dryRun": 5,
            "ignoreStoreReadErrorWithClusterBreakingPotential": 6,
        },
    ),
    (
        META,
        "Condition",
        {"type": 1, "status": 2, "observedGeneration": 3, "lastTransitionTime": 4, "reason": 5, "message": 6},
    ),
    (CORE, "NodeSelector", {"nodeSelectorTerms": 1}),
    (CORE, "NodeSelectorTerm", {"matchExpressions": 1, "matchFields": 2}),
    (CORE, "NodeSelectorRequirement", {"key": 1, "operator": 2, "values": 3}),
    (CORE, "Node", {"metadata": 1, "spec": 2, "status": 3}),
    (CORE, "Taint", {"key": 1, "value": 2, "effect": 3, "timeAdded": 4}),
    (RES, "ResourceSlice", {"metadata": 1, "spec": 2}),
    (
        RES,
        "ResourceSliceSpec",
        {
            "driver": 1,
            "pool": 2,
            "nodeName": 3,
            "nodeSelector": 4,
            "allNodes": 5,
            "devices": 6,
            "perDeviceNodeSelection": 7,
            "sharedCounters": 8,
        },
    ),
    (RES, "ResourcePool", {"name": 1, "generation": 2, "resourceSliceCount": 3}),
    (
        RES,
        "Device",
        {
            "name": 1,
            "attributes": 2,
            "capacity": 3,
            "consumesCounters": 4,
            "nodeName": 5,
            "nodeSelector": 6,
            "allNodes": 7,
            "taints": 8,
            "bindsToNode": 9,
            "bindingConditions": 10,
            "bindingFailureConditions": 11,
            "allowMultipleAllocations": 12,
        },
    ),
    (
        RES,
        "DeviceAttribute",
        {"int": 2, "bool": 3, "string": 4, "version": 5, "ints": 6, "bools": 7, "strings": 8, "versions": 9},
    ),
    (BETA1, "Device", {"name": 1, "basic": 2}),
    (
        BETA1,
        "BasicDevice",
        {
            "attributes": 1,
            "capacity": 2,
            "consumesCounters": 3,
            "nodeName": 4,
            "nodeSelector": 5,
            "allNodes": 6,
            "taints": 7,
            "bindsToNode": 8,
            "bindingConditions": 9,
            "bindingFailureConditions": 10,
            "allowMultipleAllocations": 11,
        },
    ),
    (
        BETA1,
        "ResourceSliceSpec",
        {
            "driver": 1,
            "pool": 2,
            "nodeName": 3,
            "nodeSelector": 4,
            "allNodes": 5,
            "devices": 6,
            "perDeviceNodeSelection": 7,
            "sharedCounters": 8,
        },
    ),
    (RES, "DeviceCapacity", {"value": 1, "requestPolicy": 2}),
    (RES, "CapacityRequestPolicy", {"default": 1, "validValues": 3, "validRange": 4}),
    (RES, "CounterSet", {"name": 1, "counters": 2}),
    (RES, "DeviceCounterConsumption", {"counterSet": 1, "counters": 2}),
    (RES, "DeviceTaint", {"key": 1, "value": 2, "effect": 3, "timeAdded": 4}),
    (RES, "ResourceClaim", {"metadata": 1, "spec": 2, "status": 3}),
    (RES, "DeviceClaim", {"requests": 1, "constraints": 2, "config": 3}),
    (RES, "DeviceRequest", {"name": 1, "exactly": 2, "firstAvailable": 3}),
    (
        RES,
        "ExactDeviceRequest",
        {
            "deviceClassName": 1,
            "selectors": 2,
            "allocationMode": 3,
            "count": 4,
            "adminAccess": 5,
            "tolerations": 6,
            "capacity": 7,
        },
    ),
    (
        RES,
        "DeviceSubRequest",
        {
            "name": 1,
            "deviceClassName": 2,
            "selectors": 3,
            "allocationMode": 4,
            "count": 5,
            "tolerations": 6,
            "capacity": 7,
        },
    ),
    (RES, "DeviceToleration", {"key": 1, "operator": 2, "value": 3, "effect": 4, "tolerationSeconds": 5}),
    (RES, "ResourceClaimStatus", {"allocation": 1, "reservedFor": 2, "devices": 4}),
    (RES, "AllocationResult", {"devices": 1, "nodeSelector": 3, "allocationTimestamp": 5}),
    (
        RES,
        "DeviceRequestAllocationResult",
        {
            "request": 1,
            "driver": 2,
            "pool": 3,
            "device": 4,
            "adminAccess": 5,
            "tolerations": 6,
            "bindingConditions": 7,
            "bindingFailureConditions": 8,
            "shareID": 9,
            "consumedCapacity": 10,
        },
    ),
    (RES, "ResourceClaimConsumerReference", {"apiGroup": 1, "resource": 3, "name": 4, "uid": 5}),
    (
        RES,
        "AllocatedDeviceStatus",
        {
            "driver": 1,
            "pool": 2,
            "device": 3,
            "conditions": 4,
            "data": 5,
            "networkData": 6,
            "shareID": 7,
        },
    ),
    (RES, "OpaqueDeviceConfiguration", {"driver": 1, "parameters": 2}),
    (RES, "DeviceClassSpec", {"selectors": 1, "config": 2, "extendedResourceName": 4}),
    (RES, "ResourceClaimTemplateSpec", {"metadata": 1, "spec": 2}),
]


@pytest.mark.parametrize(("module", "message", "expected"), UPSTREAM, ids=[m for _, m, _ in UPSTREAM])
def test_field_numbers_match_upstream(module: str, message: str, expected: dict[str, int]) -> None:
    desc = importlib.import_module(module).DESCRIPTOR.message_types_by_name[message]
    numbers = {f.name: f.number for f in desc.fields}
    assert numbers == expected


@pytest.mark.parametrize(
    ("module", "package"),
    [
        (RES, "k8s.io.api.resource.v1"),
        (BETA1, "k8s.io.api.resource.v1beta1"),
        (CORE, "k8s.io.api.core.v1"),
        (META, "k8s.io.apimachinery.pkg.apis.meta.v1"),
        (RUNTIME, "k8s.io.apimachinery.pkg.runtime"),
        (QUANTITY, "k8s.io.apimachinery.pkg.api.resource"),
    ],
)
def test_packages_are_upstream_names(module: str, package: str) -> None:
    assert importlib.import_module(module).DESCRIPTOR.package == package


def test_all_messages_are_proto2_with_presence() -> None:
    desc = importlib.import_module(RES).DESCRIPTOR.message_types_by_name["ResourceSliceSpec"]
    assert desc.fields_by_name["allNodes"].has_presence
