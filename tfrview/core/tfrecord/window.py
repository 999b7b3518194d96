"""Whole records found in a window of bytes held in memory, at numpy's speed: the chain of lengths
followed by one lean loop (whole runs at once where lengths repeat), every header CRC checked once
per distinct length, every data CRC by one CRC over a copy of the window. The one fast path for
clean bytes, shared by a big file's parts (`parts.py`) and the small shards read whole
(`smallfile.py`); anything not whole is left to the sequential framing of `index.py`, which says
why."""

from __future__ import annotations

from array import array

import numpy as np

from tfrview.core.tfrecord.framing import (
    HEADER_SIZE,
    OVERHEAD,
    crc32c_module,
    length_crcs,
)
from tfrview.core.tfrecord.index import _bad_crcs

MORE, LONG, NOT_WHOLE = range(3)  # how a window's framing ends (frame_window)
_zero_crcs: dict[int, int] = {}  # crc32c of n zero bytes, by n


def frame_window(
    span: bytes | memoryview, n: int, hi: int, at_end: bool, scratch: bytearray | None = None
) -> tuple[np.ndarray, int, int]:
    """The whole records of one window of n bytes that start before `hi` (relative positions), where
    framing goes on, and how: MORE (at the next window, or at or past hi), LONG (a record longer
    than the window starts there), NOT_WHOLE (a record whose header or data CRC fails starts there,
    or the file ends inside one). `at_end`: the window ends where the file does. `scratch`: the
    buffer of `all_whole`'s copy, kept by a caller that frames many windows (no fresh pages a window).

    The chain of records is followed by one lean Python loop (a length read a record), and by
    whole runs of records at once where their lengths repeat (`_chain`); the header CRCs are then
    checked by numpy, once per distinct length, and the data CRCs of all the window's records by
    one CRC over a copy of the window (`all_whole`), one at a time only when that fails."""
    raw = np.frombuffer(span, dtype=np.uint8, count=n)
    stop = min(n - HEADER_SIZE, hi - 1)  # a whole header in the window, and a start before hi
    starts, p = _chain(memoryview(span).cast("B")[:n], raw, stop)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    if len(ends):
        ends[-1] = min(p, 1 << 62)
    why = MORE
    if p > n:  # the last record does not fit in the window
        p = int(starts[-1])
        starts, ends = starts[:-1], ends[:-1]
        why = NOT_WHOLE if at_end else LONG if p == 0 else MORE
    elif p < hi and p != n:  # fewer than a header's bytes left before the window's end
        why = NOT_WHOLE if at_end else MORE
    if not len(starts):
        return starts, p, why
    lengths = ends - starts - OVERHEAD
    crcs, uniq, inverse = length_crcs(lengths)
    ok = _u32s(raw)[starts + 8] == crcs
    if not ok.all():  # framing stops at the first header that fails
        j = int(np.argmin(ok))
        p, why = int(starts[j]), NOT_WHOLE
        starts, ends, lengths, inverse = starts[:j], ends[:j], lengths[:j], inverse[:j]
        if not j:
            return starts, p, why
    if not all_whole(raw, starts, ends, uniq, inverse, scratch):
        bad = _bad_crcs(memoryview(span)[:n], starts + HEADER_SIZE, lengths, 0)
        if bad:
            j = bad[0]
            return starts[:j], int(starts[j]), NOT_WHOLE
    return starts, p, why


_MATCH = 16  # the last steps (start to start) that must have been seen before for a pattern to be guessed
_HISTORY = 1024  # the steps looked back over for them: a pattern of lengths up to ~1,000 records long
_RUN = np.arange(_MATCH)
_TRIED = 8  # the periods tried at a look (where the last steps were seen, nearest first, each
# ruling out those that do not explain the step it failed at)
_FIRST_GUESS = 256  # records a first guess predicts (then 16 times more while guesses hold)
_LOOK_BYTES = 4096  # bytes the loop frames before it looks for a pattern (then twice as many each
_BACKOFF_BYTES = 8 << 20  # time none is found, up to this: a window's, ~11 looks a window at most)
_SMALL = 2048  # looked for only where the records since the last look average fewer bytes than this


def _chain(view: memoryview, raw: np.ndarray, stop: int) -> tuple[np.ndarray, int]:
    """(the start of every record of the chain from 0 that starts at or before `stop`, the start
    after the last), as the lean loop finds them (the u64 length at each start, plus OVERHEAD),
    ~130 ns a record.

    Small records often repeat a pattern of lengths (one length; a schema's few sizes in turn; a
    writer cycling through a set of examples): when the last _MATCH steps were seen before in the
    last _HISTORY, the pattern since then is guessed to go on, the next starts predicted from it and
    every prediction checked at once by numpy against the length read at the predicted start (a
    start is certain when the record before it is, and that record's length is the predicted one).
    The chain goes on by the loop from the first that fails. The same starts as the loop alone, at
    ~10 ns a record where lengths repeat; where they do not, looks back off (one look at most
    every _BACKOFF_BYTES, ~30 us each)."""
    n = len(view)
    # the window as u64s at each of the 8 alignments: a length is one index into one of them (a
    # fifth less than struct's unpack_from a record), the starts kept in an int64 array.array that
    # numpy takes as it is
    lengths_at = [view[k : k + (n - k) // 8 * 8].cast("Q") for k in range(8)]
    out = array("q")
    add = out.append
    runs: list[np.ndarray] = []  # the starts before those in `out`, in order
    p = 0
    budget = _LOOK_BYTES
    mark, looked = 0, 0  # len(out) and p at the last look
    while p <= stop:
        lim = min(stop, p + budget)  # by bytes, not records: the loop's one test a record, as before
        while p <= lim:
            add(p)
            p += lengths_at[p & 7][p >> 3] + OVERHEAD
        if p > stop:
            break
        small = (len(out) - mark) * _SMALL > p - looked  # long records: the loop costs little a byte
        mark, looked = len(out), p
        recent = np.frombuffer(out[-_HISTORY - 1 :], dtype=np.int64)  # a copy: `out` grows on
        steps = _pattern(_last([*runs, recent], _HISTORY + 1), p) if small else None
        if steps is None:
            budget = min(budget * 2, _BACKOFF_BYTES)
            continue
        runs.append(np.frombuffer(out, dtype=np.int64))  # a view: `out` is let go, never grown
        out = array("q")  # again (an exported array.array refuses to resize: BufferError)
        add = out.append
        guess = _FIRST_GUESS
        while steps is not None and p <= stop:  # guesses 16 times longer while the pattern holds
            got, p, steps = _predicted(raw, p, stop, steps, guess)
            runs.append(got)
            guess *= 16
        budget = _LOOK_BYTES
        mark, looked = 0, p
    if not runs:  # nothing guessed: the loop's array as it is
        return (np.frombuffer(out, dtype=np.int64) if len(out) else np.empty(0, np.int64)), p
    if len(out):
        runs.append(np.frombuffer(out, dtype=np.int64))
    return np.concatenate(runs), p


def _last(runs: list[np.ndarray], k: int) -> np.ndarray:
    """The last `k` starts of `runs` (fewer when there are not as many), in one array."""
    tail: list[np.ndarray] = []
    for a in reversed(runs):
        tail.append(a[-k:])
        k -= len(tail[-1])
        if k <= 0:
            break
    return np.concatenate(tail[::-1]) if len(tail) > 1 else tail[0]


def _pattern(recent: np.ndarray, p: int) -> list[int] | None:
    """The steps (start to start) from the chain's `recent` starts and `p` (the next) that repeat,
    the next one first: the shortest period with which all of them repeat, among the places where
    their last _MATCH steps were seen before; None when there is none, or a step is too long to
    predict (over 32 bits)."""
    steps = np.empty(len(recent), np.int64)
    np.subtract(recent[1:], recent[:-1], out=steps[:-1])
    steps[-1] = p - int(recent[-1])
    m = len(steps)
    if m < _MATCH + 1:
        return None
    tail = steps[m - _MATCH :]
    # every earlier run of _MATCH steps that ends in the same step as the last, then the whole run
    ends = np.flatnonzero(steps[_MATCH - 1 : m - 1] == tail[-1])
    ends = ends[(steps[ends[:, None] + _RUN] == tail).all(axis=1)]
    periods = m - _MATCH - ends[::-1]  # the shortest first
    for _ in range(_TRIED):
        if not len(periods):
            break
        k = int(periods[0])
        wrong = np.flatnonzero(steps[k:] != steps[:-k])
        if not len(wrong):  # the whole history repeats with it
            got = steps[m - k :].tolist()
            return got if max(got) <= 1 << 32 else None
        b = int(wrong[-1]) + k  # a step this period does not explain: the longer ones left must
        periods = periods[1:]
        periods = periods[(periods > b) | (steps[np.maximum(b - periods, 0)] == steps[b])]
    return None


def _predicted(
    raw: np.ndarray, p: int, stop: int, steps: list[int], guess: int
) -> tuple[np.ndarray, int, list[int] | None]:
    """(the starts from `p` that the repeating `steps` predict and the bytes confirm, up to `guess`
    of them and none past `stop`; where the chain goes on; when every prediction held, the steps
    from there, else None). A predicted start is confirmed when every record before it from `p`
    has the predicted length (its u64 at its start)."""
    k = len(steps)
    count = min(guess, (stop - p) // min(steps) + 1)
    step = np.tile(np.asarray(steps, dtype=np.int64), -(-count // k))[:count]
    starts = np.empty(count, np.int64)
    starts[0] = p
    np.cumsum(step[:-1], out=starts[1:])
    starts[1:] += p
    starts = starts[: int(np.searchsorted(starts, stop, side="right"))]
    step = step[: len(starts)]
    u32 = _u32s(raw)
    ok = (u32[starts] == (step - OVERHEAD).astype(np.uint32)) & (u32[starts + 4] == 0)
    if ok.all():  # every one confirmed: the chain goes on after the last, the pattern where it is
        turn = len(starts) % k
        return starts, int(starts[-1] + step[-1]), steps[turn:] + steps[:turn]
    bad = int(np.argmin(ok))
    return starts[:bad], int(starts[bad]), None


def _u32s(raw: np.ndarray) -> np.ndarray:
    """A contiguous byte array seen as the little-endian u32 starting at each of its bytes (a
    stride of one byte, unaligned): a gather of u32s at any positions is one indexing, not four
    byte gathers and shifts; written through, it stores them."""
    return np.ndarray((max(0, len(raw) - 3),), dtype="<u4", buffer=raw, strides=(1,))


def _u32_at(raw: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The little-endian u32 at each position of `at` in a byte array."""
    return _u32s(raw)[at]


def all_whole(
    raw: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    uniq: np.ndarray,
    inverse: np.ndarray,
    scratch: bytearray | None = None,
) -> bool:
    """Do the data CRCs of all these contiguous records (valid headers) pass? One CRC over a copy of
    their bytes in which each footer is replaced by the raw CRC (no initial value, no final xor) its
    header and data must have if the footer is right: a record whose data and footer agree then adds
    nothing to the raw CRC of the whole (r(M || r(M)) = 0), so the copy's CRC is that of as many zero
    bytes. The header's share of that raw CRC depends on the length alone (`_length_share`). A
    record that does not agree always shows when it is the only one in the window (x^k is invertible
    modulo the CRC's polynomial); two that cancel each other have odds of 2^-32. When it fails, the
    records are checked one at a time (`_bad_crcs`)."""
    from tfrview.core.tfrecord.framing import MASK_DELTA

    crc32c = crc32c_module()

    a, z = int(starts[0]), int(ends[-1])
    if scratch is not None:  # the copy in a buffer the caller reuses: no fresh pages a window
        if len(scratch) < z - a:
            scratch.extend(bytes(z - a - len(scratch)))
        y = np.frombuffer(scratch, dtype=np.uint8, count=z - a)
        y[:] = raw[a:z]
    else:
        y = raw[a:z].copy()
    f = ends - 4 - a  # the footers, in the copy
    rot = _u32s(y)[f] - np.uint32(MASK_DELTA)
    # unmasked: crc32c of the data, if the footer is right
    crc = (rot >> np.uint32(17)) | (rot << np.uint32(15))
    share = np.array([_length_share(int(m)) for m in uniq], dtype=np.uint32)[inverse]
    _u32s(y)[f] = crc ^ share  # r(header || data), if the footer is right
    return crc32c.crc32c(y) == _zero_crc(z - a)


def _length_share(n: int) -> int:
    """What turns crc32c(data) of an n-byte record into r(header || data): crc32c of n zero bytes
    (the initial value and final xor) and r(header || n zero bytes) (the header's share), remembered."""
    got = _shares.get(n)
    if got is None:
        from tfrview.core.tfrecord.framing import encode_header

        crc32c = crc32c_module()
        zeros = _zeros()
        tail = memoryview(zeros)[:n] if n <= len(zeros) else bytes(n)
        header_share = crc32c.crc32c(tail, crc32c.crc32c(encode_header(n))) ^ _zero_crc(n + HEADER_SIZE)
        got = _zero_crc(n) ^ header_share
        if len(_shares) < 1 << 16:
            _shares[n] = got
    return got


_shares: dict[int, int] = {}


def _zero_crc(n: int) -> int:
    """crc32c of n zero bytes (the CRC's initial value and final xor alone), remembered."""
    crc32c = crc32c_module()
    got = _zero_crcs.get(n)
    if got is None:
        zeros = _zeros()
        got = crc32c.crc32c(bytes(n)) if n > len(zeros) else crc32c.crc32c(memoryview(zeros)[:n])
        if len(_zero_crcs) < 1 << 16:
            _zero_crcs[n] = got
    return got


_ZERO_BUF: list[bytes] = []


def _zeros() -> bytes:
    if not _ZERO_BUF:
        _ZERO_BUF.append(bytes(8 << 20))
    return _ZERO_BUF[0]


def records_failing(
    span: bytes | memoryview,
    starts: np.ndarray,
    lengths: np.ndarray,
    scratch: bytearray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Which of these records of a window held in memory fail their checks, as two bool arrays:
    (header: its length is not `lengths` or its length CRC fails; data: its data CRC fails).
    `starts` (relative to `span`, ascending) and `lengths` are what a framing said before: a copy
    checks the bytes it copies against it without framing them again. Records that follow each
    other and pass are checked at numpy's speed (`all_whole`, its copy in `scratch` when given),
    one at a time only when that fails or when they leave gaps."""
    raw = np.frombuffer(span, dtype=np.uint8)
    bad_header = np.zeros(len(starts), bool)
    bad_data = np.zeros(len(starts), bool)
    if not len(starts):
        return bad_header, bad_data
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    crcs, uniq, inverse = length_crcs(lengths)
    claimed = _u32_at(raw, starts).astype(np.uint64) | (
        _u32_at(raw, starts + 4).astype(np.uint64) << np.uint64(32)
    )
    bad_header = (claimed != lengths.astype(np.uint64)) | (_u32_at(raw, starts + 8) != crcs)
    ends = starts + lengths + OVERHEAD
    if (
        not bad_header.any()
        and np.array_equal(starts[1:], ends[:-1])
        and all_whole(raw, starts, ends, uniq, inverse, scratch)
    ):
        return bad_header, bad_data
    bad_data[_bad_crcs(memoryview(span), starts + HEADER_SIZE, lengths, 0)] = True
    return bad_header, bad_data
