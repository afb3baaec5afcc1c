"""The fake driver's state file: kept-per-claim text gives the bytes of a full rewrite."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drasim.values import Device
from fake_plugins.files import dumps_indented
from fake_plugins.state import DriverState, PreparedClaim

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

text = st.text(alphabet=st.sampled_from(["a", "b", "<", '"', "\\", "\n", "é", "😀"]), max_size=3)
device = st.builds(
    Device,
    pool_name=st.sampled_from(["p", "q"]),
    device_name=st.sampled_from(["d1", "d2", "d3"]),
    request_names=st.lists(text, max_size=2).map(tuple),
    cdi_device_ids=st.lists(text, max_size=2).map(tuple),
    share_id=st.none() | st.sampled_from(["s1", "s2"]),
)
claim = st.builds(PreparedClaim, namespace=text, name=text, devices=st.lists(device, max_size=2).map(tuple))
uids = st.sampled_from(["u1", "u2", "u3", "u4", "é", "<"])
edit = st.one_of(
    st.tuples(st.just("set"), uids, claim),
    st.tuples(st.just("pop"), uids),
    st.tuples(st.just("del"), uids),
    st.tuples(st.just("update"), st.dictionaries(uids, claim, max_size=2)),
    st.tuples(st.just("setdefault"), uids, claim),
    st.tuples(st.just("clear")),
    st.tuples(st.just("save")),
)


def _full(state: DriverState) -> bytes:
    return (json.dumps(state.to_json(), indent=2, sort_keys=True) + "\n").encode()


def _holder(state: DriverState, pool: str, name: str, share: str | None, except_uid: str) -> str | None:
    for uid, prepared in dict.items(state.claims):
        if uid != except_uid and any(
            (d.pool_name, d.device_name, d.share_id) == (pool, name, share) for d in prepared.devices
        ):
            return uid
    return None


@SETTINGS
@given(st.lists(edit, max_size=30))
def test_saved_bytes_and_device_index_match_a_full_recomputation(tmp_path_factory, edits) -> None:
    path = tmp_path_factory.mktemp("driver") / "checkpoint.json"
    state = DriverState("gpu.example.com", path, sync=False)
    for step in edits:
        kind = step[0]
        if kind == "set":
            state.claims[step[1]] = step[2]
        elif kind == "pop":
            state.claims.pop(step[1], None)
        elif kind == "del":
            with pytest.raises(KeyError) if step[1] not in state.claims else contextlib.nullcontext():
                del state.claims[step[1]]
        elif kind == "update":
            state.claims.update(step[1])
        elif kind == "setdefault":
            state.claims.setdefault(step[1], step[2])
        elif kind == "clear":
            state.claims.clear()
        else:
            state.save()
            assert path.read_bytes() == _full(state)
            assert DriverState.load("gpu.example.com", path).claims == state.claims
        assert state.encode() == _full(state)
        for pool in ("p", "q"):
            for name in ("d1", "d2", "d3"):
                for share in (None, "s1", "s2"):
                    for uid in ("u1", "none"):
                        expected = _holder(state, pool, name, share, uid)
                        assert state.holder_of(pool, name, share, except_uid=uid) == expected


def test_pop_without_default_raises_like_a_dict() -> None:
    state = DriverState("gpu.example.com", None)
    with pytest.raises(KeyError):
        state.claims.pop("missing")
    state.claims["u"] = PreparedClaim("ns", "n", ())
    assert state.claims.popitem() == ("u", PreparedClaim("ns", "n", ()))
    assert state.encode() == _full(state)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


@SETTINGS
@given(json_values)
def test_dumps_indented_is_json_dumps_indent_2_sorted(value) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True)


def test_dumps_indented_falls_back_for_what_it_does_not_write_itself() -> None:
    class Text(str):
        pass

    for value in ({1: "a", 2: "b"}, {"k": 1.5}, [Text("x")], {"n": True, "m": [None, -3]}):
        assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True)
