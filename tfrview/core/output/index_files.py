"""Index files in the text format DALI and vahidk/tfrecord read: one `offset size` line per record,
where size counts the whole framed record (header, data and footer).

For GZIP/ZLIB sources the offsets are positions in the decompressed stream (DALI cannot read
compressed files; the format is still useful to tfrview itself).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import MAX_INDEX_FILE_BYTES, MAX_INDEX_LINE, too_large
from tfrview.core.output.atomic import atomic_write_text
from tfrview.core.tfrecord.framing import OVERHEAD
from tfrview.core.tfrecord.index import RecordIndex
from tfrview.core.tfrecord.source import open_regular


def format_index(index: RecordIndex) -> str:
    offs = index.offsets
    sizes = index.lengths + np.uint64(OVERHEAD)
    return "".join(f"{int(o)} {int(s)}\n" for o, s in zip(offs, sizes, strict=True))


def write_index(path: str | os.PathLike, index: RecordIndex) -> None:
    """Written to a temporary file beside `path` and renamed, so a reader never sees half of it."""

    atomic_write_text(Path(path), format_index(index))


_LINES = re.compile(rb"(?:[0-9]{1,20} [0-9]{1,20}\n)*(?:[0-9]{1,20} [0-9]{1,20}\n?)?")
_LINE = re.compile(rb"[0-9]{1,20} [0-9]{1,20}")
_U64_MAX = b"18446744073709551615"
_CHUNK = 1 << 20  # bytes of lines parsed at once (~40 MB of temporary tokens at most)


def read_index(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, framed sizes) as uint64 arrays. Strict: every line is two decimal numbers that fit
    in 64 bits, separated by one space. Raises TfrviewError naming the first bad line. A FIFO or
    device is refused, and so is a file over MAX_INDEX_FILE_BYTES; memory follows the file's size
    (`check_index` reads in chunks instead)."""
    offs: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    for o, z in iter_index(path):
        offs.append(o)
        sizes.append(z)
    if not offs:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.uint64)
    return np.concatenate(offs), np.concatenate(sizes)


def iter_index(path: str | os.PathLike) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(offsets, framed sizes) of each chunk of about _CHUNK bytes of lines, as `read_index` reads
    them: memory follows the chunk, not the file (a 95 MiB index of short lines cost 849 MB whole)."""

    fd, st = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > MAX_INDEX_FILE_BYTES:
            raise TfrviewError(
                f"{path}: "
                + too_large("the index file", st.st_size, MAX_INDEX_FILE_BYTES, name="MAX_INDEX_FILE_BYTES")
            )
        line_no = 1
        carry = b""
        while True:
            block = fh.read(_CHUNK)
            data = carry + block
            if not block:
                cut = len(data)
            else:
                cut = data.rfind(b"\n") + 1
                if cut == 0 and len(data) > MAX_INDEX_LINE:
                    _bad_line(path, line_no, data)
            chunk, carry = data[:cut], data[cut:]
            if chunk:
                if not _LINES.fullmatch(chunk):
                    _bad_line(path, line_no, chunk)
                tokens = np.array(chunk.split())
                over = (np.char.str_len(tokens) == 20) & (tokens > np.bytes_(_U64_MAX))
                if over.any():
                    k = int(np.flatnonzero(over)[0])
                    raise TfrviewError(f"{path}:{line_no + k // 2}: number too large for 64 bits")
                nums = tokens.astype(np.uint64)
                del tokens
                yield nums[0::2], nums[1::2]
                line_no += chunk.count(b"\n")
            if not block:
                break


def _bad_line(path, first_line: int, chunk: bytes) -> None:
    """Raise the error for the first malformed line of a chunk that failed to match as a whole."""
    for i, line in enumerate(chunk.split(b"\n")):
        if len(line) > MAX_INDEX_LINE or not _LINE.fullmatch(line):
            if line == b"" and i == chunk.count(b"\n"):
                continue  # the end of the last line
            shown = line[:60].decode("ascii", "replace")  # as read: whoever prints it escapes it, once
            what = "a line longer than any index line" if len(line) > MAX_INDEX_LINE else f"'{shown}'"
            raise TfrviewError(f"{path}:{first_line + i}: expected 'offset size', got {what}")
    raise TfrviewError(f"{path}:{first_line}: expected 'offset size' lines")


@dataclass(frozen=True)
class IndexCheck:
    ok: bool
    messages: list[str]


def check_index(path: str | os.PathLike, index: RecordIndex, limit: int = 20) -> IndexCheck:
    """Compare an index file with the records actually framed in its data file, chunk by chunk:
    memory follows a chunk of the index file, whatever its length."""
    want_o = index.offsets
    n = len(want_o)
    at = mismatched = 0
    listed: list[str] = []
    for offs, sizes in iter_index(path):
        m = max(min(len(offs), n - at), 0)  # lines past the data's last record are only counted
        if m:
            want_s = index.lengths[at : at + m] + np.uint64(OVERHEAD)
            bad = np.flatnonzero((offs[:m] != want_o[at : at + m]) | (sizes[:m] != want_s))
            mismatched += len(bad)
            for j in bad[: max(limit - len(listed), 0)]:
                k = at + int(j)
                listed.append(
                    f"line {k + 1}: index says offset {int(offs[j])} size {int(sizes[j])}, "
                    f"record {k} is at {int(want_o[k])} size {int(index.lengths[k]) + OVERHEAD}"
                )
        at += len(offs)
    msgs = []
    if at != n:
        msgs.append(f"index lists {at} records, the file has {n}")
    msgs += listed
    if mismatched > limit:
        msgs.append(f"... and {mismatched - limit} more mismatched lines")
    return IndexCheck(not msgs, msgs)
