"""Whole-file results: index + verify in one call, summarised the way `tfrview verify` reports them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tfrview.core.limits import LINE_ENDINGS_MAX_BYTES, inflation_note
from tfrview.core.problems import ADVICE_KINDS, Problem, ProblemKind
from tfrview.core.tfrecord.framing import HEADER_SIZE, OVERHEAD, Compression, header_valid
from tfrview.core.tfrecord.index import (
    BAD_DATA_CRC,
    BAD_LENGTH_CRC,
    CRC_CUT,
    SPLIT_CUT,
    IndexChunk,
    RecordIndex,
    coincidence_splits,
    scan,
    verify,
)
from tfrview.core.tfrecord.source import Source
from tfrview.core.tfrecord.status import RecordStatus

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(frozen=True)
class FileReport:
    path: str
    compression: str
    bytes: int
    records: int  # framing and both CRCs intact
    damaged_records: int  # framed, but a CRC failed
    problems: tuple[Problem, ...]
    cause: str = ""  # why the whole file broke, where its bytes show it
    unverified_records: int = 0  # framed, data all there, but the file ends inside its data CRC

    @property
    def ok(self) -> bool:
        """No problem but advice on how the file is laid out (`problems.ADVICE_KINDS`)."""
        return all(p.kind in ADVICE_KINDS for p in self.problems)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "compression": self.compression,
            "records": self.records,
            "damaged_records": self.damaged_records,
            "bytes": self.bytes,
            "ok": self.ok,
            "problems": [p.to_json() for p in self.problems],
            **({"cause": self.cause} if self.cause else {}),
            **({"unverified_records": self.unverified_records} if self.unverified_records else {}),
        }


def index_source(
    source: Source,
    progress: Progress | None = None,
    notice: Callable[[str], None] | None = None,
    splits: dict[int, tuple[int, bool]] | None = None,
    prefix: RecordIndex | None = None,
    start: int = 0,
) -> RecordIndex:
    """The whole index of a source. `notice` hears, once, if a compressed stream inflates like a
    decompression bomb (limits.inflation_note). With `prefix` (the records before stream position
    `start`, framed already), a copy of it framed on from `start`."""
    from tfrview.core.units import human_bytes  # start-up: kept off the CLI's path

    idx = RecordIndex()
    if prefix is not None:
        idx.apply(
            IndexChunk(
                0, prefix.offsets, prefix.lengths, prefix.status, tuple(prefix.problems), start, start, False
            )
        )
    noted = notice is None
    for chunk in scan(source, splits=splits, start=start, first=idx.count):
        idx.apply(chunk)
        if progress:
            phase = (
                "index"
                if source.compression == Compression.NONE
                else f"index ({human_bytes(chunk.reached)} inflated)"
            )
            progress(phase, chunk.consumed, source.file_size)
        if not noted:
            note = inflation_note(str(source.path), source.compression, chunk.reached, chunk.consumed)
            if note:
                notice(note)
                noted = True
    return idx


def verify_index(source: Source, idx: RecordIndex, progress: Progress | None = None) -> list[Problem]:
    """Data CRCs of every record; also re-checks header-damaged records' data."""
    found, _ = _verify_pass(source, idx, progress)
    return found


def _verify_pass(
    source: Source, idx: RecordIndex, progress: Progress | None, start: int = 0
) -> tuple[list[Problem], dict]:
    found: list[Problem] = []
    splits: dict[int, tuple[int, bool]] = {}
    total = int(idx.scanned) or 1
    for vc in verify(source, idx, start):
        found.extend(vc.problems)
        splits.update(vc.splits)
        if progress and vc.stop:
            last = vc.stop - 1
            progress("verify", int(idx.offsets[last] + idx.lengths[last]), total)
    return found, splits


def index_and_verify(
    source: Source,
    progress: Progress | None = None,
    notice: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> tuple[RecordIndex, list[Problem]]:
    """Index, then every data CRC. When verify finds headers that overstate their length over whole
    records, index again framing those records at their true length, so no intact record is lost
    (rare: a second pass only then). With `jobs` over 1, a big plain file is framed and checked in
    parts on that many cores (`parts`); the answer is the same as on one core."""
    from tfrview.core.tfrecord.parts import frame_in_parts, frame_range, worth_splitting

    if source.compression == Compression.ARRAYRECORD:  # its footer is its index: never scanned
        from tfrview.core.tfrecord.arindex import index_and_verify as from_footer

        return from_footer(source)
    if worth_splitting(source, jobs):
        parts = frame_in_parts(source, jobs, progress)
        if parts is not None:
            return joined_parts(source, parts, progress, notice)
    elif (
        source.compression == Compression.NONE
        and not source.remote
        and source.file_size >= HEADER_SIZE
        and header_valid(source.read(0, HEADER_SIZE))
    ):
        # on one core, a plain file as one part: its clean records framed and CRC-checked a window
        # at a time by array operations (half the CPU of the record-by-record steps), whatever
        # follows its first damage by those steps, as with parts: the same answer
        size = source.file_size
        said = (lambda pos: progress("index", pos, size)) if progress else None
        return joined_parts(source, [frame_range(source, 0, size, said)], progress, notice)
    got = _framed_from(source, progress, notice)
    assert got is not None  # framed from the start: nothing lies before it
    return got


def joined_parts(
    source: Source, parts: list, progress: Progress | None = None, notice: Callable[[str], None] | None = None
) -> tuple[RecordIndex, list[Problem]]:
    """`index_and_verify`'s answer from a file's `parts.Part`s: the whole records they agree on from
    the start, and the rest framed sequentially from a few records before their first disagreement."""
    from tfrview.core.tfrecord.parts import clean_prefix  # start-up: kept off the CLI's path

    prefix, start, whole = clean_prefix(parts, source.file_size)
    if whole:
        return prefix, []
    got = _framed_from(source, progress, notice, prefix, start)
    if got is None:  # a record before `start` is framed otherwise: the whole file on one core
        got = _framed_from(source, progress, notice)
    assert got is not None
    return got


def _framed_from(
    source: Source,
    progress: Progress | None,
    notice: Callable[[str], None] | None,
    prefix: RecordIndex | None = None,
    start: int = 0,
) -> tuple[RecordIndex, list[Problem]] | None:
    """`index_and_verify`'s framing from stream position `start`, after the whole records of
    `prefix`; None when a record before `start` would have to be framed otherwise (then the
    caller frames the whole file)."""

    first = prefix.count if prefix is not None else 0
    idx = index_source(source, progress, notice, None, prefix, start)
    found, splits = _verify_pass(source, idx, progress, first)
    known: dict = {}
    lost_crs = line_ending_splits(source, idx) if idx.problems else {}
    for _ in range(4):  # each pass can only add splits; real files need one at most
        splits.update(coincidence_splits(source, idx, list(idx.problems) + found))
        splits.update(lost_crs)
        if not splits.keys() - known.keys():
            break
        known.update(splits)
        if min(known) < start:
            return None
        idx = index_source(source, progress, None, known, prefix, start)
        found, splits = _verify_pass(source, idx, progress, first)
    return idx, found


def reframing_needed(source: Source, idx: RecordIndex) -> bool:
    """Would `index_and_verify` frame this verified index (a scan, then `verify`, as the window runs
    them) otherwise? When a header swallowed whole records, an 8-byte record passed by coincidence,
    or a line-ending conversion cut records short. Then the window takes `index_and_verify`'s
    framing, so its rows are numbered as every command numbers them. Cheap for a clean file."""

    problems = list(idx.problems)
    if not problems or source.compression == Compression.ARRAYRECORD:  # its footer is its index
        return False
    st = idx.status
    for p in problems:  # verify found whole records inside a damaged one (overstated_split)
        k = p.record
        if (
            p.kind == ProblemKind.BAD_LENGTH_CRC
            and k is not None
            and k < idx.count
            and st[k] & BAD_DATA_CRC
            and not st[k] & BAD_LENGTH_CRC
        ):
            return True
    if coincidence_splits(source, idx, problems):
        return True
    return bool(line_ending_splits(source, idx))


def line_ending_splits(source: Source, idx: RecordIndex) -> dict[int, tuple[int, int]]:
    """Where a file whose CR LF bytes became LF (proven by `lineendings`) holds records the framing
    missed or framed over the next one (a record that lost CR bytes is shorter than its header says,
    and one that lost a CR of its header has no valid header): each record walked that the index
    does not frame at the same span, as a split that frames it, damaged (SPLIT_CUT). So every
    record `repair` restores is a row with its number."""
    from tfrview.core.tfrecord.lineendings import Conversion, conversion_of, spans

    if source.file_size > LINE_ENDINGS_MAX_BYTES:
        return {}
    ev = conversion_of(source)
    if ev is None or ev.conversion is not Conversion.TO_LF:
        return {}
    ends = {int(o): int(o) + int(n) + OVERHEAD for o, n in zip(idx.offsets, idx.lengths, strict=True)}
    return {
        start: (end, SPLIT_CUT)
        for start, end, framed in spans(source.read(0, source.file_size))
        if framed and ends.get(start) != end
    }


def sort_problems(problems) -> tuple[Problem, ...]:
    return tuple(
        sorted(problems, key=lambda p: (p.offset, p.record if p.record is not None else -1, str(p.kind)))
    )


def verify_source(
    source: Source,
    progress: Progress | None = None,
    notice: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> tuple[RecordIndex, FileReport]:
    idx, data_problems = index_and_verify(source, progress, notice, jobs)
    return idx, make_report(source, idx, data_problems)


def make_report(source: Source, idx: RecordIndex, data_problems: list[Problem]) -> FileReport:
    from tfrview.core.tfrecord.status import damaged_mask, intact_mask

    st = idx.status
    damaged = int(np.count_nonzero(damaged_mask(st)))  # its data CRC fails; the rest are intact or unverified
    intact = int(np.count_nonzero(intact_mask(st)))
    return FileReport(
        path=str(source.path),
        compression=source.compression,
        bytes=source.file_size,
        records=intact,
        damaged_records=damaged,
        problems=sort_problems(list(idx.problems) + list(data_problems)),
        unverified_records=int(np.count_nonzero(st & CRC_CUT)),
    )


DECODED_AS_IS = {
    RecordStatus.DAMAGED: "decoded as its bytes stand: its data CRC fails, so some may be wrong",
    RecordStatus.HEADER_DAMAGED: "its data passed its CRC; its header was damaged",
    RecordStatus.UNVERIFIED: "decoded as its bytes stand: no CRC checked them",
}  # what a dump says of a record it shows that did not pass both CRCs


def intact_numbers(idx: RecordIndex) -> np.ndarray:
    """Records whose data CRC is good (`status.intact_numbers`: header-damaged ones count)."""
    from tfrview.core.tfrecord.status import intact_numbers as of_status

    return of_status(idx.status)


def sample_numbers(count: int, sample: int | None) -> np.ndarray:
    if sample is None or count <= sample:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, sample).astype(np.int64))
