"""PATCH bodies: merge patch, JSON patch and the strategic merge subset."""

from __future__ import annotations

import pytest

from drasim.apiserver.patch import JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, apply_patch
from drasim.errors import ApiError

BASE = {
    "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
    "spec": {"containers": [{"name": "c1", "image": "i1"}, {"name": "c2", "image": "i2"}], "list": [1, 2]},
    "status": {"reservedFor": [{"uid": "u1", "name": "pod-1"}]},
}


def test_merge_patch_merges_maps_deletes_nulls_replaces_lists():
    out = apply_patch(
        BASE, {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"list": [9]}}, MERGE_PATCH
    )
    assert out["metadata"]["labels"] == {"b": "2", "c": "3"}
    assert out["spec"]["list"] == [9]
    assert out["spec"]["containers"] == BASE["spec"]["containers"]
    assert BASE["metadata"]["labels"] == {"a": "1", "b": "2"}  # input untouched


def test_json_patch_operations():
    ops = [
        {"op": "add", "path": "/metadata/labels/d", "value": "4"},
        {"op": "replace", "path": "/spec/list/0", "value": 7},
        {"op": "remove", "path": "/metadata/labels/a"},
        {"op": "add", "path": "/spec/list/-", "value": 3},
        {"op": "copy", "from": "/metadata/labels/b", "path": "/metadata/labels/e"},
        {"op": "move", "from": "/metadata/labels/d", "path": "/metadata/labels/f"},
        {"op": "test", "path": "/spec/list/0", "value": 7},
        {"op": "add", "path": "/metadata/annotations", "value": {"k~/": "v"}},
        {"op": "remove", "path": "/metadata/annotations/k~0~1"},
    ]
    out = apply_patch(BASE, ops, JSON_PATCH)
    assert out["metadata"]["labels"] == {"b": "2", "e": "2", "f": "4"}
    assert out["spec"]["list"] == [7, 2, 3]
    assert out["metadata"]["annotations"] == {}


@pytest.mark.parametrize(
    ("ops", "code"),
    [
        ([{"op": "test", "path": "/spec/list/0", "value": 99}], 422),
        ([{"op": "remove", "path": "/spec/missing"}], 400),
        ([{"op": "replace", "path": "/nope", "value": 1}], 400),
        ([{"op": "frobnicate", "path": "/spec"}], 400),
        ({"op": "add"}, 400),
        ([{"op": "add", "path": "spec"}], 400),
    ],
)
def test_bad_json_patch(ops, code):
    with pytest.raises(ApiError) as err:
        apply_patch(BASE, ops, JSON_PATCH)
    assert err.value.code == code


def test_strategic_merge_merges_keyed_lists_and_primitive_sets():
    patch = {
        "metadata": {"finalizers": ["y"]},
        "spec": {"containers": [{"name": "c2", "image": "new"}, {"name": "c3", "image": "i3"}], "list": [5]},
        "status": {"reservedFor": [{"uid": "u2", "name": "pod-2"}]},
    }
    out = apply_patch(BASE, patch, STRATEGIC_PATCH)
    assert out["spec"]["containers"] == [
        {"name": "c1", "image": "i1"},
        {"name": "c2", "image": "new"},
        {"name": "c3", "image": "i3"},
    ]
    assert out["spec"]["list"] == [5]  # lists without a merge key are replaced
    assert out["metadata"]["finalizers"] == ["x", "y"]
    assert [r["uid"] for r in out["status"]["reservedFor"]] == ["u1", "u2"]


def test_strategic_merge_directives():
    patch = {
        "spec": {"containers": [{"name": "c1", "$patch": "delete"}]},
        "metadata": {"$patch": "replace", "name": "q"},
    }
    out = apply_patch(BASE, patch, STRATEGIC_PATCH)
    assert out["spec"]["containers"] == [{"name": "c2", "image": "i2"}]
    assert out["metadata"] == {"name": "q"}


def test_unknown_patch_type_is_415():
    with pytest.raises(ApiError) as err:
        apply_patch(BASE, {}, "application/apply-patch+yaml")
    assert err.value.code == 415
