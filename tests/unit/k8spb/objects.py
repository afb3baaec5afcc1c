"""Realistic Kubernetes objects (JSON dicts as the REST API shows them) for the codec tests."""

from __future__ import annotations

from typing import Any

DRIVER = "gpu.example.com"


def example_driver_slice(node: str = "node-1", devices: int = 8) -> dict[str, Any]:
    """A ResourceSlice like the upstream example driver publishes: 8 GPUs, 80Gi each."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "generateName": f"{node}-{DRIVER}-",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": node,
                    "uid": "8f6a1c1e-3c55-4b1f-9d4e-0f1f6f3f0a01",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "driver": DRIVER,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node,
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "architecture": {"string": "Hopper"},
                        "driverVersion": {"version": "1.0.0"},
                        "index": {"int": i},
                        "productName": {"string": "LATEST-GPU-MODEL"},
                        "uuid": {"string": f"gpu-18db0e85-99e9-c746-8531-ffeb86328b3{i}"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def full_resource_slice() -> dict[str, Any]:
    """A ResourceSlice using every field our messages describe."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": "pool-a-0",
            "uid": "0b7d4c8e-1111-4a55-8d9e-2f4a7b0c9d01",
            "resourceVersion": "42",
            "generation": 3,
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"app": "gpu", "tier": "a"},
            "annotations": {"note": "full"},
            "finalizers": ["example.com/keep"],
            "managedFields": [
                {
                    "manager": "gpu-driver",
                    "operation": "Update",
                    "apiVersion": "resource.k8s.io/v1",
                    "time": "2026-01-02T03:04:05Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:driver": {}}},
                }
            ],
        },
        "spec": {
            "driver": DRIVER,
            "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 2},
            "perDeviceNodeSelection": True,
            "devices": [
                {
                    "name": "part-0",
                    "attributes": {
                        "healthy": {"bool": False},
                        "index": {"int": 0},
                        "model": {"string": "X"},
                        "fw": {"version": "2.1.0-rc.1"},
                    },
                    "capacity": {
                        "memory": {
                            "value": "40Gi",
                            "requestPolicy": {
                                "default": "10Gi",
                                "validRange": {"min": "1Gi", "max": "40Gi", "step": "1Gi"},
                            },
                        },
                        "cores": {
                            "value": "8",
                            "requestPolicy": {"default": "1", "validValues": ["1", "2", "4"]},
                        },
                    },
                    "consumesCounters": [
                        {"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}
                    ],
                    "nodeSelector": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}],
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["node-1"]}
                                ],
                            }
                        ]
                    },
                    "taints": [
                        {
                            "key": "example.com/degraded",
                            "value": "ecc",
                            "effect": "NoSchedule",
                            "timeAdded": "2026-01-02T03:04:06Z",
                        }
                    ],
                    "bindsToNode": False,
                    "bindingConditions": ["attached"],
                    "bindingFailureConditions": ["attach-failed"],
                    "allowMultipleAllocations": True,
                },
                {"name": "part-1", "allNodes": True},
                {"name": "part-2", "nodeName": "node-2"},
            ],
        },
    }


def counters_slice() -> dict[str, Any]:
    """The other kind of slice: shared counters only, on all nodes."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "pool-a-counters"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 2},
            "allNodes": True,
            "sharedCounters": [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}],
        },
    }


def allocated_claim() -> dict[str, Any]:
    """A ResourceClaim with spec, allocation, reservation and driver-written device status."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": "gpu-claim",
            "namespace": "default",
            "uid": "c1a1m-0001",
            "resourceVersion": "7",
        },
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
                            "allocationMode": "ExactCount",
                            "count": 2,
                            "adminAccess": False,
                            "tolerations": [
                                {
                                    "key": "example.com/degraded",
                                    "operator": "Exists",
                                    "effect": "NoSchedule",
                                    "tolerationSeconds": 0,
                                }
                            ],
                            "capacity": {"requests": {"memory": "10Gi"}},
                        },
                    },
                    {
                        "name": "nic",
                        "firstAvailable": [
                            {"name": "fast", "deviceClassName": "nic.example.com", "allocationMode": "All"},
                            {"name": "slow", "deviceClassName": "nic.example.com", "count": 1},
                        ],
                    },
                ],
                "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/productName"}],
                "config": [
                    {
                        "requests": ["gpu"],
                        "opaque": {
                            "driver": DRIVER,
                            "parameters": {
                                "apiVersion": "gpu.resource.example.com/v1alpha1",
                                "kind": "GpuConfig",
                                "sharing": {
                                    "strategy": "TimeSlicing",
                                    "timeSlicingConfig": {"interval": "Long"},
                                },
                            },
                        },
                    }
                ],
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": "gpu-0"},
                        {
                            "request": "gpu",
                            "driver": DRIVER,
                            "pool": "node-1",
                            "device": "gpu-1",
                            "adminAccess": False,
                            "shareID": "5a1e0e2c-aaaa-4bbb-8ccc-111122223333",
                            "consumedCapacity": {"memory": "10Gi"},
                        },
                    ],
                    "config": [
                        {
                            "source": "FromClaim",
                            "requests": ["gpu"],
                            "opaque": {"driver": DRIVER, "parameters": {"a": [1, 2]}},
                        }
                    ],
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                    ]
                },
                "allocationTimestamp": "2026-01-02T03:04:05Z",
            },
            "reservedFor": [{"resource": "pods", "name": "pod-a", "uid": "p0d-0001"}],
            "devices": [
                {
                    "driver": DRIVER,
                    "pool": "node-1",
                    "device": "gpu-0",
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "observedGeneration": 1,
                            "lastTransitionTime": "2026-01-02T03:04:07Z",
                            "reason": "Prepared",
                            "message": "",
                        }
                    ],
                    "data": {"healthy": True},
                    "networkData": {
                        "interfaceName": "eth1",
                        "ips": ["10.0.0.5/24"],
                        "hardwareAddress": "aa:bb:cc:dd:ee:ff",
                    },
                }
            ],
        },
    }


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {
            "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
            "config": [{"opaque": {"driver": DRIVER, "parameters": {"x": "y"}}}],
            "extendedResourceName": "example.com/gpu",
        },
    }


def claim_template() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "single-gpu", "namespace": "default"},
        "spec": {
            "metadata": {"labels": {"claim": "from-template"}},
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
            },
        },
    }


def node() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "node-1",
            "uid": "8f6a1c1e-3c55-4b1f-9d4e-0f1f6f3f0a01",
            "labels": {"zone": "a"},
        },
        "spec": {
            "podCIDR": "10.244.0.0/24",
            "podCIDRs": ["10.244.0.0/24"],
            "providerID": "kind://node-1",
            "taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
        },
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi"},
            "allocatable": {"cpu": "7500m", "memory": "30Gi"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": "2026-01-02T03:04:05Z",
                    "lastTransitionTime": "2026-01-02T03:00:00Z",
                    "reason": "KubeletReady",
                    "message": "ok",
                }
            ],
            "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
            "nodeInfo": {
                "machineID": "m",
                "systemUUID": "s",
                "bootID": "b",
                "kernelVersion": "6.8",
                "osImage": "Debian",
                "containerRuntimeVersion": "containerd://2.0",
                "kubeletVersion": "v1.34.0",
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def delete_options() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "0b7d4c8e-1111-4a55-8d9e-2f4a7b0c9d01", "resourceVersion": "42"},
        "propagationPolicy": "Background",
        "dryRun": ["All"],
    }
