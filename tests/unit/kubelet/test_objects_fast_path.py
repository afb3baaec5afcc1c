"""The inline reading of a usual pod gives exactly what the general reader gives, errors included."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasim.kubelet import objects
from drasim.kubelet.objects import MalformedObjectError, pod_view

# The rest from tests/conftest.py's profile; the test patches through ``monkeypatch.context()``
# per example, so sharing the fixture between examples is safe.
SETTINGS = settings(
    max_examples=400,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)


class StrSubclass(str):
    pass


# Mostly the right types, sometimes a wrong one, a null, a subclass or nothing at all.
odd = st.sampled_from([None, 1, 1.5, True, [], {}, (), StrSubclass("s")])
names = st.sampled_from(["a", "gpu", "", "main"]) | odd


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return strategy | odd


def record(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """A dict with some of ``fields`` (each possibly of a wrong type), or something else entirely."""
    return maybe(st.fixed_dictionaries({}, optional=fields))


def items(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return maybe(st.lists(strategy, max_size=3))


container = record(
    {
        "name": names,
        "resources": record(
            {
                "claims": items(record({"name": names, "request": names})),
                "requests": maybe(
                    st.dictionaries(st.sampled_from(["cpu", "gpu.example.com/gpu"]), odd | names)
                ),
            }
        ),
    }
)
pods = record(
    {
        "metadata": record({"name": names, "namespace": names, "uid": names}),
        "spec": record(
            {
                "resourceClaims": items(
                    record({"name": names, "resourceClaimName": names, "resourceClaimTemplateName": names})
                ),
                "containers": items(container),
                "initContainers": items(container),
                "schedulingGroup": record({"podGroupName": names}),
            }
        ),
        "status": record(
            {
                "resourceClaimStatuses": items(record({"name": names, "resourceClaimName": names})),
                "extendedResourceClaimStatus": record({"resourceClaimName": names}),
            }
        ),
    }
)


def rarely_odd(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly ``strategy``, one draw in twelve something odd."""
    return st.integers(0, 11).flatmap(lambda n: odd if n == 0 else strategy)


good_names = st.sampled_from(["a", "gpu", "", "main"])
usual_names = rarely_odd(good_names)


def usual_items(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return rarely_odd(st.lists(strategy, max_size=3) | st.none())


container_claims = usual_items(
    rarely_odd(st.fixed_dictionaries({"name": usual_names}, optional={"request": usual_names}))
)
usual_container = rarely_odd(
    st.fixed_dictionaries(
        {"name": usual_names, "resources": rarely_odd(st.fixed_dictionaries({"claims": container_claims}))}
    )
    | st.fixed_dictionaries({"name": usual_names})
)
# Pods as the API serves them, now and then with one odd field: most take the inline reading.
usual_pods = st.fixed_dictionaries(
    {
        "metadata": rarely_odd(
            st.fixed_dictionaries({"name": usual_names, "namespace": usual_names, "uid": usual_names})
        ),
        "spec": rarely_odd(
            st.fixed_dictionaries(
                {
                    "resourceClaims": usual_items(
                        rarely_odd(
                            st.fixed_dictionaries(
                                {"name": usual_names},
                                optional={
                                    "resourceClaimName": usual_names,
                                    "resourceClaimTemplateName": usual_names,
                                },
                            )
                        )
                    ),
                    "containers": usual_items(usual_container),
                },
                optional={"initContainers": usual_items(usual_container)},
            )
        ),
    },
    optional={
        "status": rarely_odd(
            st.fixed_dictionaries(
                {},
                optional={
                    "resourceClaimStatuses": usual_items(
                        rarely_odd(
                            st.fixed_dictionaries(
                                {"name": usual_names}, optional={"resourceClaimName": usual_names}
                            )
                        )
                    )
                },
            )
        )
    },
)


def _read(pod: Any) -> tuple[str, Any]:
    try:
        return "view", pod_view(pod)
    except MalformedObjectError as err:
        return "error", str(err)


@SETTINGS
@given(pod=usual_pods | pods)
def test_the_inline_reading_equals_the_general_one(pod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _read(pod)
    with monkeypatch.context() as patch:
        patch.setattr(objects, "_plain_pod_view", lambda pod: None)
        general = _read(pod)
    assert fast == general


def test_a_usual_pod_is_read_inline() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "default", "uid": "u"},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}],
            "containers": [{"name": "main", "resources": {"claims": [{"name": "gpu"}]}}],
        },
        "status": {},
    }
    view = objects._plain_pod_view(pod)
    assert view is not None
    assert view == pod_view(pod)
    assert view.containers[0].claims[0].name == "gpu"
