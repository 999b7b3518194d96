"""What a tag is keyed by: a file known by its content, not its name or inode, and a record by its
offset in that file's record stream, with the record's stored data CRC to tell a changed file.

A file's key is its size and a CRC-32C of its first and last 64 KB (the whole file when it is at
most twice that; the same ends `analysis.results.identity_of` hashes, without the inode and times),
so a dataset copied or moved elsewhere keeps its tags, and a file rewritten in place gets another
key. The payload's hash is the record's own stored data CRC (the 4 bytes after its data): read, not
computed, so tagging a million records costs a million 4-byte reads, not their payloads' CRCs."""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tfrview.core.tfrecord.framing import FOOTER_SIZE, HEADER_SIZE, crc32c_module

ENDS = 64 << 10  # bytes hashed at each end of a file (as analysis.results.IDENTITY_ENDS)


@dataclass(frozen=True, slots=True)
class FileKey:
    """A file as its content says: its size and the CRC-32C of its ends (hex, with their length)."""

    size: int
    ends: str

    def __str__(self) -> str:
        return f"{self.size}:{self.ends}"


def key_from(size: int, ends: bytes) -> FileKey:
    """The key of a file of `size` bytes whose ends (`ENDS` each, or all of it) are `ends`."""
    return FileKey(size, f"{crc32c_module().crc32c(ends):08x}{len(ends):x}")


def file_key(path: str | os.PathLike) -> FileKey | None:
    """The key of a local regular file; None for anything else (a URL, a pipe, a missing file):
    such a file cannot be tagged, and the caller says so."""
    text = os.fspath(path)
    if "://" in text:
        return None
    try:
        st = os.stat(text)
        if not stat.S_ISREG(st.st_mode):
            return None
        fd = os.open(text, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # read-only, never locked
        try:
            size = st.st_size
            ends = (
                os.pread(fd, 2 * ENDS, 0)
                if size <= 2 * ENDS
                else os.pread(fd, ENDS, 0) + os.pread(fd, ENDS, size - ENDS)
            )
        finally:
            os.close(fd)
    except OSError:
        return None
    return key_from(st.st_size, ends)


Read = Callable[[int, int], bytes]  # read(offset, n) of a record stream (tfrecord.source.Source.read)


def stored_crcs(read: Read, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each record's stored data CRC (uint32, as in the file: masked), or -1 where the stream ends
    before it (int64 array). Records close together are read together (one read of up to
    `_SPAN` bytes for all the CRCs inside it), so a million contiguous records cost ~100 reads,
    not a million; a lone record costs one 4-byte read."""
    offsets = np.asarray(offsets, dtype=np.int64)
    pos = offsets + HEADER_SIZE + np.asarray(lengths, dtype=np.int64)
    out = np.full(len(pos), -1, dtype=np.int64)
    if not len(pos):
        return out
    order = np.argsort(pos, kind="stable")
    sorted_pos = pos[order]
    i, n = 0, len(sorted_pos)
    while i < n:
        start = int(sorted_pos[i])
        j = int(np.searchsorted(sorted_pos, start + _SPAN - FOOTER_SIZE, side="right"))
        j = max(j, i + 1)
        end = int(sorted_pos[j - 1]) + FOOTER_SIZE
        buf = np.frombuffer(read(start, end - start), dtype=np.uint8)
        at = sorted_pos[i:j] - start
        whole = at + FOOTER_SIZE <= len(buf)
        if whole.any():
            a = at[whole]
            b = buf.astype(np.int64)
            out[order[i:j][whole]] = b[a] | (b[a + 1] << 8) | (b[a + 2] << 16) | (b[a + 3] << 24)
        i = j
    return out


_SPAN = 1 << 20  # bytes read at once for the CRCs of records close together: a piece size


def still_there(read: Read, offsets: np.ndarray, lengths: np.ndarray, crcs: np.ndarray) -> np.ndarray:
    """Which tagged records are still where they were, as they were: the header at the offset says
    the same length and the data CRC after it is the one stored (bool array)."""
    ok = np.zeros(len(offsets), dtype=bool)
    length_at = struct.Struct("<Q").unpack
    for i, (o, n) in enumerate(zip(offsets.tolist(), lengths.tolist(), strict=True)):
        head = read(o, 8)  # one read a record: only tags of an earlier content are checked so
        if len(head) == 8 and length_at(head)[0] == n:
            ok[i] = True
    if ok.any():
        idx = np.flatnonzero(ok)
        ok[idx] = stored_crcs(read, offsets[idx], lengths[idx]) == crcs[idx]
    return ok
