"""A Riegeli/records file (ArrayRecord is one) known by its first 64 bytes, without numpy: the
TFRecord opener asks this of every file it opens."""

from __future__ import annotations

# The block header at 0 and the file signature chunk's header (type 's', no data, no records), as
# the format fixes them.
SIGNATURE = bytes.fromhex(
    "83af70d10d884a3f00000000000000004000000000000000"
    "91bac23c9287e1a90000000000000000e19f13c0e9b1c372"
    "7300000000000000"
    "0000000000000000"
)


def is_riegeli(head: bytes) -> bool:
    """Does `head` (a file's first bytes) begin a Riegeli/records file?"""
    return bytes(head[: len(SIGNATURE)]) == SIGNATURE
