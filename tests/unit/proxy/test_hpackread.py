"""The splice's lean HPACK decoder reads what hpack's own decoder reads, block for block, and
leaves the same dynamic table behind."""

from __future__ import annotations

import hpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drasim.proxy.hpackread import HpackReader, HpackReadError

NAMES = [":path", ":status", "content-type", "grpc-timeout", "grpc-status", "grpc-message", "x-custom", "te"]
TEXT = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=300)

FIELD = st.tuples(st.sampled_from(NAMES) | TEXT.filter(bool).map(str.lower), TEXT, st.booleans())
BLOCK = st.tuples(
    st.lists(FIELD, max_size=12),
    st.booleans(),  # Huffman coding
    st.none() | st.integers(min_value=0, max_value=8192),  # a table size update first
)


@settings(max_examples=200, deadline=None)
@given(st.lists(BLOCK, min_size=1, max_size=8))
def test_reads_what_hpack_reads(blocks: list[tuple[list[tuple[str, str, bool]], bool, int | None]]) -> None:
    encoder = hpack.Encoder()
    theirs = hpack.Decoder()
    theirs.max_allowed_table_size = 1 << 16
    ours = HpackReader(1 << 16, 1 << 20)
    for fields, huffman, table_size in blocks:
        if table_size is not None:
            encoder.header_table_size = table_size
        headers = [hpack.NeverIndexedHeaderTuple(n, v) if never else (n, v) for n, v, never in fields]
        block = encoder.encode(headers, huffman=huffman)
        expected = [(bytes(n), bytes(v)) for n, v in theirs.decode(block, raw=True)]
        assert ours.decode(block) == expected
        assert list(ours.table.dynamic_entries) == list(theirs.header_table.dynamic_entries)
        assert ours.table.maxsize == theirs.header_table.maxsize


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        (b"\xff", "integer"),  # an index whose integer never ends
        (b"\xbf\x7f", "Invalid table index|index"),  # an index past the tables
        (b"\x40\x05ab", "cut short"),  # a literal name shorter than its length
        (b"\x88\x3f\xe1\x1f", "table size update after a field"),
        (b"\x3f\xe1\xff\x7f", "more than"),  # a table size update above the limit
    ],
)
def test_bad_blocks_are_clear_errors(block: bytes, problem: str) -> None:
    with pytest.raises(HpackReadError, match=problem):
        HpackReader(4096, 1 << 16).decode(block)
