"""A new folder of record files, all or nothing: the one writer of "N shards atomically, verified
after" (the rewrite and the COCO re-import share it).

Everything is written inside a temporary folder beside OUTDIR (same filesystem: one rename at the
end), named `.OUTDIR.NNN.partial` with the writer's process id inside; every shard is read back,
framed and CRC-checked and its count compared before the rename. An error, Ctrl+C or a cancel
removes the temporary folder; a killed writer leaves it, and the next write beside it removes every
one whose process is gone. OUTDIR is never half-written: it either does not change or is whole."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tfrview.core.errors import Cancelled
from tfrview.core.output.writer import RecordWriter
from tfrview.core.rewrite.options import RewriteError
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)

PARTIAL = ".partial"
OWNER = ".tfrview-writer-pid"  # inside a temporary folder: the process writing it


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


def _inside(a: str, b: str) -> bool:
    """Whether real path `a` is `b` or inside it."""
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep)


def check_outdir(outdir: Path, inputs: Sequence[Path | str], force: bool) -> None:
    """Before any work: OUTDIR is no input, not inside one and holds none; it exists non-empty only
    with `force`; its parent is a folder."""
    from tfrview.core.tfrecord.remote import is_url

    out = os.path.realpath(outdir)
    for p in inputs:
        if is_url(str(p)):
            continue
        real = os.path.realpath(p)
        if _inside(out, real) and (out != real or os.path.isdir(real)):
            raise RewriteError(f"{printable(str(outdir))}: is inside the input {printable(str(p))}")
        if _inside(real, out) or out == real:
            raise RewriteError(f"{printable(str(outdir))}: holds the input {printable(str(p))}")
    if os.path.lexists(outdir):
        if not os.path.isdir(outdir) or os.path.islink(outdir):
            raise RewriteError(f"{printable(str(outdir))}: exists and is no folder")
        if any(os.scandir(outdir)) and not force:
            raise RewriteError(
                f"{printable(str(outdir))}: exists and is not empty (use --force to replace it)"
            )
    parent = Path(out).parent
    if not parent.is_dir():
        raise RewriteError(f"{printable(str(outdir))}: its folder {printable(str(parent))} does not exist")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(outdir: Path) -> list[Path]:
    """Remove the temporary folders a killed writer left beside OUTDIR (its process is gone);
    the ones removed. A folder whose owner cannot be read is left alone, and said in the log."""
    parent = Path(os.path.realpath(outdir)).parent
    removed = []
    prefix = f".{Path(outdir).name[:32]}."
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(prefix) and e.name.endswith(PARTIAL)]
    except OSError:
        return []
    for e in entries:
        try:
            pid = int((Path(e.path) / OWNER).read_text().strip())
        except (OSError, ValueError):
            log.info("%s: a temporary folder of no known writer; left alone", e.path)
            continue
        if not _alive(pid):
            shutil.rmtree(e.path, ignore_errors=True)
            removed.append(Path(e.path))
            log.info("removed %s, left by writer process %d", e.path, pid)
    return removed


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
    parent = Path(os.path.realpath(outdir)).parent
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{outdir.name[:32]}.", suffix=PARTIAL, dir=parent))
    except OSError as exc:
        raise _write_error(outdir, exc) from None
    try:
        (tmp / OWNER).write_text(str(os.getpid()))
        written = _fill_and_check(tmp, outdir, shards, compression, index, jobs, progress)
        if extra is not None:
            extra(tmp, written)
        os.chmod(tmp, 0o777 & ~_umask())
        _swap_in(tmp, outdir, force)
        with contextlib.suppress(OSError):  # after the rename: a kill before it leaves the owner known
            (outdir / OWNER).unlink()
        return written
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _write_error(outdir, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


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


def _swap_in(tmp: Path, outdir: Path, force: bool) -> None:
    """The finished folder renamed to OUTDIR; an existing OUTDIR (empty, or --force) moved aside
    first and removed after, or put back if the rename fails. OUTDIR is looked at again: another
    writer may have made it since the start."""
    _fsync_dir(tmp)
    old = None
    if os.path.lexists(outdir):
        if not force and (not os.path.isdir(outdir) or any(os.scandir(outdir))):
            raise RewriteError(
                f"{printable(str(outdir))}: appeared while writing (use --force to replace it)"
            )
        old = Path(tempfile.mkdtemp(prefix=f".{outdir.name[:32]}.", suffix=".old", dir=tmp.parent))
        os.rmdir(old)
        os.rename(outdir, old)
    try:
        os.rename(tmp, outdir)
    except BaseException:
        if old is not None:
            os.rename(old, outdir)
        raise
    _fsync_dir(tmp.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def cancelled_by(check: Callable[[], bool]) -> Callable[[str, int, int], None]:
    """A progress callback that raises Cancelled once `check()` says so."""

    def progress(phase: str, done: int, total: int) -> None:
        if check():
            raise Cancelled(f"rewrite cancelled while {phase}")

    return progress
