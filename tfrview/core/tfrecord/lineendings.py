"""A file that went through a line-ending conversion, its records restored where the CRCs prove them.

A conversion CR LF -> LF (dos2unix, git's `autocrlf=input`) drops the CR byte before every LF
that had one, in the data and in the framing alike. The header still says how long each record
was, so the next header shows how many CR bytes a record lost (k), and the CR bytes can only have
stood before the LF bytes it still has. Which k of its m LF bytes had them is found from the data
CRC by linearity (`crcmath`): putting a byte back at p changes the final CRC by the CRC register
there carried to the end, so the right placement is the one whose changes add up to the
difference, found by sorted lookups instead of a CRC per placement. A placement is kept only
when it is the one placement that passes (both CRCs then prove the record).

A conversion LF -> CR LF (unix2dos, git's `autocrlf=true` on checkout, FTP's ASCII mode) is undone
by turning every CR LF back into LF; the records that held a CR LF of their own then lost that CR,
which is the case above.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from math import comb, lgamma, log

import numpy as np

from tfrview.core.limits import (
    LINE_ENDINGS_HEAD_BYTES,
    LINE_ENDINGS_HEAD_RECORDS,
    LOST_CR_MAX,
    PROOF_DETECT_SECONDS,
    PROOF_SECONDS,
    PROOF_SPACE,
    PROOF_WORK,
)
from tfrview.core.tfrecord.bitflip import MAX_REPAIR_BYTES, one_flipped_bit
from tfrview.core.tfrecord.crcmath import byte_table, registers_before, shift, z, z_inverse
from tfrview.core.tfrecord.framing import (
    HEADER_SIZE,
    U32,
    Compression,
    crc32c_function,
    masked_crc,
    masked_length_crcs,
    unmask,
    valid_header_positions,
)

_log = logging.getLogger(__name__)
CR, LF = 0x0D, 0x0A


@dataclass(frozen=True)
class Walked:
    """One stretch of the converted stream: a record proven whole (data) or bytes that are not."""

    start: int  # in the stream walked
    end: int
    data: bytes | None  # the record as written, proven by both CRCs; None: not proven
    crs: int = 0  # CR bytes put back into it (framing included)
    flipped: str = ""  # a flipped bit restored as well, in words
    why: str = ""  # why nothing could be proven
    framed: bool = True  # False: bytes that frame no record (not a record left out)


class ProofBudget:
    """What the proof searches of one walk may spend: each search at most limits.PROOF_WORK steps,
    counted before it starts (from m and k alone, so a search that would explode never begins),
    and all of them together `seconds` (checked as they run: a slow machine's net under the count).
    `name` is the limit the seconds come from, said when it is hit."""

    def __init__(
        self, seconds: float = PROOF_SECONDS, name: str = "PROOF_SECONDS", work: int = PROOF_WORK
    ) -> None:
        self.deadline = time.monotonic() + seconds
        self.seconds, self.name, self.work = seconds, name, work
        self.hit = False  # a search was stopped or not begun for the seconds

    def over(self) -> bool:
        return time.monotonic() > self.deadline

    def spent(self) -> str:
        self.hit = True
        return f"{_BUDGET} (limits.{self.name}: the searches of this file took their {self.seconds:g} s)"


_BUDGET = "proof search budget exceeded"
_SETUP_STEPS = 32  # steps an LF byte costs before the search (its register, carried to the end)
_PREFIX_STEPS = 150  # steps each enumerated prefix of a head costs (Python's share: ~20 us)
_CHUNK = 1 << 16  # array elements looked up at once: heads are batched to about this many
_SEEN_BITS = 20  # a lookup first tests the low bits of its value in a table of this many bits (1 MB)
_SEEN_MASK = np.uint32((1 << _SEEN_BITS) - 1)


def ways_within(m: int, k: int, bound: int) -> int | None:
    """C(m, k) when it is at most bound, else None, without ever computing a larger number:
    C(m, i) grows with i up to m/2, and doubles at least every step there, so this stops within
    about log2(bound) steps whatever m and k are (C(m, k) itself can have millions of digits)."""
    if k < 0 or k > m:
        return 0
    ways = 1
    for i in range(min(k, m - k)):
        ways = ways * (m - i) // (i + 1)  # C(m, i + 1), exact
        if ways > bound:
            return None
    return ways


def _log10_comb(m: int, k: int) -> float:
    """log10 C(m, k), from log-gamma: for numbers too large to write out."""
    return (lgamma(m + 1) - lgamma(k + 1) - lgamma(m - k + 1)) / log(10)


def search_steps(m: int, k: int) -> int:
    """The steps a proof search for k lost CR bytes among m LF bytes takes (the array elements it
    reads: its setup, then m lookups for each of the C(m, k'-2) heads, enumerated as C(m, k'-3)
    prefixes, where k' is the smaller of k and m - k). Called once C(m, k) is known to be at most
    PROOF_SPACE: the heads, no more than C(m, k), are then cheap to count."""
    kk = min(k, m - k)
    heads = comb(m, kk - 2) if kk >= 2 else 0
    prefixes = comb(m, kk - 3) if kk >= 3 else 0
    return m * (_SETUP_STEPS + kk) + heads * m + prefixes * _PREFIX_STEPS


def put_back_crs(
    data: bytes, k: int, stored_masked: int, lf_after: bool = False, budget: ProofBudget | None = None
) -> tuple[bytes | None, str]:
    """The data with k CR bytes put back before k of its LF bytes (and at its end when the byte
    after it is an LF: `lf_after`), the one placement whose data CRC matches; else None and why.
    The search is bounded before it starts (PROOF_SPACE placements, PROOF_WORK steps) and as it
    runs (the budget's seconds)."""
    if k == 0:
        return (data, "") if masked_crc(data) == stored_masked else (None, "its data CRC fails")
    lfs = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == LF)
    if lf_after:
        lfs = np.append(lfs, len(data))
    m = len(lfs)
    if k > m:
        return None, f"it lost {k} CR bytes but has only {m} LF bytes to put them before"
    if ways_within(m, k, PROOF_SPACE) is None:
        exp = _log10_comb(m, k)
        many = f"{comb(m, k):,}" if exp < 12 else f"about 10^{int(exp)}"
        return None, (
            f"{many} ways to put back its {k} lost CR bytes: its data CRC cannot single one out "
            "(limits.PROOF_SPACE)"
        )
    budget = budget or ProofBudget()
    steps = search_steps(m, k)
    if steps > budget.work:
        return None, (
            f"{_BUDGET} (limits.PROOF_WORK: placing its {k} lost CR bytes among its {m:,} LF bytes "
            f"takes about {steps:,} steps, over the limit of {budget.work:,})"
        )
    if budget.over():
        return None, budget.spent()
    if k <= m - k:
        found = _search_insertions(data, lfs, k, stored_masked, budget)
    else:  # the fewer: which m - k LF bytes kept no CR
        found = _search_removals(data, lfs, m - k, stored_masked, lf_after, budget)
        found = [tuple(sorted(set(range(m)) - set(f))) for f in found] if found is not None else None
    if found is None:
        return None, budget.spent()
    if not found:
        return None, f"no placement of its {k} lost CR bytes passes its data CRC"
    if len(found) > 1:
        return None, f"more than one placement of its {k} lost CR bytes passes its data CRC"
    fixed = _with_crs(data, [int(lfs[i]) for i in found[0]])
    return (fixed, "") if masked_crc(fixed) == stored_masked else (None, "its data CRC fails")


def _with_crs(data: bytes, at: list[int]) -> bytes:
    """The data with a CR byte before each position of `at` (ascending), in one join."""
    pieces, prev = [], 0
    for p in at:
        pieces += [data[prev:p], b"\r"]
        prev = p
    pieces.append(data[prev:])
    return b"".join(pieces)


def _search_insertions(
    data: bytes, lfs: np.ndarray, k: int, stored_masked: int, budget: ProofBudget
) -> list[tuple[int, ...]] | None:
    """Placements of k CR bytes before LF bytes of `data` that pass the data CRC (up to 2)."""
    target = np.uint32(crc32c_function()(data) ^ unmask(stored_masked))
    r = registers_before(data, lfs)
    e = z(r) ^ r ^ byte_table()[CR]  # the change of putting a CR at p, before it is carried to the end
    c = [shift(e, len(data) - lfs)]  # c[j][i]: its change at the end when j more CR bytes follow it
    for _ in range(1, k):
        c.append(z(c[-1]))
    return _placements(c, k, target, 2, budget)


def _search_removals(
    data: bytes, lfs: np.ndarray, s: int, stored_masked: int, lf_after: bool, budget: ProofBudget
) -> list[tuple[int, ...]] | None:
    """Which s of the LF bytes had no CR, when most had one: the same search from the other side,
    every CR put back and s taken out again (taking one out is the same change as putting it in,
    carried one byte less for each one taken out after it: z's inverse)."""
    full = data.replace(b"\n", b"\r\n") + (b"\r" if lf_after else b"")
    if s == 0:
        return [()] if masked_crc(full) == stored_masked else []
    at = lfs + np.arange(len(lfs))  # each CR's place in `full`
    target = np.uint32(crc32c_function()(full) ^ unmask(stored_masked))
    r = registers_before(full, at)
    e = z(r) ^ r ^ byte_table()[CR]
    c = [shift(e, len(full) - 1 - at)]  # c[j][i]: the change at the end when j more are taken out after it
    for _ in range(1, s):
        c.append(z_inverse(c[-1]))
    return _placements(c, s, target, 2, budget)


def _placements(
    c: list[np.ndarray], k: int, target: np.uint32, limit: int, budget: ProofBudget
) -> list[tuple[int, ...]] | None:
    """Up to `limit` ascending index tuples a_1 < ... < a_k with XOR of c[k-i][a_i] equal to target;
    None when the budget's time ran out first. The first k-2 by enumeration, in batches of heads
    looked up together; the last two by lookups in the sorted c[0]."""
    m = len(c[0])
    if k == 1:
        return [(int(i),) for i in np.flatnonzero(c[0] == target)[:limit]]
    order = np.argsort(c[0], kind="stable")
    last = c[0][order]
    seen = np.zeros(1 << _SEEN_BITS, dtype=bool)  # c[0]'s values by their low bits: most lookups end here
    seen[last & _SEEN_MASK] = True
    found: list[tuple[int, ...]] = []
    visited = 0
    for h, rest in _heads(c, k, target, max(1, _CHUNK // m)):
        if budget.over():
            return None
        want = (rest[:, None] ^ c[1][None, :]).ravel()
        maybe = np.flatnonzero(seen[want & _SEEN_MASK])
        row, a = np.divmod(maybe, m)
        keep = a > h[row, -1] if k > 2 else np.ones(len(maybe), dtype=bool)
        maybe, row, a = maybe[keep], row[keep], a[keep]
        left = np.searchsorted(last, want[maybe], "left")
        right = np.searchsorted(last, want[maybe], "right")
        for j in np.flatnonzero(right > left):
            for b in order[left[j] : right[j]]:
                visited += 1
                if visited % 4096 == 0 and budget.over():
                    return None
                if int(b) > a[j]:
                    found.append((*(int(x) for x in h[row[j]]), int(a[j]), int(b)))
                    if len(found) >= limit:
                        return found
    return found


def _heads(
    c: list[np.ndarray], k: int, target: np.uint32, per: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of about `per` heads (the first k-2 indices of a placement, ascending) with what
    is left of the target once their changes are taken out: (heads, rest). The head's last index
    is spread over an array for each of the C(m, k-3) prefixes enumerated before it."""
    m = len(c[0])
    if k == 2:
        yield np.zeros((1, 0), dtype=np.intp), np.array([target], dtype=np.uint32)
        return
    hs: list[np.ndarray] = []
    rs: list[np.ndarray] = []
    n = 0
    for prefix in combinations(range(m), k - 3):
        base = target
        for i, p in enumerate(prefix):
            base ^= c[k - 1 - i][p]
        t = np.arange(prefix[-1] + 1 if prefix else 0, m - 2)  # room for two more after it
        if not len(t):
            continue
        h = np.empty((len(t), k - 2), dtype=np.intp)
        h[:, :-1] = prefix
        h[:, -1] = t
        hs.append(h)
        rs.append(base ^ c[2][t])
        n += len(t)
        if n >= per:
            yield np.concatenate(hs), np.concatenate(rs)
            hs, rs, n = [], [], 0
    if hs:
        yield np.concatenate(hs), np.concatenate(rs)


def _header_at(buf: bytes, pos: int) -> tuple[int, int] | None:
    """(length, stream bytes the header took) of a header at pos, whole or with one lost CR put
    back (11 bytes; the LF after it may be the first byte of the data); None when neither proves
    a header."""
    h = buf[pos : pos + HEADER_SIZE]
    if len(h) == HEADER_SIZE and masked_crc(h[:8]) == U32.unpack_from(h, 8)[0]:
        return int.from_bytes(h[:8], "little"), HEADER_SIZE
    hits = []
    for i in (j for j in range(len(h)) if h[j] == LF):
        fixed = h[:i] + b"\r" + h[i : HEADER_SIZE - 1]
        if len(fixed) == HEADER_SIZE and masked_crc(fixed[:8]) == U32.unpack_from(fixed, 8)[0]:
            hits.append(int.from_bytes(fixed[:8], "little"))
    return (hits[0], HEADER_SIZE - 1) if len(set(hits)) == 1 else None


def _next_header(buf: bytes, start: int, stop: int | None = None) -> int:
    """The first offset in [start, stop) where a whole header stands, or stop (the end of buf
    unless given). Blocks grow from 4 KB to 1 MB: a header near (the usual case) costs no scan of
    a whole MB."""
    block = 1 << 12
    n = len(buf)
    stop = n if stop is None else min(stop, n)
    s = start
    while s < min(stop, n - HEADER_SIZE + 1):
        count = min(block, n - HEADER_SIZE + 1 - s, stop - s)
        hits = valid_header_positions(buf[s : s + count + HEADER_SIZE - 1], count, n - s - 16)
        if len(hits):
            return s + int(hits[0])
        s += count
        block = min(block * 4, 1 << 20)
    return stop


class LfCounts:
    """LF bytes between two offsets of a stream, from counts kept per 4 KB block (built on first
    use, one pass): headers whose claimed spans overlap each had their span counted, megabytes
    for each header of a hostile file (86 ms each: ~47 minutes to walk 32 MB of them)."""

    BLOCK = 1 << 12

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self._prefix: np.ndarray | None = None

    def count(self, a: int, b: int) -> int:
        b = min(b, len(self.buf))
        if b - a <= 2 * self.BLOCK:
            return self.buf.count(b"\n", a, b) if b > a else 0
        if self._prefix is None:
            per = [self.buf.count(b"\n", s, s + self.BLOCK) for s in range(0, len(self.buf), self.BLOCK)]
            self._prefix = np.concatenate([[0], np.cumsum(per, dtype=np.int64)])
        first, last = -(-a // self.BLOCK), b // self.BLOCK  # the whole blocks inside [a, b)
        inside = int(self._prefix[last] - self._prefix[first])
        return (
            self.buf.count(b"\n", a, first * self.BLOCK)
            + inside
            + self.buf.count(b"\n", last * self.BLOCK, b)
        )


def _record_end(buf: bytes, pos: int, hl: int, length: int, lfs: LfCounts | None = None) -> int | None:
    """Where the record ends in the stream (the next header, or the end of buf): the first end
    that allows for the CR bytes the record could have lost."""
    n = len(buf)
    body = pos + hl
    if body + length + 4 - LOST_CR_MAX > n:
        return None  # not even the most CR bytes looked for bring its end into the stream
    most = min((lfs or LfCounts(buf)).count(body, body + length + 4), LOST_CR_MAX)
    hi, lo = min(body + length + 4, n), max(body + length + 4 - most, body + 4)
    if hi < lo:
        return None
    if hi == n:
        return n
    for e in _maybe_headers(buf, lo, hi)[::-1]:  # the fewest lost first; each confirmed one by one
        if _header_at(buf, int(e)) is not None:
            return int(e)
    return None


def _maybe_headers(buf: bytes, lo: int, hi: int) -> np.ndarray:
    """The offsets in [lo, hi] where `_header_at` may find a header (a whole one, or one with a lost
    CR put back before one of its LF bytes), tested together: up to 4,097 ends a record, 12 ways
    each, were 50,000 CRCs called one by one (~0.3 s a record of LF bytes). A length of 2^40 bytes
    or more (a CR, or any byte but zero, in its top three bytes) is no record's: no CRC for it."""
    hi = min(hi, len(buf) - (HEADER_SIZE - 1))
    if hi < lo:
        return np.empty(0, dtype=np.int64)
    raw = np.frombuffer(buf[lo : hi + HEADER_SIZE] + b"\0", dtype=np.uint8)  # a header cut by the end: a pad
    win = np.lib.stride_tricks.sliding_window_view(raw, HEADER_SIZE)[: hi - lo + 1]

    def valid(rows: np.ndarray) -> np.ndarray:
        stored = np.ascontiguousarray(rows[:, 8:]).view("<u4").ravel()
        return masked_length_crcs(np.ascontiguousarray(rows[:, :8])) == stored

    small = (win[:, 5] | win[:, 6] | win[:, 7]) == 0  # bytes 5-7 of the length, as they stand
    small_after = (win[:, 4] | win[:, 5] | win[:, 6]) == 0  # ... once a CR before them moves them on
    ok = np.zeros(len(win), dtype=bool)
    at = np.flatnonzero(small)
    if len(at):
        ok[at] = valid(win[at])
    for i in (*range(5), *range(8, HEADER_SIZE)):  # a CR put back at 5-7 would be in the length's top bytes
        at = np.flatnonzero((win[:, i] == LF) & (small_after if i < 5 else small))
        if len(at):
            cr = np.full((len(at), 1), CR, dtype=np.uint8)
            ok[at] |= valid(np.concatenate([win[at, :i], cr, win[at, i : HEADER_SIZE - 1]], axis=1))
    return lo + np.flatnonzero(ok)


def _restore(buf: bytes, body: int, e: int, lost: int, budget: ProofBudget) -> tuple[bytes | None, str, str]:
    """The record's data between body and its end e, with `lost` CR bytes put back among its data
    and its stored CRC, or a flipped bit restored when none were lost: (data, flipped, why)."""
    if lost == 0:
        data, stored = buf[body : e - 4], U32.unpack_from(buf, e - 4)[0]
        if masked_crc(data) == stored:
            return data, "", ""
        fix = one_flipped_bit(data, stored) if len(data) <= MAX_REPAIR_BYTES else None
        if fix is None:
            return None, "", "its data CRC fails, and no one flipped bit explains it"
        return (
            fix.data,
            (
                "its stored CRC had one flipped bit"
                if fix.in_crc
                else f"one flipped bit restored (data byte {fix.byte:,}, bit {fix.bit})"
            ),
            "",
        )
    data, stored = buf[body : e - 4], U32.unpack_from(buf, e - 4)[0]
    fixed, why = put_back_crs(data, lost, stored, buf[e - 4] == LF, budget)
    if fixed is not None:
        return fixed, "", ""
    tail = buf[
        e - 3 : e + 1
    ]  # one lost CR was in the stored CRC (before its LF, or before the next header's)
    for i in (j for j in range(len(tail)) if tail[j] == LF):
        crc_bytes = (tail[:i] + b"\r" + tail[i:])[:4]
        got, other = put_back_crs(
            buf[body : e - 3], lost - 1, U32.unpack_from(crc_bytes)[0], buf[e - 3] == LF, budget
        )
        if got is not None:
            return got, "", ""
        if other.startswith(_BUDGET) and not why.startswith(_BUDGET):
            why = other  # a placement not searched is not one ruled out: say the budget
    return None, "", why


def walk(buf: bytes, budget: ProofBudget | None = None) -> Iterator[Walked]:
    """Every record of a stream whose CR LF bytes became LF, each proven whole with its CR bytes
    put back, or the stretch that could not be proven and why. Its searches share `budget`
    (limits.PROOF_SECONDS unless given)."""
    budget = budget or ProofBudget()
    lfs = LfCounts(buf)
    pos, n = 0, len(buf)
    while pos < n:
        head = _header_at(buf, pos)
        end = _record_end(buf, pos, head[1], head[0], lfs) if head else None
        if head is None or end is None:
            nxt = _next_header(buf, pos + 1)
            yield Walked(
                pos,
                nxt,
                None,
                why="bytes that frame no record, with or without CR bytes put back",
                framed=False,
            )
            pos = nxt
            continue
        length, hl = head
        lost = length + HEADER_SIZE + 4 - (end - pos)
        data, flipped, why = _restore(buf, pos + hl, end, lost - (HEADER_SIZE - hl), budget)
        if data is not None and len(data) != length:
            data, why = None, "its length does not match its header"
        if data is None:  # unproven: the whole records its end would swallow are walked on their own
            end = _next_header(buf, pos + 1, end)
        yield Walked(pos, end, data, lost if data is not None else 0, flipped, why)
        pos = end


class Conversion(enum.StrEnum):
    TO_CRLF = "every LF byte became CR LF (as unix2dos, git's autocrlf on checkout or FTP's ASCII mode do)"
    TO_LF = "CR LF bytes became LF (as dos2unix or git's autocrlf=input do)"


@dataclass(frozen=True)
class Evidence:
    conversion: Conversion
    walked: int  # records of the file's head looked at
    proven: int  # of them, proven whole once the conversion is undone
    restored: int  # of them, with CR bytes put back
    every_record: bool = False  # the records walked are all the file has
    cut: str = ""  # the limit that stopped its proof searches, if one did (fewer records proven)


def _tally(buf: bytes, records: int, whole: bool, budget: ProofBudget) -> tuple[int, int, int]:
    walked = proven = restored = 0
    for w in walk(buf, budget):
        if w.end >= len(buf) and w.data is None and not whole:
            break  # the head's cut, not evidence
        walked += 1
        proven += w.data is not None
        restored += w.crs > 0 and w.data is not None
        if walked >= records:
            break
    return walked, proven, restored


def detect(
    head: bytes,
    whole: bool = False,
    records: int = LINE_ENDINGS_HEAD_RECORDS,
    seconds: float = PROOF_DETECT_SECONDS,
) -> Evidence | None:
    """The line-ending conversion the first records of a file prove, if any: CR bytes put back
    that the CRCs confirm (CR LF became LF), or many more records whole once every CR LF is LF
    again than as they are (LF became CR LF). A file that only holds CR LF in its data gains
    nothing from the undo: its records that held one get it back from `walk`, no more. `whole`:
    the head is the whole file (its last record is not cut by the sample). Its searches together
    take at most `seconds` (limits.PROOF_DETECT_SECONDS): naming a cause must stay quick; when
    they are cut, the evidence says so (`cut`), and so does the log when there is none."""
    budget = ProofBudget(seconds, "PROOF_DETECT_SECONDS")

    def cut() -> str:
        return budget.name if budget.hit else ""

    walked, proven, restored = _tally(head, records, whole, budget)
    if restored and 2 * proven > walked:
        return Evidence(Conversion.TO_LF, walked, proven, restored, whole and walked < records, cut())
    if b"\r\n" in head:
        w2, p2, r2 = _tally(head.replace(b"\r\n", b"\n"), records, whole, budget)
        if p2 >= 2 and p2 > proven and 2 * p2 > w2:  # more records whole undone than as they are
            return Evidence(Conversion.TO_CRLF, w2, p2, r2, whole and w2 < records, cut())
    if budget.hit:
        _log.info("line-ending conversion not judged: %s", budget.spent())
    return None


def conversion_of(source) -> Evidence | None:
    """What `detect` says of a plain file's head (a compressed file's bytes are no records)."""
    if source.compression != Compression.NONE:
        return None
    head = min(source.file_size, LINE_ENDINGS_HEAD_BYTES)
    return detect(source.read(0, head), whole=head == source.file_size)


def undone(conversion: Conversion, raw: bytes) -> bytes:
    """The stream to walk: the file with every CR LF back to LF when LF had become CR LF (the
    records that held a CR LF of their own then lack its CR, which `walk` puts back)."""
    return raw.replace(b"\r\n", b"\n") if conversion is Conversion.TO_CRLF else raw


def spans(buf: bytes) -> Iterator[tuple[int, int, bool]]:
    """The stretches `walk` yields, (start, end, whether a record is framed there), without proving
    any record (no CRC search): how the framing numbers the records of a converted file cheaply."""
    pos, n = 0, len(buf)
    while pos < n:
        head = _header_at(buf, pos)
        end = _record_end(buf, pos, head[1], head[0]) if head else None
        if head is None or end is None:
            nxt = _next_header(buf, pos + 1)
            yield pos, nxt, False
            pos = nxt
            continue
        yield pos, end, True
        pos = end
