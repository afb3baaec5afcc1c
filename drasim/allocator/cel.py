"""A small, documented subset of the CEL used in DRA device selectors.

Two maintained CEL libraries install from PyPI, cel-python (``celpy``, pure Python)
and common-expression-language (``cel``, Rust bindings). docs/allocator.md has the
evaluation against the selectors our scenarios and tests use; in short, neither
brings the Kubernetes CEL library (``quantity()``, ``semver()``, ``compareTo``, ...,
``cel.bind``) so adapters would be needed either way, cel-python evaluates a
selector 100-200x slower than this module (0.7-2.8 ms per device), the Rust one
spends 0.3-0.5 ms per device converting the device into its values and makes an
unknown attribute domain an error instead of an empty map, and they add 13 MB
and 42 MB of dependencies. What they would add (``exists``, ``size``, ``matches``,
arithmetic) no selector here uses, so drasim parses selectors itself.
Supported (see docs/allocator.md for examples):

* the variable ``device`` with ``.driver``, ``.allowMultipleAllocations``,
  ``.attributes["domain"].name`` and ``.capacity["domain"].name`` (also
  ``["name"]`` instead of ``.name``); an unqualified attribute belongs to the
  driver's own domain, as upstream;
* literals: strings (single or double quotes), integers, ``true``/``false``;
* ``quantity("10Gi")`` and ``semver("1.2.3")``, with ``.compareTo(x)``,
  ``.isGreaterThan(x)``, ``.isLessThan(x)`` on quantities and versions;
* string methods ``startsWith``, ``endsWith``, ``contains``;
* ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``"name" in <domain map>``,
  ``!``, ``&&``, ``||`` (short-circuit) and parentheses.

Anything else raises ``AllocationError("selector not supported: <expr>")``. As
in upstream CEL, referring to an attribute a device does not have is an error
(guard with ``device.driver == "..." &&`` or ``"name" in ...``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from drasim.allocator.errors import AllocationError
from drasim.allocator.quantity import parse_quantity

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<int>\d+)
    | (?P<op>==|!=|<=|>=|&&|\|\||[<>!().\[\],])
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)


#: The methods of the subset: string tests, and comparisons of quantities and versions.
METHODS = frozenset({"startsWith", "endsWith", "contains", "compareTo", "isGreaterThan", "isLessThan"})


class _UnsupportedError(Exception):
    """Raised inside the parser; turned into AllocationError with the whole expression."""


class SelectorRuntimeError(Exception):
    """Evaluation failed for one device (e.g. a missing attribute)."""


@dataclass(frozen=True, order=True)
class Quantity:
    """A capacity value; compares exactly."""

    value: Fraction


@dataclass(frozen=True)
class Semver:
    """A semantic version with semver precedence rules."""

    text: str

    def key(self) -> tuple[Any, ...]:
        core, _, pre = self.text.split("+", 1)[0].partition("-")
        parts = core.split(".")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise SelectorRuntimeError(f"invalid semantic version {self.text!r}")
        ident = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")) if pre else ()
        return (*map(int, parts), 0 if pre else 1, ident)


@dataclass(frozen=True)
class _Domain:
    """``device.attributes["dom"]`` or ``device.capacity["dom"]``."""

    values: Mapping[str, Any]
    what: str

    def get(self, name: str) -> Any:
        if name not in self.values:
            raise SelectorRuntimeError(f"no such key: {self.what}.{name}")
        return self.values[name]


# --------------------------------------------------------------------------- parser

Node = tuple[Any, ...]


def _tokens(expr: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(expr):
        if expr[pos:].strip() == "":
            break
        match = _TOKEN.match(expr, pos)
        if match is None or match.end() == pos:
            raise _UnsupportedError(expr[pos:])
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, expr: str) -> None:
        self.toks = _tokens(expr)
        self.pos = 0

    def peek(self) -> str | None:
        return self.toks[self.pos][1] if self.pos < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.toks):
            raise _UnsupportedError("unexpected end")
        tok = self.toks[self.pos]
        if want is not None and tok[1] != want:
            raise _UnsupportedError(f"expected {want}, got {tok[1]}")
        self.pos += 1
        return tok

    def parse(self) -> Node:
        node = self.or_()
        if self.pos != len(self.toks):
            raise _UnsupportedError(f"unexpected {self.peek()}")
        return node

    def or_(self) -> Node:
        node = self.and_()
        while self.peek() == "||":
            self.take()
            node = ("or", node, self.and_())
        return node

    def and_(self) -> Node:
        node = self.unary()
        while self.peek() == "&&":
            self.take()
            node = ("and", node, self.unary())
        return node

    def unary(self) -> Node:
        if self.peek() == "!":
            self.take()
            return ("not", self.unary())
        return self.compare()

    def compare(self) -> Node:
        left = self.postfix()
        op = self.peek()
        if op in ("==", "!=", "<", "<=", ">", ">=", "in"):
            self.take()
            return ("cmp", op, left, self.postfix())
        return left

    def postfix(self) -> Node:
        node = self.primary()
        while self.peek() in (".", "["):
            if self.take()[1] == "[":
                key = self.or_()
                self.take("]")
                node = ("index", node, key)
                continue
            kind, name = self.take()
            if kind != "ident":
                raise _UnsupportedError(name)
            call = self.peek() == "("
            if call and name not in METHODS:  # e.g. matches(): outside the subset, say so up front
                raise _UnsupportedError(name)
            node = ("call", name, node, self.args()) if call else ("field", node, name)
        return node

    def args(self) -> list[Node]:
        self.take("(")
        out: list[Node] = []
        while self.peek() != ")":
            out.append(self.or_())
            if self.peek() == ",":
                self.take()
        self.take(")")
        return out

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "str":
            return ("lit", _unquote(text))
        if kind == "int":
            return ("lit", int(text))
        if text == "(":
            node = self.or_()
            self.take(")")
            return node
        if kind == "ident" and text in ("true", "false"):
            return ("lit", text == "true")
        if kind == "ident" and text == "device":
            return ("device",)
        if kind == "ident" and text in ("quantity", "semver") and self.peek() == "(":
            return ("call", text, None, self.args())
        raise _UnsupportedError(text)


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


@dataclass(frozen=True)
class Selector:
    """A parsed selector expression; call :meth:`matches` per device."""

    expression: str
    tree: Node

    def matches(self, device: Mapping[str, Any]) -> bool:
        """Whether the device (see :func:`device_env`) satisfies the expression."""
        result = _eval(self.tree, device)
        if not isinstance(result, bool):
            raise SelectorRuntimeError(f"expression evaluated to {result!r}, not a boolean")
        return result


def compile_selector(expression: str) -> Selector:
    """Parse a CEL selector, or raise ``AllocationError("selector not supported: ...")``."""
    try:
        tree = _Parser(expression).parse()
    except _UnsupportedError:
        raise AllocationError(f"selector not supported: {expression}") from None
    return Selector(expression, tree)


# --------------------------------------------------------------------------- evaluation


def device_env(driver: str, device: Mapping[str, Any]) -> dict[str, Any]:
    """The CEL ``device`` variable for a ResourceSlice device entry."""
    attributes: dict[str, dict[str, Any]] = {}
    for key, attr in (device.get("attributes") or {}).items():
        domain, name = _split(key, driver)
        attributes.setdefault(domain, {})[name] = _attribute_value(attr)
    capacity: dict[str, dict[str, Any]] = {}
    for key, cap in (device.get("capacity") or {}).items():
        domain, name = _split(key, driver)
        capacity.setdefault(domain, {})[name] = Quantity(parse_quantity(str(cap.get("value", "0"))))
    return {
        "driver": driver,
        "attributes": attributes,
        "capacity": capacity,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations", False)),
    }


def _split(key: str, driver: str) -> tuple[str, str]:
    domain, _, name = key.rpartition("/")
    return (domain or driver), name


def _attribute_value(attr: Mapping[str, Any]) -> Any:
    if "version" in attr:
        return Semver(attr["version"])
    for kind in ("int", "bool", "string"):
        if kind in attr:
            return attr[kind]
    return None


def _eval(node: Node, device: Mapping[str, Any]) -> Any:  # noqa: PLR0911
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "device":
        return device
    if op == "and":
        return _truth(_eval(node[1], device)) and _truth(_eval(node[2], device))
    if op == "or":
        return _truth(_eval(node[1], device)) or _truth(_eval(node[2], device))
    if op == "not":
        return not _truth(_eval(node[1], device))
    if op == "cmp":
        return _compare(node[1], _eval(node[2], device), _eval(node[3], device))
    if op == "field":
        return _field(_eval(node[1], device), node[2])
    if op == "index":
        return _index(_eval(node[1], device), _eval(node[2], device))
    target = None if node[2] is None else _eval(node[2], device)
    return _call(node[1], target, [_eval(a, device) for a in node[3]])


def _truth(value: Any) -> bool:
    if not isinstance(value, bool):
        raise SelectorRuntimeError(f"expected a boolean, got {value!r}")
    return value


def _field(value: Any, name: str) -> Any:
    if isinstance(value, _Domain):
        return value.get(name)
    if isinstance(value, Mapping) and "driver" in value and "attributes" in value:
        if name not in ("driver", "attributes", "capacity", "allowMultipleAllocations"):
            raise SelectorRuntimeError(f"no such field: device.{name}")
        return value[name]
    raise SelectorRuntimeError(f"cannot select field {name!r} of {value!r}")


def _index(value: Any, key: Any) -> Any:
    if isinstance(value, _Domain):
        return value.get(str(key))
    if isinstance(value, Mapping) and isinstance(key, str):
        # device.attributes / device.capacity: an unknown domain is an empty map.
        return _Domain(value.get(key, {}), key)
    raise SelectorRuntimeError(f"cannot index {value!r} with {key!r}")


def _ordered(value: Any) -> Any:
    if isinstance(value, Semver):
        return value.key()
    if isinstance(value, Quantity):
        return value.value
    return value


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "in":
        if isinstance(right, _Domain):
            return str(left) in right.values
        raise SelectorRuntimeError(f"'in' needs a map on the right, got {right!r}")
    if op == "==":
        return bool(type(left) is type(right) and left == right)
    if op == "!=":
        return not (type(left) is type(right) and left == right)
    if type(left) is not type(right) or isinstance(left, bool):
        raise SelectorRuntimeError(f"cannot compare {left!r} {op} {right!r}")
    a, b = _ordered(left), _ordered(right)
    checks: dict[str, Callable[[Any, Any], bool]] = {
        "<": lambda x, y: x < y,
        "<=": lambda x, y: x <= y,
        ">": lambda x, y: x > y,
        ">=": lambda x, y: x >= y,
    }
    return checks[op](a, b)


def _call(name: str, target: Any, args: list[Any]) -> Any:
    if target is None:
        if len(args) != 1 or not isinstance(args[0], str):
            raise SelectorRuntimeError(f"{name}() takes one string")
        if name == "quantity":
            try:
                return Quantity(parse_quantity(args[0]))
            except AllocationError as exc:
                raise SelectorRuntimeError(str(exc)) from None
        return Semver(args[0])
    if isinstance(target, str) and name in ("startsWith", "endsWith", "contains") and len(args) == 1:
        arg = args[0]
        if not isinstance(arg, str):
            raise SelectorRuntimeError(f"{name}() needs a string")
        return {
            "startsWith": target.startswith,
            "endsWith": target.endswith,
            "contains": target.__contains__,
        }[name](arg)
    if isinstance(target, Quantity | Semver) and len(args) == 1 and type(args[0]) is type(target):
        a, b = _ordered(target), _ordered(args[0])
        order = (a > b) - (a < b)
        methods = {"compareTo": order, "isGreaterThan": order > 0, "isLessThan": order < 0}
        if name in methods:
            return methods[name]
    raise SelectorRuntimeError(f"unsupported call {name}() on {target!r}")
