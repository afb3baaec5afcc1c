"""Every deliberate bug is observable over the wire (so the conformance suite can catch it)."""

from __future__ import annotations

from fake_plugins import BUGS, Behaviour


def buggy(*bugs: str, faults: list[dict] | None = None) -> Behaviour:
    return Behaviour.from_dict({"bugs": list(bugs), "faults": faults or []})


def test_every_bug_has_a_test_here():
    tested = {name.removeprefix("test_").replace("_", "-") for name in globals() if name.startswith("test_")}
    assert set(BUGS) <= tested


def test_non_idempotent(make_driver, wire, claim):
    driver = make_driver(behaviour=buggy("non-idempotent"))
    c = claim("gpu", "uid-1")
    w = wire(driver)
    first, second = (w.devices(w.prepare(c), "uid-1") for _ in range(2))
    assert first != second
    assert first[0][3] != second[0][3]  # new CDI IDs
    assert first[0][2] == second[0][2] == "gpu-0"


def test_forgets_state(make_driver, wire, claim, env):
    driver = make_driver(behaviour=buggy("forgets-state"))
    c = claim("gpu", "uid-1")
    wire(driver).prepare(c)
    assert not (env.plugin / "prepared-claims").exists()
    driver.restart()
    assert driver.prepared_claims() == {}
    assert wire(driver).unprepare(c).claims["uid-1"].error == ""
    assert env.cdi_files() == ["gpu.example.com-claim_uid-1.json"]  # leaked


def test_drops_claim(make_driver, wire, claim):
    driver = make_driver(behaviour=buggy("drops-claim"))
    a = claim("a", "uid-a", (("gpu", "gpu-0"),))
    b = claim("b", "uid-b", (("gpu", "gpu-1"),))
    assert list(wire(driver).prepare(a, b).claims) == ["uid-a"]
    assert set(driver.prepared_claims()) == {"uid-a", "uid-b"}


def test_ignores_claim_errors(make_driver, wire, claim):
    faults = [{"rpc": "NodePrepareResources", "error": "device on fire"}]
    driver = make_driver(behaviour=buggy("ignores-claim-errors", faults=faults))
    c = claim("gpu", "uid-1")
    reply = wire(driver).prepare(c)
    assert reply.claims["uid-1"].error == ""
    assert list(reply.claims["uid-1"].devices) == []


def test_duplicate_cdi_ids(make_driver, wire, claim):
    driver = make_driver(behaviour=buggy("duplicate-cdi-ids"))
    c = claim("gpu", "uid-1")
    w = wire(driver)
    (device,) = w.devices(w.prepare(c), "uid-1")
    assert device[3] == ("gpu.example.com/gpu=gpu-0", "gpu.example.com/gpu=gpu-0")


def test_no_cdi_spec(make_driver, wire, claim, env):
    driver = make_driver(behaviour=buggy("no-cdi-spec"))
    c = claim("gpu", "uid-1")
    reply = wire(driver).prepare(c)
    assert reply.claims["uid-1"].devices[0].cdi_device_ids == ["gpu.example.com/gpu=gpu-0"]
    assert env.cdi_files() == []


def test_double_allocates(make_driver, wire, claim):
    driver = make_driver(behaviour=buggy("double-allocates"))
    a = claim("a", "uid-a", (("gpu", "gpu-0"),))
    b = claim("b", "uid-b", (("gpu", "gpu-0"),))
    reply = wire(driver).prepare(a, b)
    assert reply.claims["uid-a"].error == reply.claims["uid-b"].error == ""
    assert reply.claims["uid-b"].devices[0].device_name == "gpu-0"
    assert set(driver.prepared_claims()) == {"uid-a", "uid-b"}
