"""Label and field selectors, parsed from their query-string form.

Label selectors support ``=``, ``==``, ``!=``, ``in``, ``notin``, ``key`` (exists)
and ``!key`` (does not exist), comma separated, as ``k8s.io/apimachinery/pkg/labels``.
Field selectors support ``=``, ``==`` and ``!=`` on the keys each resource
declares; any other key is a 400 "field label not supported", as upstream.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from drasim.apiserver.status import bad_request

_IN_RE = re.compile(r"^\s*([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


@dataclass(frozen=True)
class Requirement:
    """One clause: ``key op values``; ``op`` is one of =, !=, in, notin, exists, !exists."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies this clause."""
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op in ("=", "in"):
            return present and value in self.values
        # != and notin also match objects that lack the key, as upstream.
        return value not in self.values


def _split_clauses(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            out.append("".join(current))
            current = []
        else:
            current.append(char)
    out.append("".join(current))
    return [c.strip() for c in out if c.strip()]


def _parse_label_clause(clause: str) -> Requirement:
    match = _IN_RE.match(clause)
    if match:
        values = tuple(v.strip() for v in match.group(3).split(",") if v.strip())
        return Requirement(match.group(1), match.group(2), values)
    for op, norm in (("!=", "!="), ("==", "="), ("=", "=")):
        if op in clause:
            key, _, value = clause.partition(op)
            key, value = key.strip(), value.strip()
            if not key or any(c in value for c in "=!() "):
                break
            return Requirement(key, norm, (value,))
    else:
        if clause.startswith("!"):
            key = clause[1:].strip()
            if key and _is_key(key):
                return Requirement(key, "!exists")
        elif _is_key(clause):
            return Requirement(clause, "exists")
    raise bad_request(f"unable to parse requirement: {clause!r} is not a valid label selector clause")


def _is_key(text: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][-A-Za-z0-9_./]*", text))


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        """Parse ``a=b,c in (x,y),!d``; raises a 400 StatusError on bad syntax."""
        if not text:
            return cls()
        return cls(tuple(_parse_label_clause(c) for c in _split_clauses(text)))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether the object's ``metadata.labels`` satisfy every clause."""
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(r.matches(labels) for r in self.requirements)


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector: ``(path, op, value)`` clauses with op ``=`` or ``!=``."""

    clauses: tuple[tuple[str, str, str], ...] = ()

    @classmethod
    def parse(cls, text: str | None, allowed: tuple[str, ...]) -> FieldSelector:
        """Parse ``spec.driver=x,spec.nodeName!=y``; unknown keys give upstream's 400."""
        if not text:
            return cls()
        clauses = []
        for clause in _split_clauses(text):
            for op in ("!=", "==", "="):
                if op in clause:
                    key, _, value = clause.partition(op)
                    key = key.strip()
                    norm = "!=" if op == "!=" else "="
                    break
            else:
                raise bad_request(f"invalid field selector: {clause!r}: expected key=value or key!=value")
            if key not in allowed:
                raise bad_request(f"field label not supported: {key}")
            clauses.append((key, norm, value.strip()))
        return cls(tuple(clauses))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether every clause holds; a missing field compares as the empty string."""
        for path, op, value in self.clauses:
            actual = field_value(obj, path)
            if (actual == value) != (op == "="):
                return False
        return True


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string form of a dotted field path, as Kubernetes' field sets hold it."""
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return ""
        current = current.get(part)
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


Predicate = Callable[[Mapping[str, Any]], bool]


def predicate(labels: LabelSelector, fields: FieldSelector) -> Predicate:
    """One callable that applies both selectors."""
    return lambda obj: labels.matches(obj) and fields.matches(obj)
