"""``expectCalls`` and ``expectConsistentReplies``: the gRPC calls the kubelet made to plugins.

Every method is taken from the kubelet's side of the journal (``rpc`` events with
``side: kubelet``) when that side journals it: DRA calls always, GetInfo and
NotifyRegistrationStatus from the registration code, NodeWatchResources from the health
stream (one call per stream, when its first report arrives or it ends without one), so
they are counted for any driver. A method that side has not journaled in a run is
counted from the plugin's side (``side: plugin``, the fake plugin's record of every call
it served; health stream messages after the opening are not calls).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from drasim.journal import RpcCall
from drasim.runner.context import StepContext, StepFailure
from drasim.runner.expectations.common import claim_key, grpc_code, plural, settle, similar, window_text
from drasim.runner.expectations.registry import checks
from drasim.scenario.expectations import CallMatch, ExpectCalls, ExpectConsistentReplies

if TYPE_CHECKING:
    from drasim.runner.world import World

DRA_METHODS = ("NodePrepareResources", "NodeUnprepareResources")
ASYNC_METHODS = ("NodeWatchResources", "GetInfo", "NotifyRegistrationStatus")
"""Methods called from the kubelet's own threads: a count below the expected one may still grow."""


@dataclass(frozen=True)
class CallFilter:
    """Which calls of a window an expectation looks at."""

    since: int
    driver: str = ""
    claim: str = ""

    def keep(self, call: RpcCall) -> bool:
        """Whether ``call`` passes the driver and claim filters."""
        if self.driver and call.driver != self.driver:
            return False
        return not self.claim or self.claim in call.claim_keys


def is_stream_message(call: RpcCall) -> bool:
    """A plugin-side record of a message sent on an open stream (not a call)."""
    return bool(call.event.get("stream"))


def calls_of(world: World, method: str, since: int) -> list[RpcCall]:
    """Every call of ``method`` after ``since``, from the side that journals it (see module doc)."""
    kubelet = world.journal.rpc_calls(method, side="kubelet", since_seq=0)
    if getattr(world, "upstream_kubelet", False):
        # --kubelet upstream: its calls are known from the driver's own record only, where
        # upstream's Go client is told from drasim's own registration scan by its user agent.
        plugin = world.journal.rpc_calls(method, side="plugin", since_seq=since)
        return [c for c in plugin if not is_stream_message(c) and c.event.get("client") == "grpc-go"]
    if kubelet or method in DRA_METHODS:
        return [c for c in kubelet if c.seq > since]
    plugin = world.journal.rpc_calls(method, side="plugin", since_seq=since)
    return [c for c in plugin if not is_stream_message(c)]


def describe_call(call: RpcCall) -> str:
    """``#14 NodePrepareResources gpu.example.com claims=[default/a] -> OK``."""
    claims = ", ".join(call.claim_keys)
    text = f"#{call.seq} {call.name} {call.driver}".rstrip()
    if claims:
        text += f" claims=[{claims}]"
    return f"{text} -> {call.code}"


def call_data(call: RpcCall) -> dict[str, Any]:
    """A call as plain data for a YAML diff."""
    data: dict[str, Any] = {"method": call.name, "driver": call.driver}
    if call.claims:
        data["claims"] = call.claim_keys
    data["code"] = grpc_code(call.code)
    return data


def match_data(match: CallMatch) -> dict[str, Any]:
    """A CallMatch as plain data, only the fields that were given."""
    data: dict[str, Any] = {"method": match.method}
    if match.driver:
        data["driver"] = match.driver
    if match.claims is not None:
        data["claims"] = sorted(claim_key(c) for c in match.claims)
    if match.code is not None:
        data["code"] = match.code
    return data


def describe_match(match: CallMatch) -> str:
    """``NodePrepareResources to gpu.example.com claims=[default/a] code=OK``."""
    data = match_data(match)
    text = str(data["method"])
    if "driver" in data:
        text += f" to {data['driver']}"
    if "claims" in data:
        text += f" claims=[{', '.join(data['claims'])}]"
    if "code" in data:
        text += f" code={data['code']}"
    return text


def call_matches(match: CallMatch, call: RpcCall) -> bool:
    """Whether one journaled call satisfies one expected call."""
    if call.name != match.method:
        return False
    if match.driver and call.driver != match.driver:
        return False
    if match.claims is not None and sorted(claim_key(c) for c in match.claims) != sorted(call.claim_keys):
        return False
    return match.code is None or grpc_code(call.code) == grpc_code(match.code)


def _blind_spot(world: World, method: str, flt: CallFilter) -> str:
    """A note when a method is counted from the plugin side but that side journals nothing.

    Real driver processes do not journal the calls they serve, so their GetInfo,
    NotifyRegistrationStatus and NodeWatchResources calls cannot be seen.
    """
    if method in DRA_METHODS or world.journal.rpc_calls(method, side="kubelet"):
        return ""
    served = world.journal.rpc_calls("", side="plugin", driver=flt.driver or None)
    if served:
        return ""
    return f" (no plugin journals its calls: {method} is only observable with the fake plugin)"


def _suffix(args: ExpectCalls, flt: CallFilter, ctx: StepContext) -> str:
    text = f" to {flt.driver}" if flt.driver else ""
    if flt.claim:
        text += f" for claim {flt.claim}"
    return f"{text} {window_text(ctx, args.since)}"


def _counted(world: World, method: str, flt: CallFilter) -> list[RpcCall]:
    return [c for c in calls_of(world, method, flt.since) if flt.keep(c)]


@checks(ExpectCalls)
def check_calls(world: World, args: ExpectCalls, ctx: StepContext) -> None:
    """expectCalls: exact per-method counts and/or the exact sequence of calls."""
    flt = CallFilter(ctx.since(args.since), args.driver, claim_key(args.claim, world) if args.claim else "")
    if args.calls is not None:  # claims as the API server names them (a real cluster's run namespace)
        mapped = [
            replace(m, claims=[claim_key(c, world) for c in m.claims]) if m.claims else m for m in args.calls
        ]
        args = replace(args, calls=mapped)
    counts = args.counts()
    least = {m: n if isinstance(n, int) else (n.at_least or 0) for m, n in counts.items()}
    late = [m for m, n in least.items() if m in ASYNC_METHODS and len(_counted(world, m, flt)) < n]
    if late:
        settle(world, lambda: all(len(_counted(world, m, flt)) >= least[m] for m in late))
    problems: list[str] = []
    expected: dict[str, Any] = {}
    actual: dict[str, Any] = {}
    nearby: dict[int, RpcCall] = {}
    for method, count in counts.items():
        calls = _counted(world, method, flt)
        expected[method] = count if isinstance(count, int) else count.describe()
        actual[method] = len(calls)
        ok = len(calls) == count if isinstance(count, int) else count.holds(len(calls))
        if not ok:
            wanted = (
                plural(count, method + " call")
                if isinstance(count, int)
                else f"{count.describe()} {method} calls"
            )
            problems.append(
                f"expected {wanted}{_suffix(args, flt, ctx)}; found {len(calls)}"
                + _blind_spot(world, method, flt)
            )
            nearby.update((c.seq, c) for c in calls_of(world, method, flt.since))
    if args.calls is not None:
        sequence_problem = _check_sequence(world, args, flt, ctx)
        if sequence_problem is not None:
            message, expected["calls"], actual["calls"], near = sequence_problem
            problems.append(message)
            nearby.update((c.seq, c) for c in near)
    if problems:
        events = [dict(nearby[seq].event) for seq in sorted(nearby)]
        raise StepFailure("; ".join(problems), expected=expected, actual=actual, similar=similar(events))


def _check_sequence(
    world: World, args: ExpectCalls, flt: CallFilter, ctx: StepContext
) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]], list[RpcCall]] | None:
    """Compare the window's calls (driver, claim and the listed methods) with ``calls``."""
    assert args.calls is not None
    methods = sorted({m.method for m in args.calls})
    calls = sorted(
        (c for m in methods for c in calls_of(world, m, flt.since) if flt.keep(c)), key=lambda c: c.seq
    )
    expected = [match_data(m) for m in args.calls]
    actual = [call_data(c) for c in calls]
    where = _suffix(args, flt, ctx)
    if len(calls) != len(args.calls):
        listed = "; ".join(describe_call(c) for c in calls) or "none"
        message = (f"expected {plural(len(args.calls), 'call')} of {', '.join(methods)}{where}; "
                   f"found {len(calls)}: {listed}")  # fmt: skip
        return message, expected, actual, calls
    if args.ordered:
        for index, (match, call) in enumerate(zip(args.calls, calls, strict=True), start=1):
            if not call_matches(match, call):
                message = (f"call {index}{where}: expected {describe_match(match)}; "
                           f"found {describe_call(call)}")  # fmt: skip
                return message, expected, actual, calls
        return None
    unmatched = _unmatched(args.calls, calls)
    if unmatched is None:
        return None
    index, match = unmatched
    listed = "; ".join(describe_call(c) for c in calls)
    message = (f"expected call {index + 1} ({describe_match(match)}){where} in any order; "
               f"no call left matches it among: {listed}")  # fmt: skip
    return message, expected, actual, calls


def _unmatched(matches: list[CallMatch], calls: list[RpcCall]) -> tuple[int, CallMatch] | None:
    """Pair every expected call with a distinct journaled call (bipartite matching).

    Returns the first expected call left without a partner, or ``None`` when all pair up.
    """
    partner: dict[int, int] = {}  # call index -> match index

    def place(m: int, seen: set[int]) -> bool:
        for c, call in enumerate(calls):
            if c in seen or not call_matches(matches[m], call):
                continue
            seen.add(c)
            if c not in partner or place(partner[c], seen):
                partner[c] = m
                return True
        return False

    for m, match in enumerate(matches):
        if not place(m, set()):
            return m, match
    return None


# --------------------------------------------------------------------- consistent replies


def _devices_of(call: RpcCall, key: str) -> list[dict[str, Any]] | None:
    """The devices a successful reply carried for the claim ``key``; ``None`` when it did not."""
    if not call.ok:
        return None
    results = call.claim_results
    for ref in call.claims:
        if f"{ref.namespace}/{ref.name}" != key:
            continue
        entry = results.get(ref.uid)
        if not isinstance(entry, dict) or entry.get("error"):
            return None
        return [_device(d) for d in entry.get("devices") or [] if isinstance(d, dict)]
    return None


def _device(raw: dict[str, Any]) -> dict[str, Any]:
    """The compared fields of one device; ``null`` and empty lists are the same."""
    return {
        "pool": raw.get("pool_name", raw.get("poolName", "")),
        "device": raw.get("device_name", raw.get("deviceName", "")),
        "requests": list(raw.get("request_names", raw.get("requestNames")) or []),
        "cdiIDs": list(raw.get("cdi_device_ids", raw.get("cdiDeviceIds")) or []),
        "shareID": raw.get("share_id", raw.get("shareId")) or None,
    }


@checks(ExpectConsistentReplies)
def check_consistent_replies(world: World, args: ExpectConsistentReplies, ctx: StepContext) -> None:
    """expectConsistentReplies: every successful prepare reply for the claim had the same devices."""
    key = claim_key(args.claim, world)
    since = ctx.since(args.since)
    calls = [
        c
        for c in world.journal.rpc_calls("NodePrepareResources", side="kubelet", since_seq=since)
        if (not args.driver or c.driver == args.driver) and key in c.claim_keys
    ]
    replies = [(c, d) for c in calls if (d := _devices_of(c, key)) is not None]
    where = f"for claim {key}" + (f" from {args.driver}" if args.driver else "")
    where += f" {window_text(ctx, args.since)}"
    events = similar(_events(calls))
    if len(replies) < args.at_least:
        raise StepFailure(
            f"expected at least {plural(args.at_least, 'successful reply', 'successful replies')} "
            f"to NodePrepareResources {where}; "
            f"found {len(replies)} (of {plural(len(calls), 'call')})",
            expected={"replies": args.at_least},
            actual={"replies": len(replies), "calls": len(calls)},
            similar=events,
        )
    first_call, first = replies[0]
    for call, devices in replies[1:]:
        if devices != first:
            raise StepFailure(
                f"expected every successful NodePrepareResources reply {where} to carry the same "
                f"devices; reply #{call.seq} differs from reply #{first_call.seq}",
                expected={f"#{first_call.seq}": first},
                actual={f"#{call.seq}": devices},
                similar=similar(_events([first_call, call])),
            )


def _events(calls: Iterable[RpcCall]) -> list[dict[str, Any]]:
    return [dict(c.event) for c in calls]
