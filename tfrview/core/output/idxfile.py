"""Index files in the text format DALI and vahidk/tfrecord read: one `offset size` line per record,
where size counts the whole framed record (header, data and footer).

For GZIP/ZLIB sources the offsets are positions in the decompressed stream (DALI cannot read
compressed files; the format is still useful to tfrview itself).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfrview.core.limits import MAX_INDEX_FILE_BYTES, MAX_INDEX_LINE, too_large
from tfrview.core.tfrecord.framing import OVERHEAD, TfrviewError, one_line
from tfrview.core.tfrecord.index import RecordIndex


def format_index(index: RecordIndex) -> str:
    offs = index.offsets
    sizes = index.lengths + np.uint64(OVERHEAD)
    return "".join(f"{int(o)} {int(s)}\n" for o, s in zip(offs, sizes, strict=True))


def write_index(path: str | os.PathLike, index: RecordIndex) -> None:
    """Written to a temporary file beside `path` and renamed, so a reader never sees half of it."""
    from tfrview.core.output.atomic import atomic_write_text

    atomic_write_text(Path(path), format_index(index))


_LINES = re.compile(rb"(?:[0-9]{1,20} [0-9]{1,20}\n)*(?:[0-9]{1,20} [0-9]{1,20}\n?)?")
_LINE = re.compile(rb"[0-9]{1,20} [0-9]{1,20}")
_U64_MAX = b"18446744073709551615"
_CHUNK = 4 << 20


def read_index(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, framed sizes) as uint64 arrays. Strict: every line is two decimal numbers that fit
    in 64 bits, separated by one space. Raises TfrviewError naming the first bad line. A FIFO or
    device is refused, and so is a file over MAX_INDEX_FILE_BYTES; memory follows the file's size."""
    from tfrview.core.tfrecord.source import open_regular

    fd, st = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > MAX_INDEX_FILE_BYTES:
            raise TfrviewError(f"{path}: " + too_large("the index file", st.st_size, MAX_INDEX_FILE_BYTES))
        offs: list[np.ndarray] = []
        sizes: list[np.ndarray] = []
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
                offs.append(nums[0::2])
                sizes.append(nums[1::2])
                line_no += chunk.count(b"\n")
            if not block:
                break
    if not offs:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.uint64)
    return np.concatenate(offs), np.concatenate(sizes)


def _bad_line(path, first_line: int, chunk: bytes) -> None:
    """Raise the error for the first malformed line of a chunk that failed to match as a whole."""
    for i, line in enumerate(chunk.split(b"\n")):
        if len(line) > MAX_INDEX_LINE or not _LINE.fullmatch(line):
            if line == b"" and i == chunk.count(b"\n"):
                continue  # the end of the last line
            shown = one_line(line[:60].decode("ascii", "replace"))
            what = "a line longer than any index line" if len(line) > MAX_INDEX_LINE else f"'{shown}'"
            raise TfrviewError(f"{path}:{first_line + i}: expected 'offset size', got {what}")
    raise TfrviewError(f"{path}:{first_line}: expected 'offset size' lines")


@dataclass(frozen=True)
class IndexCheck:
    ok: bool
    messages: list[str]


def check_index(path: str | os.PathLike, index: RecordIndex, limit: int = 20) -> IndexCheck:
    """Compare an index file with the records actually framed in its data file."""
    offs, sizes = read_index(path)
    want_o = index.offsets
    want_s = index.lengths + np.uint64(OVERHEAD)
    msgs = []
    if len(offs) != len(want_o):
        msgs.append(f"index lists {len(offs)} records, the file has {len(want_o)}")
    n = min(len(offs), len(want_o))
    bad = np.nonzero((offs[:n] != want_o[:n]) | (sizes[:n] != want_s[:n]))[0]
    for k in bad[:limit]:
        msgs.append(
            f"line {k + 1}: index says offset {int(offs[k])} size {int(sizes[k])}, "
            f"record {k} is at {int(want_o[k])} size {int(want_s[k])}"
        )
    if len(bad) > limit:
        msgs.append(f"... and {len(bad) - limit} more mismatched lines")
    return IndexCheck(not msgs, msgs)
