"""A record's payload bytes as read for decoding: whole up to `limits.MAX_DECODE_BYTES`, else its
first `limits.HEAD_BYTES` with a way to stream the rest (a `PayloadHead`). Framing-level: it knows
where a record's data starts, nothing of what the data means."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tfrview.core.limits import HEAD_BYTES, MAX_DECODE_BYTES
from tfrview.core.tfrecord.framing import HEADER_SIZE


class PayloadHead(bytes):
    """The first bytes of a payload too large to read whole (over MAX_DECODE_BYTES). Decoders show
    the head; writers stream the whole payload through `pieces()`."""

    full_size: int
    pieces: Callable[[], Iterator[bytes]] | None

    def __new__(cls, head: bytes, full_size: int, pieces=None) -> PayloadHead:
        obj = super().__new__(cls, head)
        obj.full_size = full_size
        obj.pieces = pieces
        return obj


def bounded_payload(read, offset: int, length: int, pieces=None) -> bytes:
    """A record's payload for decoding: whole, or a PayloadHead when it is over MAX_DECODE_BYTES.
    `read(offset, n)` reads the stream and `pieces(offset, n)` streams it (Source.read and
    Source.pieces); `offset` is the record's start (its header)."""
    start = offset + HEADER_SIZE
    if length <= MAX_DECODE_BYTES:
        return read(start, length)
    stream = (lambda: pieces(start, length)) if pieces is not None else None
    return PayloadHead(read(start, HEAD_BYTES), length, stream)
