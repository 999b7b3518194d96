"""Building TFRecord files for tests, good and damaged, with the project's own writer and framing."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tfrview.core.tfrecord.framing import encode_record
from tfrview.core.tfrecord.index import RecordIndex
from tfrview.core.tfrecord.report import index_and_verify
from tfrview.core.tfrecord.source import Source, source_from_bytes

DATA = Path(__file__).resolve().parent / "data"  # small real files kept in the repository (see its README)
RACCOON = DATA / "raccoon_test-first12.record"  # first 12 of the 40 raccoon Examples, byte-exact
PENGUIN = DATA / "penguin_train-00000-of-00001.gz"
RACCOON_RECORDS = 12
# Optional extra real files beside the repository; tests that use them skip when it is absent.
# An expression a child process evaluates for its own peak RSS in kB: VmHWM of its own memory map.
# Not ru_maxrss: Linux carries that across exec from the forking parent, so a test process grown to
# 500 MB by the suite before it showed in every child it started (a child measured at 222 MB alone
# read 580 MB late in `make test`).
PEAK_RSS_KB = (
    "(int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) "
    "if __import__('os').path.exists('/proc/self/status') "
    "else __import__('resource').getrusage(__import__('resource').RUSAGE_SELF).ru_maxrss)"
)
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def need_corpus(name: str) -> Path:
    """A file of ../shared/corpus, or a skip that says why (a fresh clone has no ../shared)."""
    import pytest

    p = CORPUS / name
    if not p.is_file():
        pytest.skip(f"optional check: {p} is absent (extra real files beside the repository)")
    return p


def payloads(n: int, base: int = 20) -> list[bytes]:
    """Distinct payloads of varied sizes; each names its own number so lost records are obvious."""
    return [f"record-{i:05d}|".encode() + bytes([65 + i % 26]) * (base + i % 7) for i in range(n)]


def framed(pls: list[bytes]) -> tuple[bytes, list[int]]:
    """The file bytes and the offset of every record (plus the end)."""
    recs = [encode_record(p) for p in pls]
    offs = [0]
    for r in recs:
        offs.append(offs[-1] + len(r))
    return b"".join(recs), offs


def index_bytes(data: bytes) -> tuple[Source, RecordIndex, list]:
    """Index and verify as `tfrview verify` does (including the second framing pass when a header
    turns out to claim whole records after it)."""
    src = source_from_bytes(data)
    idx, vprobs = index_and_verify(src)
    return src, idx, vprobs


def read_all(src: Source, idx: RecordIndex) -> list[bytes]:
    return [src.read(int(o) + 12, int(n)) for o, n in zip(idx.offsets, idx.lengths, strict=True)]


def payloads_of(path) -> list[bytes]:
    """Every record's payload of a file, framed as the window frames it (no CRC check)."""
    from tfrview.core.tfrecord.index import RecordIndex, scan
    from tfrview.core.tfrecord.source import open_source

    with open_source(path) as src:
        idx = RecordIndex()
        for c in scan(src):
            idx.apply(c)
        return read_all(src, idx)


def problem_tuples(problems) -> list[tuple]:
    return [(str(p.kind), p.offset, p.length, p.record) for p in problems]


def statuses(idx: RecordIndex) -> list[int]:
    return [int(x) for x in np.asarray(idx.status)]


def copies_split(root: Path) -> list[str]:
    """A TFDS-like split with planted copies (the dataset step's `dup_group` and `leak`):
    train-00000-of-00001 holds images A, A (an exact copy), B, C; validation-00000-of-00001 holds D,
    B (a copy in another split: a leak), E. Distinct images are noise of their own seed. Records,
    numbered as the window does: A 0 and 1, B 2 and 5 (leak)."""
    import io

    import numpy as np
    from PIL import Image

    from tfrview.core.output.writer import write_records
    from tfrview.demo import _example

    def jpeg(seed: int) -> bytes:
        a = np.random.default_rng(seed).integers(0, 256, (48, 64, 3), dtype=np.uint8)
        a = np.asarray(Image.fromarray(a).resize((256, 192), Image.Resampling.BICUBIC))
        b = io.BytesIO()
        Image.fromarray(a).save(b, "JPEG", quality=90)
        return b.getvalue()

    def rec(image: bytes) -> bytes:
        return _example(
            **{"image/encoded": image, "image/format": "jpeg", "image/class/label": 1}
        ).SerializeToString()

    a, b, c, d, e = (jpeg(s) for s in range(1, 6))
    root.mkdir(parents=True, exist_ok=True)
    paths = [root / "train-00000-of-00001.tfrecord", root / "validation-00000-of-00001.tfrecord"]
    write_records(paths[0], [rec(x) for x in (a, a, b, c)])
    write_records(paths[1], [rec(x) for x in (d, b, e)])
    return [str(p) for p in paths]


def write_arrayrecord(path: Path, options: str, recs) -> Path:
    """An ArrayRecord file written by the official writer (the reference the reader is tested
    against; a test module importorskips `array_record` first, with its reason)."""
    from array_record.python import array_record_module

    w = array_record_module.ArrayRecordWriter(str(path), options)
    for r in recs:
        w.write(r)
    w.close()
    return path


def rows_not_json() -> list[str]:
    """The keys of the result store's rows whose text SQLite's json functions refuse (a row holding
    Python's NaN or Infinity was one); every row should be standard JSON."""
    import sqlite3

    from tfrview.core.analysis.cache import store_path

    with sqlite3.connect(store_path()) as c:
        return [k for (k,) in c.execute("SELECT key FROM entries WHERE json_valid(meta) = 0")]


def json_extract(text: str | bytes, path: str):
    """SQLite's `json_extract(text, path)`: what someone running SQL over a stored row gets."""
    import sqlite3

    with sqlite3.connect(":memory:") as c:
        return c.execute("SELECT json_extract(?, ?)", (text, path)).fetchone()[0]
