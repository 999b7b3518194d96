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
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from tfrview.core.limits import PROOF_SPACE
from tfrview.core.tfrecord.bitflip import MAX_REPAIR_BYTES, one_flipped_bit
from tfrview.core.tfrecord.crcmath import byte_table, registers_before, shift, z
from tfrview.core.tfrecord.framing import (
    HEADER_SIZE,
    U32,
    crc32c_function,
    masked_crc,
    unmask,
    valid_header_positions,
)

CR, LF = 0x0D, 0x0A
_MAX_LOST = 4096  # CR bytes a record may have lost: ends beyond this are not looked for


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


def put_back_crs(data: bytes, k: int, stored_masked: int, lf_after: bool = False) -> tuple[bytes | None, str]:
    """The data with k CR bytes put back before k of its LF bytes (and at its end when the byte
    after it is an LF: `lf_after`), the one placement whose data CRC matches; else None and why."""
    if k == 0:
        return (data, "") if masked_crc(data) == stored_masked else (None, "its data CRC fails")
    lfs = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == LF)
    if lf_after:
        lfs = np.append(lfs, len(data))
    m = len(lfs)
    if k > m:
        return None, f"it lost {k} CR bytes but has only {m} LF bytes to put them before"
    ways = comb(m, k)
    if ways > PROOF_SPACE:
        many = f"{ways:,}" if ways < 10**12 else f"about 10^{len(str(ways)) - 1}"
        return None, f"{many} ways to put back its {k} lost CR bytes: its data CRC cannot single one out"
    crc = crc32c_function()
    target = np.uint32(crc(data) ^ unmask(stored_masked))
    r = registers_before(data, lfs)
    e = z(r) ^ r ^ byte_table()[CR]  # the change of putting a CR at p, before it is carried to the end
    c = [shift(e, len(data) - lfs)]  # c[j][i]: its change at the end when j more CR bytes follow it
    for _ in range(1, k):
        c.append(z(c[-1]))
    found = _placements(c, k, target, limit=2)
    if not found:
        return None, f"no placement of its {k} lost CR bytes passes its data CRC"
    if len(found) > 1:
        return None, f"more than one placement of its {k} lost CR bytes passes its data CRC"
    out = bytearray(data)
    for i in sorted(found[0], reverse=True):
        out[int(lfs[i]) : int(lfs[i])] = b"\r"
    fixed = bytes(out)
    return (fixed, "") if masked_crc(fixed) == stored_masked else (None, "its data CRC fails")


def _placements(c: list[np.ndarray], k: int, target: np.uint32, limit: int) -> list[tuple[int, ...]]:
    """Up to `limit` ascending index tuples a_1 < ... < a_k with XOR of c[k-i][a_i] equal to target."""
    m = len(c[0])
    if k == 1:
        return [(int(i),) for i in np.flatnonzero(c[0] == target)[:limit]]
    order = np.argsort(c[0], kind="stable")
    last = c[0][order]
    found: list[tuple[int, ...]] = []
    for head in combinations(range(m), k - 2):  # the first k-2 by enumeration, the last two by lookup
        rest = target
        for i, a in enumerate(head):
            rest ^= c[k - 1 - i][a]
        lo = head[-1] + 1 if head else 0
        if lo >= m - 1:
            continue
        want = rest ^ c[1][lo:]
        left = np.searchsorted(last, want, "left")
        right = np.searchsorted(last, want, "right")
        for off in np.flatnonzero(right > left):
            a = lo + int(off)
            for b in order[left[off] : right[off]]:
                if int(b) > a:
                    found.append((*head, a, int(b)))
                    if len(found) >= limit:
                        return found
    return found


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


def _next_header(buf: bytes, start: int) -> int:
    """The first offset >= start where a whole header stands, or the end of buf."""
    block = 1 << 20
    n = len(buf)
    for s in range(start, n - HEADER_SIZE + 1, block):
        count = min(block, n - HEADER_SIZE + 1 - s)
        hits = valid_header_positions(buf[s : s + count + HEADER_SIZE - 1], count, n - s - 16)
        if len(hits):
            return s + int(hits[0])
    return n


def _record_end(buf: bytes, pos: int, hl: int, length: int) -> int | None:
    """Where the record ends in the stream (the next header, or the end of buf): the first end
    that allows for the CR bytes the record could have lost."""
    n = len(buf)
    body = pos + hl
    most = min(buf.count(b"\n", body, body + length + 4), _MAX_LOST)
    for k in range(most + 1):
        e = body + length + 4 - k
        if e > n:
            continue
        if e < body + 4:
            break
        if e == n or _header_at(buf, e) is not None:
            return e
    return None


def _restore(buf: bytes, body: int, e: int, lost: int) -> tuple[bytes | None, str, str]:
    """The record's data between body and its end e, with `lost` CR bytes put back among its data
    and its stored CRC, or a flipped bit restored when none were lost: (data, flipped, why)."""
    if lost == 0:
        data, stored = buf[body : e - 4], U32.unpack_from(buf, e - 4)[0]
        if masked_crc(data) == stored:
            return data, "", ""
        fix = one_flipped_bit(data, stored) if len(data) <= MAX_REPAIR_BYTES else None
        if fix is None:
            return None, "", "its data CRC fails, and no one flipped bit explains it"
        return fix.data, ("its stored CRC had one flipped bit" if fix.in_crc else
                          f"one flipped bit restored (data byte {fix.byte:,}, bit {fix.bit})"), ""  # fmt: skip
    data, stored = buf[body : e - 4], U32.unpack_from(buf, e - 4)[0]
    fixed, why = put_back_crs(data, lost, stored, buf[e - 4] == LF)
    if fixed is not None:
        return fixed, "", ""
    tail = buf[e - 3 : e + 1]  # one lost CR was in the stored CRC (before its LF, or before the next header's)
    for i in (j for j in range(len(tail)) if tail[j] == LF):
        crc_bytes = (tail[:i] + b"\r" + tail[i:])[:4]
        got, _ = put_back_crs(buf[body : e - 3], lost - 1, U32.unpack_from(crc_bytes)[0], buf[e - 3] == LF)
        if got is not None:
            return got, "", ""
    return None, "", why


def walk(buf: bytes) -> Iterator[Walked]:
    """Every record of a stream whose CR LF bytes became LF, each proven whole with its CR bytes
    put back, or the stretch that could not be proven and why."""
    pos, n = 0, len(buf)
    while pos < n:
        head = _header_at(buf, pos)
        end = _record_end(buf, pos, head[1], head[0]) if head else None
        if head is None or end is None:
            nxt = _next_header(buf, pos + 1)
            yield Walked(pos, nxt, None, why="bytes that frame no record, with or without CR bytes put back", framed=False)
            pos = nxt
            continue
        length, hl = head
        lost = length + HEADER_SIZE + 4 - (end - pos)
        data, flipped, why = _restore(buf, pos + hl, end, lost - (HEADER_SIZE - hl))
        if data is not None and len(data) != length:
            data, why = None, "its length does not match its header"
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


HEAD_BYTES = 4 << 20  # what of a file is read to judge a conversion
HEAD_RECORDS = 64  # records of it walked at most


def _tally(buf: bytes, records: int, whole: bool) -> tuple[int, int, int]:
    walked = proven = restored = 0
    for w in walk(buf):
        if w.end >= len(buf) and w.data is None and not whole:
            break  # the head's cut, not evidence
        walked += 1
        proven += w.data is not None
        restored += w.crs > 0 and w.data is not None
        if walked >= records:
            break
    return walked, proven, restored


def detect(head: bytes, whole: bool = False, records: int = HEAD_RECORDS) -> Evidence | None:
    """The line-ending conversion the first records of a file prove, if any: CR bytes put back
    that the CRCs confirm (CR LF became LF), or many more records whole once every CR LF is LF
    again than as they are (LF became CR LF). A file that only holds CR LF in its data gains
    nothing from the undo: its records that held one get it back from `walk`, no more. `whole`:
    the head is the whole file (its last record is not cut by the sample)."""
    walked, proven, restored = _tally(head, records, whole)
    if restored and 2 * proven > walked:
        return Evidence(Conversion.TO_LF, walked, proven, restored, whole and walked < records)
    if b"\r\n" in head:
        w2, p2, r2 = _tally(head.replace(b"\r\n", b"\n"), records, whole)
        if p2 >= 2 and p2 > proven and 2 * p2 > w2:  # more records whole undone than as they are
            return Evidence(Conversion.TO_CRLF, w2, p2, r2, whole and w2 < records)
    return None


def conversion_of(source) -> Evidence | None:
    """What `detect` says of a plain file's head (a compressed file's bytes are no records)."""
    if source.compression != "none":
        return None
    head = min(source.file_size, HEAD_BYTES)
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
