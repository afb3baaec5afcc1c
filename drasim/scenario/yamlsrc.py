"""YAML parsing that remembers where every value was written.

:class:`LineLoader` is a :class:`yaml.SafeLoader` (safe construction only) whose mappings
and sequences are :class:`YMap` / :class:`YList`: plain ``dict`` / ``list`` subclasses that
also carry the 1-based line and column of themselves, of each key and of each value.
Duplicate keys, which PyYAML silently overwrites, are recorded as problems.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from drasim.limits import MAX_DECODED_VALUES


@dataclass(frozen=True, order=True)
class Loc:
    """A position in a file (1-based line and column)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class YMap(dict[Any, Any]):
    """A mapping with positions: ``loc`` (the mapping), ``key_locs`` and ``value_locs`` per key."""

    loc: Loc
    key_locs: dict[Any, Loc]
    value_locs: dict[Any, Loc]


class YList(list[Any]):
    """A sequence with positions: ``loc`` and ``item_locs`` (one per item)."""

    loc: Loc
    item_locs: list[Loc]


def _mark_loc(file: str, mark: Any) -> Loc:
    return Loc(file, mark.line + 1, mark.column + 1)


class LineLoader(yaml.SafeLoader):
    """SafeLoader that builds :class:`YMap`/:class:`YList` and records duplicate keys."""

    def __init__(self, stream: str, file: str = "<string>") -> None:
        super().__init__(stream)
        self.file = file
        self.duplicate_keys: list[tuple[Loc, str]] = []
        self.nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Compose as PyYAML does, counting nodes: a file of more than ``MAX_DECODED_VALUES``
        stops here, before it is built into Python objects (aliases count once)."""
        self.nodes += 1
        if self.nodes > MAX_DECODED_VALUES:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"the file is too large: more than {MAX_DECODED_VALUES} values",
                self.peek_event().start_mark,  # type: ignore[no-untyped-call]
            )
        return super().compose_node(parent, index)

    def construct_ymap(self, node: yaml.MappingNode) -> YMap:
        """Build a positioned mapping (merge keys ``<<`` are honoured)."""
        self.flatten_mapping(node)
        data = YMap()
        data.loc = _mark_loc(self.file, node.start_mark)
        data.key_locs = {}
        data.value_locs = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found an unhashable key",
                    key_node.start_mark,
                ) from None
            if key in data:
                self.duplicate_keys.append((_mark_loc(self.file, key_node.start_mark), str(key)))
            data[key] = self.construct_object(value_node, deep=True)
            data.key_locs[key] = _mark_loc(self.file, key_node.start_mark)
            data.value_locs[key] = _mark_loc(self.file, value_node.start_mark)
        return data

    def construct_ylist(self, node: yaml.SequenceNode) -> YList:
        """Build a positioned sequence."""
        data = YList()
        data.loc = _mark_loc(self.file, node.start_mark)
        data.item_locs = []
        for child in node.value:
            data.append(self.construct_object(child, deep=True))
            data.item_locs.append(_mark_loc(self.file, child.start_mark))
        return data


def _construct_int(loader: LineLoader, node: yaml.ScalarNode) -> Any:
    """PyYAML's int constructor, with Python's digit limit reported as a YAML problem, not ValueError."""
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError as err:
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot read the integer: {err}", node.start_mark
        ) from None


LineLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
LineLoader.add_constructor("tag:yaml.org,2002:map", LineLoader.construct_ymap)
LineLoader.add_constructor("tag:yaml.org,2002:seq", LineLoader.construct_ylist)


@dataclass(frozen=True)
class Document:
    """One YAML document of a file, with where it starts."""

    data: Any
    loc: Loc


def parse_documents(text: str, file: str) -> tuple[list[Document], list[tuple[Loc, str]]]:
    """Parse every document of ``text``. Returns the documents and the duplicate-key problems.

    Raises :class:`yaml.YAMLError` on a syntax error (the caller turns it into a problem).
    """
    loader = LineLoader(text, file)
    documents: list[Document] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # pragma: no cover - check_node said there is one
                break
            data = loader.construct_document(node)
            documents.append(Document(data, _mark_loc(file, node.start_mark)))
    finally:
        loader.dispose()
    return documents, loader.duplicate_keys


def yaml_error_loc(err: yaml.YAMLError, file: str) -> tuple[Loc, str]:
    """Where a YAML error happened and a one-line description of it."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    loc = _mark_loc(file, mark) if mark is not None else Loc(file, 1, 1)
    problem = getattr(err, "problem", None)
    context = getattr(err, "context", None)
    if problem:
        text = f"{context} {problem}" if context else str(problem)
    else:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return loc, f"YAML syntax error: {' '.join(text.split())}"
