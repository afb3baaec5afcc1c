"""Label and field selectors: parsing, matching and upstream's error for unknown field labels."""

from __future__ import annotations

import pytest

from drasim.apiserver.selectors import FieldSelector, LabelSelector, field_value
from drasim.errors import ApiError


def obj(labels=None, **spec):
    return {"metadata": {"name": "x", "labels": labels or {}}, "spec": spec}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("", {}, True),
        ("app=gpu", {"app": "gpu"}, True),
        ("app==gpu", {"app": "gpu"}, True),
        ("app=gpu", {"app": "cpu"}, False),
        ("app!=gpu", {"app": "cpu"}, True),
        ("app!=gpu", {}, True),  # != also matches objects without the key, as upstream
        ("app!=gpu", {"app": "gpu"}, False),
        ("tier in (a, b)", {"tier": "b"}, True),
        ("tier in (a,b)", {"tier": "c"}, False),
        ("tier notin (a,b)", {"tier": "c"}, True),
        ("tier notin (a,b)", {}, True),
        ("tier notin (a,b)", {"tier": "a"}, False),
        ("app", {"app": ""}, True),
        ("app", {}, False),
        ("!app", {}, True),
        ("!app", {"app": "x"}, False),
        ("app=gpu,tier in (a,b),!old", {"app": "gpu", "tier": "a"}, True),
        ("app=gpu,tier in (a,b),!old", {"app": "gpu", "tier": "a", "old": "1"}, False),
        ("example.com/role=worker", {"example.com/role": "worker"}, True),
    ],
)
def test_label_selector_matches(selector, labels, expected):
    assert LabelSelector.parse(selector).matches(obj(labels)) is expected


@pytest.mark.parametrize("selector", ["a=(b)", "in (x)", "a b", "=x"])
def test_bad_label_selector_is_400(selector):
    with pytest.raises(ApiError) as err:
        LabelSelector.parse(selector)
    assert err.value.code == 400
    assert "unable to parse requirement" in err.value.message


FIELDS = ("metadata.name", "spec.driver", "spec.nodeName")


def test_field_selector_equality_and_inequality():
    sel = FieldSelector.parse("spec.driver=gpu.example.com,spec.nodeName!=node-2", FIELDS)
    assert sel.matches(obj(driver="gpu.example.com", nodeName="node-1"))
    assert not sel.matches(obj(driver="gpu.example.com", nodeName="node-2"))
    assert not sel.matches(obj(driver="other", nodeName="node-1"))


def test_field_selector_double_equals_and_missing_field_is_empty_string():
    assert FieldSelector.parse("spec.nodeName==", FIELDS).matches(obj(driver="d"))
    assert not FieldSelector.parse("spec.nodeName!=", FIELDS).matches(obj(driver="d"))


def test_unknown_field_label_gives_upstream_error():
    with pytest.raises(ApiError) as err:
        FieldSelector.parse("spec.pool=x", FIELDS)
    assert (err.value.code, err.value.message) == (400, "field label not supported: spec.pool")


def test_field_value_renders_booleans_like_kubernetes():
    assert field_value({"spec": {"unschedulable": True}}, "spec.unschedulable") == "true"
    assert field_value({"spec": {}}, "spec.unschedulable") == ""
