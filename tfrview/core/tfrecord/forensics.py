"""Why a file broke, where its bytes show it: a cause for a problem (one flipped bit, zero-filled
blocks inside a record or across records, a copy cut short at a round size, two files joined, appended or prepended bytes) and for a file (a line-ending
conversion, either way). Only what the bytes prove or strongly suggest is said; anything else stays unnamed.
Plain files only: in a compressed file the damage is in bytes that are not records."""

from __future__ import annotations

from dataclasses import replace

from tfrview.core.limits import CAUSE_BYTES, CAUSE_RECORDS, CAUSE_SEARCH_BYTES
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.bitflip import MAX_REPAIR_BYTES, one_flipped_bit, record_parts
from tfrview.core.tfrecord.framing import HEADER_SIZE, OVERHEAD, U32, Compression, masked_crc
from tfrview.core.tfrecord.index import data_crc_ok
from tfrview.core.tfrecord.lineendings import Conversion, conversion_of
from tfrview.core.tfrecord.source import Source
from tfrview.core.units import human_bytes

LINE_ENDINGS = "line-ending conversion"
# where copies stop
_ROUND = (
    (1 << 30, "1 GiB"),
    (1 << 20, "1 MiB"),
    (64 << 10, "64 KiB"),
    (4 << 10, "4 KiB"),
)


def _all_zero(b: bytes) -> bool:
    return bool(b) and not b.strip(b"\x00")


def _record_cause(source: Source, offset: int, length: int) -> str:

    if length > min(MAX_REPAIR_BYTES, CAUSE_BYTES):
        return ""
    parts = record_parts(source.read, offset, length)
    if parts is None:
        return ""
    _, data, stored = parts
    fix = one_flipped_bit(data, stored)
    if fix is not None and fix.in_crc:
        return "one flipped bit in the stored data CRC: the data is whole (`tfrview repair` keeps it)"
    if fix is not None:
        return f"one flipped bit (data byte {fix.byte:,}, bit {fix.bit}): `tfrview repair` restores it"
    zeros = _zero_run(data)
    if zeros is not None:
        start, n = zeros
        return (
            f"{human_bytes(n)} of zeros from byte {start:,} of its data: a block the disk or filesystem lost"
        )
    return ""


def _zero_run(data: bytes, block: int = 512) -> tuple[int, int] | None:
    """The longest run of zero bytes of at least one aligned block, as (start, length)."""
    best = None
    i = data.find(b"\x00" * block)
    while i >= 0:
        rest = data[i:]
        j = i + len(rest) - len(rest.lstrip(b"\x00"))  # at C speed: a 16 MB run is no Python loop
        if best is None or j - i > best[1]:
            best = (i, j - i)
        i = data.find(b"\x00" * block, j)
    return best


def _zeros_to_end(source: Source, start: int) -> bool:
    """Whether the bytes from start to the end of the file (CAUSE_BYTES of them at most) are all
    zeros, read in chunks growing from 4 KB that stop at the first other byte: a file with
    thousands of records cut short reads a few KB for each, not CAUSE_BYTES (once ~100 s for 9 MB)."""
    end = min(source.file_size, start + CAUSE_BYTES)
    pos, step = start, 4 << 10
    while pos < end:
        chunk = source.read(pos, min(step, end - pos))
        if not chunk or chunk.strip(b"\x00"):
            return False
        pos += len(chunk)
        step = min(step * 4, 4 << 20)
    return pos > start


def _header_follows(source: Source, pos: int) -> bool:
    """Whether a whole record starts at pos (both CRCs)."""

    head = source.read(pos, HEADER_SIZE)
    if len(head) < HEADER_SIZE or masked_crc(head[:8]) != U32.unpack_from(head, 8)[0]:
        return False
    length = int.from_bytes(head[:8], "little")
    return (
        pos + length + OVERHEAD <= source.file_size
        and length <= CAUSE_BYTES
        and data_crc_ok(source, pos, length)
    )


def _is_text(b: bytes) -> bool:
    text = b[:200].decode("utf-8", "replace")
    return bool(text) and sum(c.isprintable() or c in "\r\n\t" for c in text) > 0.9 * len(text)


def _looks(b: bytes) -> str:
    """What prepended or appended bytes look like: text (an HTTP header, an error page), or binary."""
    text = b[:200].decode("utf-8", "replace")
    if _is_text(b):
        first = printable(text.strip().splitlines()[0] if text.strip() else text)[:60]
        return f"text starting {first!r}: an HTTP header or an error page saved with the data?"
    return f"binary, starting {b[:8].hex(' ')}"


def _size_cause(size: int) -> str:
    for r, words in _ROUND:
        if size and size % r == 0:
            return f"the file ends at {size:,} bytes, a whole number of {words}: a copy or download cut short"
    return ""


ZERO_RUN_MIN = 512  # zeros in a row, one disk sector, that name lost blocks inside damaged bytes
_BLOCK = 4 << 10
_SLACK = 16  # zero bytes a neighbouring record may have of its own at either end of a zeroed run


def _zero_run_at(source: Source, offset: int, length: int) -> tuple[int, int] | None:
    """The longest run of at least ZERO_RUN_MIN zeros in a damaged region, stretched to where the
    zeros really start and end in the file (a run zeroes records on both sides of the region), as
    (file offset, length)."""
    region = source.read(offset, min(length, CAUSE_BYTES))
    run = _zero_run(region, ZERO_RUN_MIN)
    if run is None:
        return None
    start, end = offset + run[0], offset + run[0] + run[1]
    if run[0] == 0:
        before = source.read(max(0, start - _BLOCK), start - max(0, start - _BLOCK))
        start -= len(before) - len(before.rstrip(b"\x00"))
    if end == offset + len(region):
        after = source.read(end, min(_BLOCK, source.file_size - end))
        end += len(after) - len(after.lstrip(b"\x00"))
    return start, end - start


def _zeros_words(start: int, n: int) -> str:
    """A zeroed run named, with the 4 KiB blocks it covers when it is block-aligned (give or take
    the few zero bytes of a record beside it)."""
    a, b = -(-start // _BLOCK) * _BLOCK, (start + n) // _BLOCK * _BLOCK
    if b > a and a - start < _SLACK and start + n - b < _SLACK:
        blocks = (b - a) // _BLOCK
        where = f"bytes {a:,}..{b:,}, {blocks:,} whole 4 KiB block{'s' if blocks != 1 else ''}"
    else:
        where = f"bytes {start:,}..{start + n:,}"
    return f"{human_bytes(n)} of zeros at {where}, across records: blocks a disk or filesystem lost"


def name_causes(source: Source, problems: list[Problem], offsets, lengths) -> list[Problem]:
    """The problems, each with its cause where the bytes show one (at most CAUSE_RECORDS damaged
    records a file are examined, and none once CAUSE_SEARCH_BYTES of them were searched: limits.py;
    the first record left unexamined for the bytes says so)."""
    if source.compression != Compression.NONE:
        return problems
    runs = {}  # the zeroed run in an unreadable region, by the region's offset
    regions = [p for p in problems if p.kind is ProblemKind.UNREADABLE_BYTES and p.length]
    for p in regions[:CAUSE_RECORDS]:
        if p.length >= ZERO_RUN_MIN:
            run = _zero_run_at(source, p.offset, p.length)
            if run is not None:
                runs[p.offset] = run
    out = []
    examined = searched = 0
    said = False
    for p in problems:
        cause = ""
        if p.kind is ProblemKind.BAD_DATA_CRC and p.record is not None and examined < CAUSE_RECORDS:
            length = int(lengths[p.record])
            start = int(offsets[p.record])
            if searched < CAUSE_SEARCH_BYTES:  # the record that crosses it is searched whole
                examined += 1
                searched += length
                cause = _record_cause(source, start, length)
            elif not said:
                said = True
                cause = (
                    f"not examined for a cause: the damaged records before it took the "
                    f"{human_bytes(CAUSE_SEARCH_BYTES)} searched a file (limits.CAUSE_SEARCH_BYTES)"
                )
            for a, n in runs.values() if not cause else ():
                if a < start + length + OVERHEAD and start < a + n:  # a zeroed run reaches into the record
                    cause = f"part of its bytes lie in {_zeros_words(a, n)}"
                    break
        elif p.kind is ProblemKind.TRUNCATED and _header_follows(source, p.offset + p.length):
            cause = (
                f"cut short, and whole records follow from byte {p.offset + p.length:,}: two files joined "
                "(a cut copy with another appended, or a download resumed from the wrong place)"
            )
        elif p.kind is ProblemKind.TRUNCATED:
            cause = _size_cause(source.file_size)
            if not cause and _zeros_to_end(source, p.offset + HEADER_SIZE):
                cause = "the rest of the file is zeros: space set aside and never written (a copy cut short)"
        elif p.kind in (ProblemKind.UNREADABLE_BYTES, ProblemKind.TRAILING_BYTES) and p.length:
            region = source.read(p.offset, min(p.length, CAUSE_BYTES))
            at_end = p.offset + p.length >= source.file_size
            if _all_zero(region):
                cause = (
                    f"{human_bytes(p.length)} of zeros: blocks a disk or filesystem lost, or space never written"
                    if p.kind is ProblemKind.UNREADABLE_BYTES
                    else "zero padding after the last record"
                )
            elif p.kind is ProblemKind.TRAILING_BYTES or (at_end and p.offset > 0 and _is_text(region)):
                looks = _looks(region)
                cause = (
                    f"{human_bytes(p.length)} appended after the last record ({looks})"
                    if _is_text(region)
                    else f"{human_bytes(p.length)} appended after the last record (another file's bytes? {looks})"
                )
            elif p.offset == 0:
                cause = f"{human_bytes(p.length)} before the first record: prepended to the file ({_looks(region)})"
            elif p.offset in runs:
                cause = _zeros_words(*runs[p.offset])
        out.append(replace(p, cause=cause) if cause else p)
    return out


def file_cause(source: Source, problems: list[Problem]) -> str:
    """A cause for the whole file: a line-ending conversion (either way), proven by records of its
    head that are whole once it is undone (`lineendings`)."""

    if not problems or source.file_size > CAUSE_BYTES * 64:
        return ""
    ev = conversion_of(source)
    if ev is None:
        return ""
    how = (
        "every CR LF back to LF"
        if ev.conversion is Conversion.TO_CRLF
        else "CR bytes put back where the CRCs prove them"
    )
    which = f"its {ev.walked:,}" if ev.every_record else f"the first {ev.walked:,}"
    cut = f" (proof searches stopped at limits.{ev.cut}: more may be)" if ev.cut else ""
    return (
        f"{LINE_ENDINGS}: {ev.conversion}; with it undone ({how}), {ev.proven:,} of {which} "
        f"records are whole{cut}: `tfrview repair` restores them"
    )
