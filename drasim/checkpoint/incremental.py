"""The checkpoint file's bytes, kept up to date entry by entry.

PURE: no I/O. The kubelet rewrites its whole checkpoint on every change, and encoding
every entry again each time made a write cost ≈ 17 µs per entry. Go's JSON escaping
works character by character, so the encoding of a list is the encodings of its
elements joined by commas, and the ``Data`` string of the envelope is the escaped
forms of those pieces joined the same way. :class:`IncrementalEncoder` therefore keeps,
for every entry, its inner JSON and that JSON's escaped form, and re-encodes only the
entries that changed. Entries are held in sorted blocks: a block caches its joined
pieces and their CRC-32, so a write re-joins one block and combines one CRC per block
(:mod:`drasim.checkpoint.crc`) before copying the bytes out.

``IncrementalEncoder.encode()`` is byte-identical to :func:`drasim.checkpoint.codec.encode`
of the same entries (tests/unit/checkpoint/test_incremental.py checks random edit
sequences against it).
"""

from __future__ import annotations

import bisect
import zlib
from collections.abc import Iterable
from typing import Any

from drasim.checkpoint import crc, gojson
from drasim.checkpoint.codec import LIST_KEY, data_from_items, entry_sort_key, entry_to_json
from drasim.state import ClaimInfoState

__all__ = ["BLOCK_SIZE", "IncrementalEncoder"]

#: Entries per block after a split (a block is split when it holds twice as many).
BLOCK_SIZE = 128

_SortKey = tuple[str, str, str, str]
_COMMA_CRC = zlib.crc32(b",")


def _escaped(text: str) -> bytes:
    """``text`` as it appears inside a Go JSON string (without the quotes), UTF-8."""
    return gojson.go_marshal(text)[1:-1].encode("utf-8")


def _escaped_json(text: str) -> bytes:
    """:func:`_escaped` of a JSON text that :func:`~drasim.checkpoint.gojson.go_marshal` wrote."""
    return gojson.escaped_marshalled(text).encode("utf-8")


class _Block:
    """Consecutive entries in file order, with their joined text cached."""

    __slots__ = ("_crc", "_crc_lead", "_escaped", "_inner", "escaped", "inner", "items", "keys")

    def __init__(
        self,
        keys: list[_SortKey],
        inner: list[bytes],
        escaped: list[bytes],
        items: list[dict[str, Any]],
    ) -> None:
        self.keys = keys
        self.inner = inner
        self.escaped = escaped
        self.items = items
        self._inner: bytes | None = None
        self._escaped: bytes | None = None
        self._crc = self._crc_lead = -1  # -1: not computed yet

    def changed(self) -> None:
        self._inner = self._escaped = None
        self._crc = self._crc_lead = -1

    def inner_text(self) -> bytes:
        """The block's entries' JSON joined by commas."""
        if self._inner is None:
            self._inner = b",".join(self.inner)
        return self._inner

    def crc(self, *, lead: bool) -> int:
        """CRC-32 of the inner text, with a leading comma when ``lead`` (computed once, when asked)."""
        if lead:
            if self._crc_lead < 0:
                self._crc_lead = zlib.crc32(self.inner_text(), _COMMA_CRC)
            return self._crc_lead
        if self._crc < 0:
            self._crc = zlib.crc32(self.inner_text())
        return self._crc

    def escaped_text(self) -> bytes:
        if self._escaped is None:
            self._escaped = b",".join(self.escaped)
        return self._escaped

    def split(self) -> _Block:
        """Move the upper half into a new block (returned)."""
        half = len(self.keys) // 2
        upper = _Block(self.keys[half:], self.inner[half:], self.escaped[half:], self.items[half:])
        del self.keys[half:], self.inner[half:], self.escaped[half:], self.items[half:]
        self.changed()
        return upper


class IncrementalEncoder:
    """Checkpoint bytes for a set of entries keyed by the caller (e.g. ``namespace/name``).

    :meth:`put` adds or replaces the entry under a key, :meth:`remove` drops one, and
    :meth:`encode` returns exactly what :func:`drasim.checkpoint.codec.encode` returns for
    the entries held (sorted as it sorts them), at a cost that depends on the entries
    changed since the last call and on the bytes copied, not on re-encoding the others.
    """

    def __init__(
        self, *, share_id: bool = True, list_key: str = LIST_KEY, block_size: int = BLOCK_SIZE
    ) -> None:
        self.share_id = share_id
        self.list_key = list_key
        self._block_size = max(1, block_size)
        empty = data_from_items([], list_key=list_key)
        assert empty.endswith("[]}")
        prefix, suffix = empty[:-2], empty[-2:]
        self._prefix = prefix.encode("utf-8")
        self._suffix = suffix.encode("utf-8")
        self._escaped_prefix = _escaped(prefix)
        self._escaped_suffix = _escaped(suffix)
        self._head = b'{"Data":"' + self._escaped_prefix
        self._prefix_crc = zlib.crc32(self._prefix)
        self._blocks: list[_Block] = []
        self._firsts: list[_SortKey] = []
        self._where: dict[str, _SortKey] = {}
        # What the previous encode_pieces() computed for the leading blocks, kept while they
        # are unchanged: the pieces (head, block 0, ",", block 1, ...) and, per block, the
        # CRC-32 of the Data text up to and including it. ``_clean`` leading blocks are valid.
        self._pieces: list[bytes] = [self._head]
        self._chain: list[int] = []
        self._clean = 0

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, key: object) -> bool:
        return key in self._where

    # ----- edits -------------------------------------------------------------------------

    def put(self, key: str, state: ClaimInfoState) -> None:
        """Add or replace the entry under ``key``.

        Raises :class:`~drasim.errors.CheckpointError` (before changing anything) when the
        entry cannot be written, as :func:`~drasim.checkpoint.codec.encode` would.
        """
        item = entry_to_json(state, share_id=self.share_id)
        text = gojson.go_marshal(item)
        sort_key: _SortKey = (*entry_sort_key(state), key)
        if key in self._where:
            self.remove(key)
        self._insert(sort_key, text.encode("utf-8"), _escaped_json(text), item)
        self._where[key] = sort_key

    def remove(self, key: str) -> None:
        """Drop the entry under ``key`` (a missing key is a no-op)."""
        sort_key = self._where.pop(key, None)
        if sort_key is None:
            return
        index = self._block_index(sort_key)
        block = self._blocks[index]
        position = bisect.bisect_left(block.keys, sort_key)
        assert block.keys[position] == sort_key
        del block.keys[position], block.inner[position], block.escaped[position], block.items[position]
        self._clean = min(self._clean, index)
        if not block.keys:
            del self._blocks[index], self._firsts[index]
            return
        block.changed()
        if position == 0:
            self._firsts[index] = block.keys[0]

    def update(self, changes: Iterable[tuple[str, ClaimInfoState | None]]) -> None:
        """Apply ``(key, state)`` pairs in order: a state is put, ``None`` removes the key."""
        for key, state in changes:
            if state is None:
                self.remove(key)
            else:
                self.put(key, state)

    def _block_index(self, sort_key: _SortKey) -> int:
        return max(bisect.bisect_right(self._firsts, sort_key) - 1, 0)

    def _insert(self, sort_key: _SortKey, inner: bytes, escaped: bytes, item: dict[str, Any]) -> None:
        if not self._blocks:
            self._blocks.append(_Block([sort_key], [inner], [escaped], [item]))
            self._firsts.append(sort_key)
            self._clean = 0
            return
        index = self._block_index(sort_key)
        self._clean = min(self._clean, index)
        block = self._blocks[index]
        position = bisect.bisect_left(block.keys, sort_key)
        block.keys.insert(position, sort_key)
        block.inner.insert(position, inner)
        block.escaped.insert(position, escaped)
        block.items.insert(position, item)
        block.changed()
        if position == 0:
            self._firsts[index] = sort_key
        if len(block.keys) > 2 * self._block_size:
            upper = block.split()
            self._blocks.insert(index + 1, upper)
            self._firsts.insert(index + 1, upper.keys[0])

    # ----- output ------------------------------------------------------------------------

    def items(self) -> list[dict[str, Any]]:
        """The entries as :func:`~drasim.checkpoint.codec.entry_to_json` dicts, in file order."""
        blocks = self._blocks
        if len(blocks) == 1:
            return blocks[0].items.copy()
        return [item for block in blocks for item in block.items]

    def encode(self) -> bytes:
        """The file bytes (``{"Data":...,"Checksum":...}``) for the entries held."""
        return b"".join(self.encode_pieces())

    def encode_pieces(self) -> list[bytes]:
        """The file bytes as pieces to write one after the other (e.g. with ``os.writev``).

        Their concatenation is :meth:`encode`; a block of unchanged entries is a piece of
        its own, kept between calls, so a write copies no bytes before the kernel does.
        The pieces and running checksums of the blocks before the first changed one are
        reused from the previous call.
        """
        blocks, pieces, chain = self._blocks, self._pieces, self._chain
        clean = min(self._clean, len(blocks))
        del pieces[2 * clean if clean else 1 :], chain[clean:]
        checksum = chain[-1] if chain else self._prefix_crc
        fast = crc.AVAILABLE
        for number in range(clean, len(blocks)):
            block = blocks[number]
            changed = block._inner is None
            inner = block.inner_text()
            if number:
                pieces.append(b",")
            pieces.append(block.escaped_text())
            if changed or not fast:
                # A block re-joined now is read once anyway: its bytes go into the running CRC.
                if number:
                    checksum = zlib.crc32(b",", checksum)
                checksum = zlib.crc32(inner, checksum)
            else:  # an unchanged block after a changed one: its own CRC, combined without a read
                lead = number > 0
                checksum = crc.combine(checksum, block.crc(lead=lead), len(inner) + lead)
            chain.append(checksum)
        self._clean = len(blocks)
        checksum = zlib.crc32(self._suffix, checksum)
        out = pieces.copy()
        out.append(self._escaped_suffix + b'","Checksum":%d}' % checksum)
        return out
