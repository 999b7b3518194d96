"""Hypothesis strategies for hostile input: framing damage, compression damage, hostile payloads and
hostile paths. Each case knows what an honest reader must still find in it.

The per-run budget comes from FUZZ_EXAMPLES (small in `make test`; `bench/fuzz.py` raises it and
runs the same tests for as long as it is asked to).
"""

from __future__ import annotations

import gzip
import os
import random
import struct
import zlib
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.fuzz import hostile as H
from tests.fuzz.reference import masked

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("FUZZ_RANDOM") != "1",  # make test: the same cases every run
)


def frame(payload: bytes) -> bytes:
    """TFRecord framing, written from the format's definition (not tfrview's writer)."""
    head = struct.pack("<Q", len(payload))
    return head + struct.pack("<I", masked(head)) + payload + struct.pack("<I", masked(payload))


def header(length: int) -> bytes:
    head = struct.pack("<Q", length)
    return head + struct.pack("<I", masked(head))


# --- payloads ----------------------------------------------------------------------------------------

payloads = st.one_of(
    st.binary(max_size=48),
    st.binary(min_size=48, max_size=1500),
    st.builds(lambda n, b: bytes([b]) * n, st.integers(0, 300), st.integers(0, 255)),
    st.builds(lambda b: b"\x1f\x8b\x08" + b, st.binary(max_size=64)),  # looks like a GZIP member
    st.builds(lambda b: gzip.compress(b, mtime=0), st.binary(max_size=200)),  # is one
    # framing inside
    st.builds(lambda ps: b"".join(frame(p) for p in ps), st.lists(st.binary(max_size=40), max_size=4)),
    st.builds(lambda n: header(n), st.integers(0, 1 << 20)),  # a bare header as a payload
)

junk = st.one_of(
    st.binary(min_size=1, max_size=300),
    st.builds(bytes, st.integers(1, 3000)),  # zeros
    st.builds(lambda b: b"\x1f\x8b\x08" + b, st.binary(max_size=40)),
    st.builds(lambda n, b: header(n) + b, st.integers(0, 1 << 16), st.binary(max_size=40)),  # a fake header
    st.just(b"\r\n" * 7),
)


# --- framing damage ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Damaged:
    data: bytes
    intact: tuple[tuple[int, bytes], ...]  # (offset, payload) of every record no damage touched
    ops: tuple  # what was done, for the failure report


@st.composite
def damaged_files(draw) -> Damaged:
    """Records, some damaged in the ways real files are (flipped bits, records cut short by a crashed
    writer, headers rewritten with a wrong length and a valid CRC, zeroed blocks, inserted garbage,
    a cut tail, a concatenated second file), and which records no damage touched."""
    pls = draw(st.lists(payloads, min_size=1, max_size=24))
    pieces: list[tuple[bytes, bytes | None]] = []  # (bytes, payload if this piece is an untouched record)
    ops = []
    for p in pls:
        if draw(st.integers(0, 9)) == 0:
            j = draw(junk)
            pieces.append((j, None))
            ops.append(("insert", len(j)))
        rec = frame(p)
        kind = draw(st.sampled_from(["ok"] * 6 + ["flip", "cut", "length", "zero"]))
        if kind == "ok":
            pieces.append((rec, p))
            continue
        b = bytearray(rec)
        if kind == "flip":
            i = draw(st.integers(0, len(b) - 1))
            b[i] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            b = b[: draw(st.integers(0, len(b) - 1))]
        elif kind == "length":
            delta = draw(st.integers(-len(p), 2000).filter(lambda d: d != 0))
            b[:12] = header(len(p) + delta)
        else:
            a = draw(st.integers(0, len(b) - 1))
            n = draw(st.integers(1, len(b) - a))
            b[a : a + n] = bytes(n)
        ops.append((kind, len(pieces)))
        pieces.append((bytes(b), None))
    if draw(st.booleans()):
        extra = draw(st.lists(payloads, max_size=4))
        pieces += [(frame(p), p) for p in extra]
        ops.append(("concat", len(extra)))
    data = bytearray()
    intact = []
    for piece, p in pieces:
        if p is not None:
            intact.append((len(data), p))
        data += piece
    if draw(st.integers(0, 4)) == 0 and data:
        cut = draw(st.integers(0, len(data) - 1))
        ops.append(("tail", cut))
        data = data[:cut]
        intact = [(o, p) for o, p in intact if o + len(p) + 16 <= cut]
    keep_failing_input("framing.bin", bytes(data))
    return Damaged(bytes(data), tuple(intact), tuple(ops))


# --- compression damage ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Compressed:
    data: bytes
    plain: bytes  # the uncompressed stream as written
    records: tuple[tuple[int, bytes], ...]  # (stream offset, payload) of every record written
    wbits: int
    ops: tuple


@st.composite
def compressed_files(draw) -> Compressed:
    pls = draw(st.lists(payloads, min_size=1, max_size=20))
    plain = bytearray()
    recs = []
    for p in pls:
        recs.append((len(plain), p))
        plain += frame(p)
    kind = draw(st.sampled_from(["gzip", "zlib"]))
    level = draw(st.integers(0, 9))
    data = bytearray(
        gzip.compress(bytes(plain), level, mtime=0) if kind == "gzip" else zlib.compress(bytes(plain), level)
    )
    ops = [kind]
    damage = draw(st.sampled_from(["none", "flip", "cut", "garbage", "zero", "trailer"]))
    if damage == "flip":
        i = draw(st.integers(0, len(data) - 1))
        data[i] ^= 1 << draw(st.integers(0, 7))
    elif damage == "cut":
        data = data[: draw(st.integers(1, len(data)))]
    elif damage == "garbage":
        data += draw(st.binary(min_size=1, max_size=100))
    elif damage == "zero":
        a = draw(st.integers(0, len(data) - 1))
        n = draw(st.integers(1, min(64, len(data) - a)))
        data[a : a + n] = bytes(n)
    elif damage == "trailer":
        data[-4:] = bytes(4)  # the stored CRC or size of the whole stream
    ops.append(damage)
    keep_failing_input("compressed.bin", bytes(data))
    return Compressed(bytes(data), bytes(plain), tuple(recs), 31 if kind == "gzip" else 15, tuple(ops))


@dataclass(frozen=True)
class Stream:
    """An undamaged compressed file whose reads must all agree with a sequential read."""

    data: bytes
    payloads: tuple[bytes, ...]
    ops: tuple


_WORDS = (b"cat", b"dog", b"label", b"bbox", b"0.25", b"train", b"image/encoded", b"\n")


def _stream_payload(kind: str, size: int, seed: int) -> bytes:
    import random

    rng = random.Random(seed)
    if kind == "text":  # inflates ~6:1, past the inflater's 1 MB output cap from one 256 KB input block
        return b" ".join(rng.choices(_WORDS, k=size // 4 + 1))[:size]
    if kind == "random":
        return rng.randbytes(size)
    if kind == "zeros":
        return bytes(size)
    return _stream_payload("text", size // 2, seed) + rng.randbytes(size - size // 2)


@st.composite
def compressed_streams(draw) -> Stream:
    """GZIP or ZLIB files of every ratio (text-like, incompressible, mixed, zeros), in one or
    several GZIP members, with records from a few bytes to a few MB (larger than the inflate
    window): big enough that reads start at inflate checkpoints where zlib holds input it has not
    inflated yet (the wrong bytes of issue 26.1)."""
    # text-like most: ratios over 4:1
    kind = draw(st.sampled_from(["text", "mixed", "text", "random", "zeros"]))
    big = draw(st.booleans())
    sizes = draw(
        st.lists(
            st.integers(1 << 20, 3 << 20) if big else st.integers(0, 60_000),
            min_size=1,
            max_size=4 if big else 80,
        )
    )
    seed = draw(st.integers(0, 1 << 30))
    pls = [_stream_payload(kind, n, seed + i) + b"%d" % i for i, n in enumerate(sizes)]
    while sum(map(len, pls)) < (3 << 20 if kind != "random" else 1 << 20):  # cross the output cap
        pls.append(_stream_payload(kind, 200_000, seed + len(pls)) + b"%d" % len(pls))
    plain = b"".join(frame_fast(p) for p in pls)
    how = draw(st.sampled_from(["gzip", "zlib"]))
    level = draw(st.sampled_from([1, 6, 9]))
    members = draw(st.integers(1, 3)) if how == "gzip" else 1
    cuts = sorted(draw(st.lists(st.integers(0, len(plain)), min_size=members - 1, max_size=members - 1)))
    parts = [plain[a:b] for a, b in zip([0, *cuts], [*cuts, len(plain)], strict=True)]
    data = (
        b"".join(gzip.compress(p, level, mtime=0) for p in parts)
        if how == "gzip"
        else zlib.compress(plain, level)
    )
    keep_failing_input("stream.bin", data)
    return Stream(data, tuple(pls), (how, kind, level, members, len(pls), len(plain)))


def frame_fast(payload: bytes) -> bytes:
    """`frame` with a C CRC-32C (the reference is too slow for megabytes); only for streams whose
    framing is not what a test checks."""
    import crc32c

    head = struct.pack("<Q", len(payload))

    def masked_c(b: bytes) -> int:
        c = crc32c.crc32c(b)
        return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF

    return head + struct.pack("<I", masked_c(head)) + payload + struct.pack("<I", masked_c(payload))


@dataclass(frozen=True)
class Bomb:
    """A compressed file that inflates far more than it weighs, and how many intact records it holds."""

    data: bytes
    records: int
    ops: tuple


@st.composite
def compression_bombs(draw) -> Bomb:
    """Bomb shapes (zeros only; one huge record of zeros; many records of zeros; records of zeros
    behind text), GZIP in members or ZLIB in one stream, small enough for a test yet past the 1 MB
    output cap and several inflate checkpoints. Every one holds a known number of records."""
    shape = draw(st.sampled_from(["zeros", "one_record", "many_records", "after_text"]))
    inflated = draw(st.integers(1 << 20, 24 << 20))
    how = draw(st.sampled_from(["gzip", "zlib"]))
    if shape == "zeros":
        plain, n = bytes(inflated), 0
    elif shape == "one_record":
        plain, n = frame_fast(bytes(inflated)), 1
    else:
        rec = draw(st.integers(0, 1 << 20))
        count = min(max(1, inflated // (rec + 16)), 20_000)
        plain = frame_fast(bytes(rec)) * count
        n = count
        if shape == "after_text":
            text = [_stream_payload("text", 200_000, i) for i in range(draw(st.integers(1, 4)))]
            plain = b"".join(frame_fast(t) for t in text) + plain
            n += len(text)
    if how == "gzip":
        step = draw(st.sampled_from([len(plain) + 1, 16 << 20, 1 << 20]))  # one member, or many
        data = b"".join(gzip.compress(plain[i : i + step], 9, mtime=0) for i in range(0, len(plain), step))
    else:
        data = zlib.compress(plain, 9)
    keep_failing_input("bomb.bin", data)
    return Bomb(data, n, (shape, how, len(plain), len(data)))


def inflatable_prefix(data: bytes, wbits: int) -> bytes:
    """Everything a careful reader can inflate before the damage, fed one byte at a time (the
    reference for what must be recovered)."""
    d = zlib.decompressobj(wbits)
    out = bytearray()
    for i in range(len(data)):
        try:
            out += d.decompress(data[i : i + 1])
        except zlib.error:
            break
        if d.eof:
            break
    return bytes(out)


# --- line-ending conversions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Stripped:
    data: bytes = field(repr=False)  # megabytes of LF bytes: a failure report names the ops
    good: tuple[bytes, ...]  # payloads of the records after the stripped ones, that nothing touched
    ops: tuple


def stripped_record(m: int, k: int, fill: bytes, proven: bool = True, overstate: int = 0) -> bytes:
    """A record of m LF bytes, k of them after a CR, framed, then its CR LF bytes turned to LF
    (dos2unix): its header says k more bytes than it has. `fill` goes between the LF bytes (no
    CR or LF in it); not `proven`: its stored CRC is another data's; `overstate`: its header
    claims that many bytes more (past the end of the file, as a text file's would)."""
    cr = set(range(0, m, max(1, m // k))[:k]) if k else set()
    cr |= set(range(m - 1, -1, -1)[: k - len(cr)])
    data = b"".join((b"\r\n" if i in cr else b"\n") + fill for i in range(m))
    rec = frame(data)
    if overstate:
        rec = header(len(data) + overstate) + rec[12:]
    if not proven:
        rec = rec[:-4] + frame(data[::-1])[-4:]
    return rec.replace(b"\r\n", b"\n")


@st.composite
def stripped_cr_files(draw) -> Stripped:
    """Records that lost their CR bytes in the counts that once made the search explode (issues
    25.3 and 26.2): k lost close to m LF bytes, k near m / 2, all of them lost, a huge m (a record
    of LF bytes), headers overstating their length past the end; then good records (4,200+ bytes,
    more than the most CR bytes looked for, with no CR LF of their own) that must all be kept."""
    recs, ops = [], []
    for _ in range(draw(st.integers(1, 3))):
        m = draw(st.one_of(st.integers(1, 60), st.integers(60, 3000), st.sampled_from([20_000, 200_000])))
        shape = draw(st.sampled_from(["close", "half", "few", "all"]))
        k = {
            "close": max(1, m - draw(st.integers(0, 4))),
            "half": max(1, m // 2 + draw(st.integers(-2, 2))),
            "few": min(m, draw(st.integers(1, 4))),
            "all": m,
        }[shape]
        fill = draw(st.sampled_from([b"", b"a", b"ab"]))
        proven = draw(st.booleans())
        overstate = draw(st.sampled_from([0, 0, 1 << 20]))
        recs.append(stripped_record(m, k, fill, proven, overstate))
        ops.append((m, k, shape, len(fill), proven, overstate))
    rnd = random.Random(draw(st.integers(0, 1 << 32)))  # big bytes drawn from a seed, not byte by byte
    good = tuple(rnd.randbytes(rnd.randrange(4200, 5000)).replace(b"\r\n", b"\r_") for _ in range(2))
    data = b"".join(recs) + b"".join(frame(g) for g in good)
    keep_failing_input("stripped.bin", data)
    return Stripped(data, good, tuple(ops))


# --- hostile payloads --------------------------------------------------------------------------------

hostile_payloads = st.one_of(
    st.builds(lambda d, n: H.nested(d, n), st.integers(1, 5000), st.sampled_from([1, 2, 3, 5])),
    st.builds(lambda n: H.example({"x": H.int64_feature_packed(n)}), st.integers(0, 300_000)),
    st.builds(lambda n: H.example({"s": H.bytes_feature_empty_entries(n)}), st.integers(0, 200_000)),
    st.builds(lambda n: H.many_steps(n), st.integers(0, 100_000)),
    st.builds(lambda n: H.many_keys(n), st.integers(0, 20_000)),
    st.builds(lambda k: H.example({k: H.int64_feature_packed(1)}), st.text(max_size=30)),
    st.builds(lambda b: H.example({b.decode("latin-1"): H.int64_feature_packed(1)}), st.binary(max_size=20)),
    st.builds(lambda raw: H.example({"bad\xffutf8": H.field(1, H.field(1, raw))}), st.binary(max_size=30)),
    st.builds(lambda v: H.field(1, H.varint(v)), st.integers(0, (1 << 70))),  # huge varints
    st.builds(lambda b: b"\x0a" + H.varint(1 << 62) + b, st.binary(max_size=20)),  # a length past the end
    st.builds(lambda w, h: H.image_example(H.png16(w, h)), st.integers(1, 3000), st.integers(1, 3000)),
    st.builds(
        lambda w, h: H.image_example(_png_header(w, h)), st.integers(1, 1 << 20), st.integers(1, 1 << 20)
    ),
    st.builds(lambda b: H.image_example(b"\xff\xd8\xff" + b, b"jpeg"), st.binary(max_size=200)),
    st.just(H.evil_keys()),
    st.binary(max_size=400),
)


def _png_header(w: int, h: int) -> bytes:
    """A PNG that claims a size (a decompression bomb's first bytes) with no pixel data behind it."""
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + crc


def keep_failing_input(name: str, data: bytes) -> None:
    """Where FUZZ_SAVE_DIR is set (bench/fuzz.py sets it), each drawn input is saved there, so a
    failure can be replayed: Hypothesis draws the failing example last, to report it."""
    folder = os.environ.get("FUZZ_SAVE_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name), "wb") as fh:
            fh.write(data)


# --- hostile servers ---------------------------------------------------------------------------------

SERVER_WAYS = ("honest", "silent", "backlog", "lie_size", "cut", "ignore_range", "changing", "stall_body")


@dataclass(frozen=True)
class RemoteCase:
    """A file and a server that serves it one (mis)behaving way (tests/remote_servers.py)."""

    how: str
    data: bytes
    claim: int  # the size a lying server says (lie_size); the true size otherwise

    def server(self):
        from tests.remote_servers import FullBacklogServer, HostileHTTPServer, SilentServer

        if self.how == "silent":
            return SilentServer()
        if self.how == "backlog":
            return FullBacklogServer()
        return HostileHTTPServer(self.data, self.how, claim=self.claim)


@st.composite
def remote_cases(draw) -> RemoteCase:
    """A small file, clean or damaged, sometimes with one record of up to 3 MB (several fetches, so
    a server that changes between them is asked more than once), behind one server way; a lying
    server claims far more (up to 1 PiB), a little more, or less than it holds."""
    data = (
        draw(damaged_files()).data
        if draw(st.booleans())
        else b"".join(frame(p) for p in draw(st.lists(payloads, min_size=1, max_size=8)))
    )
    if draw(st.integers(0, 3)) == 0:
        data = frame(bytes([draw(st.integers(0, 255))]) * draw(st.integers(1 << 20, 3 << 20))) + data
    how = draw(st.sampled_from(SERVER_WAYS))
    claim = len(data)
    if how == "lie_size":
        claim = draw(st.sampled_from([1 << 50, len(data) + 1, 2 * len(data) + 4096, max(1, len(data) // 2)]))
    keep_failing_input("remote.bin", data)
    keep_failing_input("remote.txt", f"{how} {claim}\n".encode())
    return RemoteCase(how, data, claim)
