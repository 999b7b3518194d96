"""Index files in the text format DALI and vahidk/tfrecord read: one `offset size` line per record,
where size counts the whole framed record (header, data and footer).

For GZIP/ZLIB sources the offsets are positions in the decompressed stream (DALI cannot read
compressed files; the format is still useful to tfrview itself).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .framing import OVERHEAD, TfrviewError
from .index import RecordIndex


def format_index(index: RecordIndex) -> str:
    offs = index.offsets
    sizes = index.lengths + np.uint64(OVERHEAD)
    return "".join(f"{int(o)} {int(s)}\n" for o, s in zip(offs, sizes, strict=True))


def write_index(path: str | os.PathLike, index: RecordIndex) -> None:
    """Written to a temporary file beside `path` and renamed, so a reader never sees half of it."""
    from .atomic import atomic_write_text

    atomic_write_text(Path(path), format_index(index))


def read_index(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, framed sizes) as uint64 arrays. Raises TfrviewError on a malformed line."""
    offs: list[int] = []
    sizes: list[int] = []
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise TfrviewError(f"{path}: cannot read index ({exc})") from None
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise TfrviewError(f"{path}:{i}: expected 'offset size', got {line[:60]!r}")
        offs.append(int(parts[0]))
        sizes.append(int(parts[1]))
    return np.array(offs, dtype=np.uint64), np.array(sizes, dtype=np.uint64)


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
