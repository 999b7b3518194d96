"""Reads of GZIP and ZLIB files that start at an inflate checkpoint give the bytes a sequential read
gives, whatever the ratio (issue 26.1: a checkpoint taken where zlib held input it had not inflated
yet, past its 1 MB output cap, resumed by feeding that input twice)."""

from __future__ import annotations

import gzip
import random
import zlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfrview.core.tfrecord.framing import encode_record
from tfrview.core.tfrecord.report import index_source
from tfrview.core.tfrecord.source import Source, source_from_bytes

_WORDS = [b"cat", b"dog", b"image/encoded", b"label", b"0.25", b"bbox", b"xmin", b"ymax", b"train"]


def payload(kind: str, rng: random.Random, size: int) -> bytes:
    """A record's data: text-like (inflates ~8:1 and more), incompressible, or half of each."""
    if kind == "text":
        return b" ".join(rng.choices(_WORDS, k=size // 4 + 1))[:size]
    if kind == "random":
        return rng.randbytes(size)
    return payload("text", rng, size // 2) + rng.randbytes(size - size // 2)


def compress(plain: bytes, how: str, level: int) -> bytes:
    return gzip.compress(plain, level, mtime=0) if how == "gzip" else zlib.compress(plain, level)


def fresh(data: bytes, spacing: int) -> Source:
    src = source_from_bytes(data)
    src.checkpoint_spacing = spacing
    return src


def check_reads(data: bytes, pls: list[bytes], spacing: int, rng: random.Random) -> None:
    """Records read in a random order (the last one, and those just after each checkpoint, among
    them), after the scan left its checkpoints, equal what was written; so does a read from a fresh source that never scanned; so does the whole stream read
    front to back in odd pieces."""
    plain = b"".join(encode_record(p) for p in pls)
    src = fresh(data, spacing)
    idx = index_source(src)
    assert idx.count == len(pls) and not idx.problems
    assert len(src._ckpts.items) > 1  # the reads below start at checkpoints, not only at the start
    after_checkpoints = {int(i) for i in idx.offsets.searchsorted(src._ckpts.positions)}
    order = [
        k
        for k in {*rng.sample(range(len(pls)), min(len(pls), 30)), len(pls) - 1, *after_checkpoints}
        if k < len(pls)
    ]
    rng.shuffle(order)
    for k in order:
        assert src.read(int(idx.offsets[k]) + 12, int(idx.lengths[k])) == pls[k], f"record {k}"
    jumps = fresh(data, spacing)  # no scan: every read inflates from the start or the last read
    for k in order[:8]:
        assert jumps.read(int(idx.offsets[k]) + 12, int(idx.lengths[k])) == pls[k], f"record {k} (fresh)"
    got = bytearray()
    pos = 0
    while pos < len(plain):
        n = rng.choice([1, 4096, 300_000, 3 << 20])
        got += src.read(pos, n)
        pos += n
    assert bytes(got) == plain
    assert b"".join(src.pieces(0, len(plain), piece=1 << 20)) == plain


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    how=st.sampled_from(["gzip", "zlib"]),
    kind=st.sampled_from(["text", "random", "mixed"]),
    level=st.sampled_from([1, 6, 9]),
    size=st.integers(2_000, 200_000),
    seed=st.integers(0, 1 << 30),
)
def test_reads_from_checkpoints_equal_the_sequential_stream(how, kind, level, size, seed):
    rng = random.Random(seed)
    pls = []
    total = 0
    while total < (3 << 20 if kind != "random" else 1 << 20):  # text must cross the 1 MB output cap
        p = payload(kind, rng, rng.randint(size // 2, size))
        pls.append(p)
        total += len(p)
    check_reads(compress(b"".join(encode_record(p) for p in pls), how, level), pls, 256 << 10, rng)


def test_records_larger_than_the_inflate_window():
    rng = random.Random(7)
    pls = [
        payload(kind, rng, rng.randint(2 << 20, 3 << 20))
        for kind in ("text", "mixed", "text", "random", "text")
    ]
    plain = b"".join(encode_record(p) for p in pls)
    for how in ("gzip", "zlib"):
        check_reads(compress(plain, how, 1), pls, 1 << 20, rng)
