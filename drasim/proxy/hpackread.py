"""A lean HPACK decoder (RFC 7541) for the splice's frame reader (:mod:`drasim.proxy.h2`).

``hpack.Decoder`` builds a named tuple and logs a debug line per field, which is a quarter of
its time on the kubelet's header blocks; a bystander needs the fields as bytes and nothing
else. This decoder reads the same representations into the same ``hpack`` dynamic table
(``hpack.table.HeaderTable``, with ``hpack``'s integer and Huffman decoding), so its results
and table match ``hpack.Decoder``'s block for block (tests/unit/proxy/test_hpackread.py checks
that against ``hpack.Encoder``'s output). Huffman-coded strings repeat (names, most values):
they are decoded once and looked up. PURE: no I/O.
"""

from __future__ import annotations

from hpack import HPACKError
from hpack.hpack import decode_integer  # the integer representation (RFC 7541 5.1)
from hpack.huffman_table import decode_huffman
from hpack.table import HeaderTable

HUFFMAN_CACHE = 256
"""Decoded Huffman strings kept (the cache is emptied when full)."""


class HpackReadError(Exception):
    """A header block that does not decode."""


class HpackReader:
    """One direction's HPACK decoding state: blocks must be read in the order they were sent."""

    def __init__(self, max_table_size: int, max_list_size: int) -> None:
        self.table = HeaderTable()
        self.max_table_size = max_table_size
        """The largest dynamic table the sender may ask for."""
        self.max_list_size = max_list_size
        """The largest decoded header list (RFC 7541's size: names, values, 32 per field)."""
        self._huffman: dict[bytes, bytes] = {}

    def decode(self, block: bytes) -> list[tuple[bytes, bytes]]:
        """The fields of ``block``, in order; the table changes as the block says."""
        try:
            return self._decode(block, memoryview(block))
        except HPACKError as err:  # an integer or Huffman code cut short, an index out of the table
            raise HpackReadError(str(err)) from None

    def _decode(self, block: bytes, view: memoryview) -> list[tuple[bytes, bytes]]:
        fields: list[tuple[bytes, bytes]] = []
        table = self.table
        size = 0
        i, end = 0, len(block)
        while i < end:
            first = block[i]
            if first & 0x80:  # indexed field
                index, used = decode_integer(view[i:], 7)
                field = table.get_by_index(index)
                i += used
            elif first & 0x40:  # literal, added to the table
                field, i = self._literal(block, view, i, 6)
                table.add(*field)
            elif first & 0x20:  # dynamic table size update
                if fields:
                    raise HpackReadError("a table size update after a field")
                new_size, used = decode_integer(view[i:], 5)
                if new_size > self.max_table_size:
                    raise HpackReadError(f"a table size of {new_size}, more than {self.max_table_size}")
                table.maxsize = new_size
                i += used
                continue
            else:  # literal, not added (never indexed: the same for a reader)
                field, i = self._literal(block, view, i, 4)
            fields.append(field)
            size += len(field[0]) + len(field[1]) + 32
            if size > self.max_list_size:
                raise HpackReadError(f"a header list larger than {self.max_list_size} bytes")
        return fields

    def _literal(
        self, block: bytes, view: memoryview, i: int, prefix: int
    ) -> tuple[tuple[bytes, bytes], int]:
        if block[i] & ((1 << prefix) - 1):  # the name by index
            index, used = decode_integer(view[i:], prefix)
            name = table_name = self.table.get_by_index(index)[0]
            i += used
        else:
            name, i = self._string(block, view, i + 1)
            table_name = name
        value, i = self._string(block, view, i)
        return (table_name, value), i

    def _string(self, block: bytes, view: memoryview, i: int) -> tuple[bytes, int]:
        if i >= len(block):
            raise HpackReadError("a header block cut short")
        huffman = block[i] & 0x80
        length, used = decode_integer(view[i:], 7)
        start = i + used
        stop = start + length
        if stop > len(block):
            raise HpackReadError("a header block cut short")
        raw = block[start:stop]
        if not huffman:
            return raw, stop
        found = self._huffman.get(raw)
        if found is None:
            if len(self._huffman) >= HUFFMAN_CACHE:
                self._huffman.clear()
            found = self._huffman[raw] = decode_huffman(raw)
        return found, stop
