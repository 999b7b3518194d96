"""A new folder of record files, all or nothing: the one writer of "N shards atomically, verified
after" (the rewrite and the COCO re-import share it).

Everything is written inside a temporary folder beside OUTDIR (same filesystem: one rename at the
end; the one rule of every output folder, `output.atomic`: `check_new_output`, `new_temp_dir`,
`swap_in`, `clean_stale`), named `.OUTDIR.<pid>.<random>.partial` (its writer's process id); every
shard is read back, framed and CRC-checked and its count compared before the rename. An error,
Ctrl+C or a cancel removes the temporary folder; a killed writer leaves it, and the next write
beside it removes every one whose process is gone. OUTDIR is never half-written: it either does not
change or is whole."""

from __future__ import annotations

import errno
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.output.atomic import (  # noqa: F401 - PARTIAL, clean_stale: said from here too
    PARTIAL,
    check_new_output,
    clean_stale,
    new_temp_dir,
    swap_in,
)
from tfrview.core.output.writer import RecordWriter
from tfrview.core.rewrite.options import RewriteError
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.payload_bytes import PayloadHead

log = logging.getLogger(__name__)

RUN_BYTES = 8 << 20  # the window a plain shard is read back in


class ShardWriter(RecordWriter):
    """A RecordWriter that also takes records already framed (header, data, footer), copied byte
    for byte from an input whose CRCs passed: a copy never re-frames what it need not. It keeps the
    length of every record written, which the read-back checks the file against (`_check_written`)."""

    def __init__(self, path, compression: str = "none") -> None:
        super().__init__(path, compression)
        self._lengths: list[np.ndarray] = []
        self._one: list[int] = []

    def write_framed(self, framed: bytes | memoryview, records: int, lengths: np.ndarray) -> None:
        """`records` framed records whose data lengths are `lengths`, copied as they are."""
        if len(lengths) != records:
            raise ValueError(f"{records} framed records with {len(lengths)} lengths")
        self._put(framed)
        self.count += records
        if self._one:
            self._flush_one()
        self._lengths.append(np.asarray(lengths, dtype=np.int64))

    def write(self, data, footer: bytes | None = None) -> None:
        super().write(data, footer)
        self._one.append(data.full_size if isinstance(data, PayloadHead) else len(data))

    def _flush_one(self) -> None:
        if self._one:
            self._lengths.append(np.array(self._one, dtype=np.int64))
            self._one = []

    def lengths(self) -> np.ndarray:
        """The data length of every record written, in order."""
        self._flush_one()
        return np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)

    def close(self) -> None:
        """Finish and rename, without RecordWriter's fsync: `write_shards` syncs every shard at the
        end, once the kernel has written most of them back (16 fsyncs one after another each waited
        for its own shard, with nothing else queued: a third of a 2 GB rewrite's time)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._finish(sync=False)
        except BaseException:
            self.abort()
            raise


@dataclass(frozen=True)
class Shard:
    """One output file: its name inside OUTDIR, the records it must hold, and what writes them."""

    name: str
    records: int
    fill: Callable[[ShardWriter], None]


@dataclass(frozen=True)
class WrittenShard:
    name: str
    records: int
    bytes: int


def check_outdir(outdir: Path, inputs: Sequence[Path | str], force: bool) -> None:
    """Before any work: `output.atomic.check_new_output`'s rule for a folder, said as a RewriteError."""
    try:
        check_new_output(Path(outdir), list(inputs), force, folder=True)
    except TfrviewError as exc:  # (check_new_output raises no RewriteError)
        raise RewriteError(str(exc)) from None


def _write_error(outdir: Path, exc: OSError) -> RewriteError:
    why = "the disk is full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else exc.strerror or str(exc)
    if exc.errno == errno.EFBIG:
        why = "a file grew past the size allowed (EFBIG)"
    return RewriteError(f"{printable(str(outdir))}: cannot write ({why}); nothing was written")


def write_shards(
    outdir: str | os.PathLike,
    shards: Sequence[Shard],
    compression: str = "none",
    *,
    inputs: Sequence[Path | str] = (),
    force: bool = False,
    index: bool = False,
    extra: Callable[[Path, list[WrittenShard]], None] | None = None,
    jobs: int = 1,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[WrittenShard]:
    """Write every shard into a new OUTDIR, read each back (framing, every CRC, its count; `index`:
    a DALI/`tfrecord` index file beside it, `NAME.idx`, from that reading), let `extra(tmp, written)`
    add other files, then rename the whole into place. Raises RewriteError (nothing left behind) on
    any failure; `progress` may raise Cancelled to stop."""
    outdir = Path(outdir)
    check_outdir(outdir, inputs, force)
    clean_stale(outdir)
    try:
        tmp = new_temp_dir(Path(os.path.realpath(outdir.parent)) / outdir.name)
    except TfrviewError as exc:
        raise RewriteError(f"{exc}; nothing was written") from None
    try:
        written = _fill_and_check(tmp, outdir, shards, compression, index, jobs, progress)
        if extra is not None:
            extra(tmp, written)
        try:
            swap_in(tmp, outdir, force)
        except TfrviewError as exc:  # (swap_in raises no RewriteError)
            raise RewriteError(str(exc)) from None
        return written
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _write_error(outdir, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _fill_and_check(tmp, outdir, shards, compression, index, jobs, progress) -> list[WrittenShard]:
    """Each shard written, then read back: a plain one at once, while the kernel writes it to disk
    (`_check_written`: its bytes, from the page cache, against the lengths written); a compressed
    one framed and CRC-checked as `verify` reads it, side by side on the pool, at the end. Every
    shard synced before anything is renamed."""
    from tfrview.core.output.atomic import atomic_write_text
    from tfrview.core.output.index_files import format_index

    framing: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # shard -> (offsets, lengths) read back
    for k, s in enumerate(shards):
        if progress is not None:
            progress("writing", k, len(shards))
        w = ShardWriter(tmp / s.name, compression)
        try:
            s.fill(w)
        except BaseException:
            w.abort()
            raise
        w.close()
        if w.count != s.records:
            raise RewriteError(f"{printable(s.name)}: wrote {w.count:,} records, expected {s.records:,}")
        if compression == "none":
            framing[k] = _check_written(tmp / s.name, w.lengths(), outdir / s.name)
    for s in shards:  # on disk before anything is renamed
        fd = os.open(tmp / s.name, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    if len(framing) < len(shards):
        framing.update(_read_back_on_pool(tmp, outdir, shards, jobs, progress))
    written = []
    for k, s in enumerate(shards):
        offsets, lengths = framing[k]
        if index:
            atomic_write_text(
                tmp / (s.name + ".idx"), format_index(SimpleNamespace(offsets=offsets, lengths=lengths))
            )
        written.append(WrittenShard(s.name, s.records, (tmp / s.name).stat().st_size))
    return written


def _check_written(path: Path, lengths: np.ndarray, said: Path) -> tuple[np.ndarray, np.ndarray]:
    """A plain shard read back and checked as a framing of it would find it: records at the
    offsets the lengths written give, each header holding its length and a passing length CRC,
    each data CRC passing, the file ending where the last record does. Read in windows of
    `RUN_BYTES` (from the page cache, just written), checked by numpy (`window.records_failing`);
    a record longer than a window streamed (`index.data_crc_ok`). (offsets, lengths)."""
    from tfrview.core.tfrecord.framing import HEADER_SIZE, OVERHEAD, encode_header
    from tfrview.core.tfrecord.index import data_crc_ok
    from tfrview.core.tfrecord.source import open_source
    from tfrview.core.tfrecord.window import records_failing

    n = len(lengths)
    ends = np.cumsum(lengths + OVERHEAD)
    offsets = ends - (lengths + OVERHEAD)
    size = path.stat().st_size

    def bad(what: str) -> RewriteError:
        return RewriteError(f"{printable(str(said))}: read back {what}; nothing was written")

    if size != (int(ends[-1]) if n else 0):
        raise bad(f"{size:,} bytes where {int(ends[-1]) if n else 0:,} were written")
    # a window, and the CRC check's copy: reused, one window's size, never grown under a view
    buf, scratch = bytearray(RUN_BYTES), bytearray(RUN_BYTES)
    with open_source(path) as src:
        a = 0
        while a < n:
            lo = int(offsets[a])
            b = max(int(np.searchsorted(ends, lo + RUN_BYTES, side="right")), a + 1)
            if b == a + 1 and int(lengths[a]) + OVERHEAD > RUN_BYTES:
                head = src.read(lo, HEADER_SIZE)
                if head != encode_header(int(lengths[a])) or not data_crc_ok(src, lo, int(lengths[a])):
                    raise bad(f"record {a:,} failing its CRC")
            else:
                data = src.span(lo, int(ends[b - 1]) - lo, buf)
                if len(data) != int(ends[b - 1]) - lo:
                    raise bad(f"short at record {a:,}")
                bh, bd = records_failing(data, offsets[a:b] - lo, lengths[a:b], scratch)
                if bh.any() or bd.any():
                    raise bad(f"record {a + int(np.argmax(bh | bd)):,} failing its CRC")
            a = b
    return offsets, lengths


def _read_back_on_pool(tmp, outdir, shards, jobs, progress) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Compressed shards read back as `verify` reads: framed and CRC-checked, side by side."""
    from tfrview.core.analysis import plan as plan_tasks
    from tfrview.core.analysis import run_tasks

    tasks = plan_tasks([str(tmp / s.name) for s in shards], False, None, read_cache=False, write_cache=False)
    results = {}
    for r in run_tasks(tasks, jobs):
        results[r.file_no] = r
        if progress is not None:
            progress("reading back", len(results), len(shards))
    out = {}
    for k, s in enumerate(shards):
        r = results[k]
        if r.error is not None or r.problems or r.records != s.records or len(r.offsets) != s.records:
            raise RewriteError(
                f"{printable(str(outdir / s.name))}: read back {r.records:,} intact records of "
                f"{len(r.offsets):,}, expected {s.records:,}; nothing was written"
            )
        out[k] = (r.offsets, r.lengths)
    return out


def cancelled_by(check: Callable[[], bool]) -> Callable[[str, int, int], None]:
    """A progress callback that raises Cancelled once `check()` says so."""

    def progress(phase: str, done: int, total: int) -> None:
        if check():
            raise Cancelled(f"rewrite cancelled while {phase}")

    return progress
