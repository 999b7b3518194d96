"""Many small Examples parsed at once into columns: the deep pass's bulk reading of plain Examples
(`analysis.plain`).

upb parses a tiny Example in ~2 us, but handing its keys and lists to Python cost ~15 us more a
record (a sorted key list, a `Feature` lookup a key, `WhichOneof`, a list object a key). Here one
read of the file (a batch of records in one `bytes`) is walked as numpy arrays: each level of the
wire format (the Features field, its map entries, each Feature's list, a list's values) is one array
operation over every record of the batch at once, and the values of each list type are gathered
into one flat array.

Only the encoding protobuf's serializers write is taken: one Features field; map entries of a key
then a value; one list a Feature; floats and ints packed; keys valid UTF-8, none twice; no unknown
field anywhere; varints of lengths in canonical form. Any other record is marked not parsed
(`Parsed.ok` False) and left to upb and the reading: a rejection is always safe, the record takes
the per-record path. A parsed record gives exactly the keys, list types and values upb gives
(`tests/core/test_examplecols.py` compares them on generated Examples, hostile encodings included).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfrview.core.limits import UPB_MAX_BYTES
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST

KINDS = (BYTES_LIST, FLOAT_LIST, INT64_LIST)  # a list's kind code -> its list type
BYTES, FLOAT, INT = 0, 1, 2
# past these a record is left to upb (it parses any size): the bulk walk takes one array operation
# an entry or value position, so a record of thousands of keys or strings costs more here
MAX_ENTRIES = 512
MAX_BYTES_VALUES = 512
MAX_KEY_BYTES = 512
_PAD = 16  # zero bytes after the batch: a varint read near its end stays inside the array


@dataclass
class Parsed:
    """A batch's Examples as columns. Entries (one a key of a record) are sorted by record, then by
    key as Python sorts the key strings, so entry `ent_lo[r] + i` is the i-th key of record r's
    sorted keys. Values of entry j: `floats`/`ints`/bytes values `e_start[j]` on, `e_count[j]` of
    them (bytes value v is `buf[byte_lo[v]:byte_hi[v]]`, the `byte_at[v]`-th of its list)."""

    buf: bytes
    ok: np.ndarray  # bool a record: parsed here
    variant: np.ndarray  # int32 a record: its variant id (-1: not parsed)
    variants: list  # variant id -> ((sorted keys, list types), None or which lists are empty)
    ent_lo: np.ndarray
    ent_hi: np.ndarray
    e_rec: np.ndarray
    e_key: np.ndarray  # key id into `keys`
    e_kind: np.ndarray  # 0 bytes, 1 float, 2 int64 (KINDS)
    e_count: np.ndarray
    e_start: np.ndarray
    keys: list[str]  # sorted
    floats: np.ndarray
    ints: np.ndarray
    byte_lo: np.ndarray
    byte_hi: np.ndarray
    byte_at: np.ndarray
    byte_rec: np.ndarray  # the record each bytes value is in

    def values(self, entry: int) -> list:
        """One entry's values as upb's lists give them (Python floats, ints or bytes)."""
        a, c = int(self.e_start[entry]), int(self.e_count[entry])
        kind = int(self.e_kind[entry])
        if kind == BYTES:
            los, his = self.byte_lo[a : a + c].tolist(), self.byte_hi[a : a + c].tolist()
            return [self.buf[lo:hi] for lo, hi in zip(los, his, strict=True)]
        return (self.floats if kind == FLOAT else self.ints)[a : a + c].tolist()


def _varint(b: np.ndarray, p: np.ndarray, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value, size, ok) of the varints at positions p: 1 to 4 bytes, canonical (no trailing zero
    byte); a position past `end` reads zeros (the caller's range checks refuse it). Most are one
    byte: only the others are read further."""
    q = np.minimum(p, end)
    val = b[q].astype(np.int64)
    more = np.flatnonzero(val >= 0x80)
    size = np.ones(len(p), np.int64)
    ok = np.ones(len(p), bool)
    if len(more):
        qm = q[more]
        c0, c1, c2, c3 = (b[qm + i].astype(np.int64) for i in range(4))
        m1, m2, m3 = c1 >= 0x80, c2 >= 0x80, c3 >= 0x80
        three = m1
        four = three & m2
        size[more] = 2 + three.astype(np.int64) + four
        last = np.where(four, c3, np.where(three, c2, c1))
        ok[more] = ~(four & m3) & (last != 0)
        val[more] = (
            (c0 & 0x7F) + ((c1 & 0x7F) << 7) + three * ((c2 & 0x7F) << 14) + four * ((c3 & 0x7F) << 21)
        )
    return val, size, ok


def ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The positions starts[i] .. starts[i] + lens[i] - 1 of every i, in order."""
    lens = lens.astype(np.int64)
    total = int(lens.sum())
    if not total:
        return np.empty(0, np.int64)
    before = np.cumsum(lens) - lens
    return np.repeat(starts.astype(np.int64) - before, lens) + np.arange(total, dtype=np.int64)


def parse(buf: bytes, starts: np.ndarray, ends: np.ndarray) -> Parsed:
    """The Examples at buf[starts[r]:ends[r]] as columns (see `Parsed`); records it does not take
    are `ok` False."""
    nb = len(buf)
    b = np.zeros(nb + _PAD, np.uint8)
    b[:nb] = np.frombuffer(buf, np.uint8)
    s = np.asarray(starts, np.int64)
    e = np.asarray(ends, np.int64)
    n = len(s)
    ok = (e > s) & (e - s <= UPB_MAX_BYTES)
    ok &= b[np.minimum(s, nb)] == 0x0A
    length, size, good = _varint(b, s + 1, nb)
    pos = s + 1 + size
    ok &= good & (pos + length == e)

    # the map entries, one array operation an entry position: key, and the Feature's one list
    recs, kpos, klen, kinds, lpos, llen = [], [], [], [], [], []
    live = np.flatnonzero(ok & (pos < e))
    for _ in range(MAX_ENTRIES):
        if not len(live):
            break
        p, lim = pos[live], e[live]
        good = b[p] == 0x0A
        length, size, v = _varint(b, p + 1, nb)
        es = p + 1 + size
        ee = es + length
        good &= v & (ee <= lim) & (b[np.minimum(es, nb)] == 0x0A)
        kl, size, v = _varint(b, es + 1, nb)
        ks = es + 1 + size
        ke = ks + kl
        good &= v & (ke < ee) & (kl <= MAX_KEY_BYTES) & (b[np.minimum(ke, nb)] == 0x12)
        fl, size, v = _varint(b, ke + 1, nb)
        fs = ke + 1 + size
        good &= v & (fl > 0) & (fs + fl == ee)
        tag = b[np.minimum(fs, nb)]
        kind = np.where(tag == 0x0A, BYTES, np.where(tag == 0x12, FLOAT, np.where(tag == 0x1A, INT, -1)))
        ll, size, v = _varint(b, fs + 1, nb)
        ls = fs + 1 + size
        good &= v & (kind >= 0) & (ls + ll == ee)
        ok[live[~good]] = False
        live = live[good]
        recs.append(live)
        kpos.append(ks[good])
        klen.append(kl[good])
        kinds.append(kind[good])
        lpos.append(ls[good])
        llen.append(ll[good])
        pos[live] = ee[good]
        live = live[pos[live] < e[live]]
    ok[live] = False  # more keys than MAX_ENTRIES: upb's

    def cat(parts: list, dtype) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype)

    e_rec = cat(recs, np.int64)
    e_kpos, e_klen, e_kind = cat(kpos, np.int64), cat(klen, np.int64), cat(kinds, np.int8)
    e_lpos, e_llen = cat(lpos, np.int64), cat(llen, np.int64)
    ne = len(e_rec)
    e_count = np.zeros(ne, np.int64)
    e_start = np.zeros(ne, np.int64)
    bad = np.zeros(ne, bool)

    # packed floats and ints: [0x0A, length, values] or nothing
    packed = np.flatnonzero((e_kind != BYTES) & (e_llen > 0))
    plen, size, v = _varint(b, e_lpos[packed] + 1, nb)
    ps = e_lpos[packed] + 1 + size
    good = v & (b[np.minimum(e_lpos[packed], nb)] == 0x0A) & (ps + plen == e_lpos[packed] + e_llen[packed])
    is_float = e_kind[packed] == FLOAT
    good &= ~is_float | (plen % 4 == 0)
    bad[packed[~good]] = True
    plen = np.where(good, plen, 0)

    fl = packed[is_float]
    fbytes = b[ranges(ps[is_float], plen[is_float])]
    floats = fbytes.view("<f4").astype(np.float32)
    e_count[fl] = plen[is_float] // 4
    e_start[fl] = np.cumsum(e_count[fl]) - e_count[fl]
    # upb reads a float into a double and Python's float back: a signalling NaN comes back quiet
    bits = floats.view(np.uint32)
    bits |= np.where(((bits & 0x7F800000) == 0x7F800000) & ((bits & 0x7FFFFF) != 0), 0x400000, 0).astype(
        np.uint32
    )

    il = packed[~is_float]
    ints, counts, ibad = _ints(b, ps[~is_float], plen[~is_float])
    bad[il[ibad]] = True
    e_count[il] = counts
    e_start[il] = np.cumsum(counts) - counts

    # bytes lists: one array operation a value position, each value [0x0A, length, bytes]
    bl = np.flatnonzero(e_kind == BYTES)
    at, stop = e_lpos[bl].copy(), e_lpos[bl] + e_llen[bl]
    got: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
    live = np.flatnonzero(at < stop)
    for j in range(MAX_BYTES_VALUES):
        if not len(live):
            break
        p = at[live]
        length, size, v = _varint(b, p + 1, nb)
        lo = p + 1 + size
        hi = lo + length
        good = v & (b[p] == 0x0A) & (hi <= stop[live])
        bad[bl[live[~good]]] = True
        live = live[good]
        got.append((live, lo[good], hi[good], j))
        at[live] = hi[good]
        live = live[at[live] < stop[live]]
    bad[bl[live]] = True
    bcount = np.zeros(len(bl), np.int64)
    for which, _, _, _ in got:
        bcount[which] += 1
    e_count[bl] = bcount
    e_start[bl] = np.cumsum(bcount) - bcount
    total = int(bcount.sum())
    byte_lo, byte_hi = np.zeros(total, np.int64), np.zeros(total, np.int64)
    byte_at = np.zeros(total, np.int32)
    byte_rec = np.zeros(total, np.int64)
    for which, lo, hi, j in got:
        slot = e_start[bl[which]] + j
        byte_lo[slot], byte_hi[slot], byte_at[slot] = lo, hi, j
        byte_rec[slot] = e_rec[bl[which]]
    ok[e_rec[bad]] = False

    # keys: equal bytes, one id; sorted as Python sorts the strings
    e_key = np.zeros(ne, np.int64)
    texts: list[str] = []
    key_bad = np.zeros(ne, bool)
    for kl in np.unique(e_klen).tolist():
        of = np.flatnonzero(e_klen == kl)
        words = -(-kl // 8)
        grid = np.zeros((len(of), 8 * words), np.uint8)
        if kl:
            grid[:, :kl] = b[e_kpos[of, None] + np.arange(kl)]
        firsts, inv = _row_ids(grid.view("<u8"))
        ids = []
        for f in firsts.tolist():
            try:
                texts.append(grid[f, :kl].tobytes().decode("utf-8"))
                ids.append(len(texts) - 1)
            except UnicodeDecodeError:  # upb refuses such a key (proto3 strings are UTF-8)
                ids.append(-1)
        mapped = np.asarray(ids, np.int64)[inv]
        e_key[of] = mapped
        key_bad[of] = mapped < 0
    ok[e_rec[key_bad]] = False
    order_of = sorted(range(len(texts)), key=texts.__getitem__)
    rank = np.empty(len(texts), np.int64)
    rank[order_of] = np.arange(len(texts))
    keys = [texts[i] for i in order_of]

    keep = np.flatnonzero(ok[e_rec])
    if len(keep):
        e_key = rank[e_key[keep]]
    else:
        e_key = np.empty(0, np.int64)
    e_rec, e_kind, e_count, e_start = e_rec[keep], e_kind[keep], e_count[keep], e_start[keep]
    order = np.lexsort((e_key, e_rec))
    e_rec, e_key, e_kind, e_count, e_start = (x[order] for x in (e_rec, e_key, e_kind, e_count, e_start))
    twice = np.flatnonzero((e_rec[1:] == e_rec[:-1]) & (e_key[1:] == e_key[:-1]))
    if len(twice):  # a key twice in one record: upb keeps the last, the per-record path says so
        ok[e_rec[twice]] = False
        keep = np.flatnonzero(ok[e_rec])
        e_rec, e_key, e_kind, e_count, e_start = (x[keep] for x in (e_rec, e_key, e_kind, e_count, e_start))
    ent_lo = np.searchsorted(e_rec, np.arange(n), side="left")
    ent_hi = np.searchsorted(e_rec, np.arange(n), side="right")

    variant = np.full(n, -1, np.int32)
    variants: list = []
    m = ent_hi - ent_lo
    code = e_key * 8 + e_kind.astype(np.int64) * 2 + (e_count == 0)
    for k in np.unique(m[ok]).tolist():
        rs = np.flatnonzero(ok & (m == k))
        if not k:  # Features with no key
            variant[rs] = len(variants)
            variants.append((((), ()), None))
            continue
        grid = code[ent_lo[rs, None] + np.arange(k)]
        firsts, inv = _row_ids(grid)
        variant[rs] = len(variants) + inv
        for row in grid[firsts].tolist():
            layout = (tuple(keys[c >> 3] for c in row), tuple(KINDS[(c >> 1) & 3] for c in row))
            empty = tuple(bool(c & 1) for c in row)
            variants.append((layout, empty if any(empty) else None))
    return Parsed(
        buf,
        ok,
        variant,
        variants,
        ent_lo,
        ent_hi,
        e_rec,
        e_key,
        e_kind,
        e_count,
        e_start,
        keys,
        floats,
        ints,
        byte_lo,
        byte_hi,
        byte_at,
        byte_rec,
    )


def _row_ids(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal rows of a 2-D array: (the first row of each distinct one, each row's id among those).
    A batch holds few distinct keys and layouts: each is found by one comparison over the rows
    left (np.unique(axis=0) sorts every row, ~10 us a row); past 32 of them, by sorting."""
    n = len(grid)
    inv = np.full(n, -1, np.int64)
    firsts: list[int] = []
    left = np.arange(n)
    while len(left):
        if len(firsts) >= 32:
            uniq, at, more = np.unique(grid[left], axis=0, return_index=True, return_inverse=True)
            inv[left] = len(firsts) + more.reshape(-1)
            firsts += left[at].tolist()
            break
        c = int(left[0])
        same = (grid[left] == grid[c]).all(axis=1)
        inv[left[same]] = len(firsts)
        firsts.append(c)
        left = left[~same]
    return np.asarray(firsts, np.int64), inv


def _ints(b: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The packed varints of each region as int64 (two's complement, as upb reads an int64), the
    count of each region and which regions are malformed (a varint past its region or of more than
    10 bytes; their values are left out)."""
    nonempty = lens > 0
    ends_ok = ~nonempty | (b[np.maximum(starts + lens - 1, 0)] < 0x80)
    lens = np.where(ends_ok, lens, 0)
    raw = b[ranges(starts, lens)]
    term = raw < 0x80
    cs = np.cumsum(term)
    region_end = np.cumsum(lens)
    before = np.concatenate([[0], cs])[region_end - lens]
    counts = np.concatenate([[0], cs])[region_end] - before
    if not len(raw):
        return np.empty(0, np.int64), counts, ~ends_ok
    begins = np.concatenate([[0], np.flatnonzero(term[:-1]) + 1])  # each varint's first byte
    sizes = np.diff(np.append(begins, len(raw)))
    too_long = (sizes > 10) | ((sizes == 10) & (raw[begins + 9 * (sizes == 10)] > 1))
    shift = np.arange(len(raw)) - np.repeat(begins, sizes)
    part = (raw & 0x7F).astype(np.uint64) << (7 * np.minimum(shift, 9)).astype(np.uint64)
    values = np.add.reduceat(part, begins).view(np.int64)
    bad = ~ends_ok
    if too_long.any():
        owner = np.searchsorted(region_end, begins[too_long], side="right")
        bad[owner] = True
    return values, counts, bad
