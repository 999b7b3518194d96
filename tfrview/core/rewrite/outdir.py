"""A new folder of record files, all or nothing: the one writer of "N shards atomically, verified
after" (the rewrite and the COCO re-import share it).

Everything is written inside a temporary folder beside OUTDIR (same filesystem: one rename at the
end; the one rule of every output folder, `output.atomic`: `check_new_output`, `new_temp_dir`,
`swap_in`, `clean_stale`), named `.OUTDIR.NNN.partial` with the writer's process id inside; every
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

from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.output.atomic import (  # noqa: F401 - PARTIAL, OWNER, clean_stale: said from here too
    OWNER,
    PARTIAL,
    check_new_output,
    clean_stale,
    new_temp_dir,
    swap_in,
)
from tfrview.core.output.writer import RecordWriter
from tfrview.core.rewrite.options import RewriteError
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)


class ShardWriter(RecordWriter):
    """A RecordWriter that also takes records already framed (header, data, footer), copied byte
    for byte from an input whose CRCs passed: a copy never re-frames what it need not."""

    def write_framed(self, framed: bytes | memoryview, records: int) -> None:
        self._put(framed)
        self.count += records

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
    except RewriteError:
        raise
    except TfrviewError as exc:
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
        except RewriteError:
            raise
        except TfrviewError as exc:
            raise RewriteError(str(exc)) from None
        return written
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _write_error(outdir, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _fill_and_check(tmp, outdir, shards, compression, index, jobs, progress) -> list[WrittenShard]:
    from types import SimpleNamespace

    from tfrview.core.analysis import plan as plan_tasks
    from tfrview.core.analysis import run_tasks
    from tfrview.core.output.atomic import atomic_write_text
    from tfrview.core.output.index_files import format_index

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
    for s in shards:  # on disk before anything is renamed
        fd = os.open(tmp / s.name, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    # read back as `verify` reads: every shard framed and CRC-checked, side by side on the pool
    tasks = plan_tasks([str(tmp / s.name) for s in shards], False, None, read_cache=False, write_cache=False)
    results = {}
    for r in run_tasks(tasks, jobs):
        results[r.file_no] = r
        if progress is not None:
            progress("reading back", len(results), len(shards))
    written = []
    for k, s in enumerate(shards):
        r = results[k]
        if r.error is not None or r.problems or r.records != s.records or len(r.offsets) != s.records:
            raise RewriteError(
                f"{printable(str(outdir / s.name))}: read back {r.records:,} intact records of "
                f"{len(r.offsets):,}, expected {s.records:,}; nothing was written"
            )
        if index:
            atomic_write_text(
                tmp / (s.name + ".idx"), format_index(SimpleNamespace(offsets=r.offsets, lengths=r.lengths))
            )
        written.append(WrittenShard(s.name, s.records, (tmp / s.name).stat().st_size))
    return written


def cancelled_by(check: Callable[[], bool]) -> Callable[[str, int, int], None]:
    """A progress callback that raises Cancelled once `check()` says so."""

    def progress(phase: str, done: int, total: int) -> None:
        if check():
            raise Cancelled(f"rewrite cancelled while {phase}")

    return progress
