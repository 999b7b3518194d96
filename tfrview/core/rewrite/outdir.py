"""A new folder of record files, all or nothing: the one writer of "N shards atomically, verified
after" (the rewrite and the COCO re-import share it).

Everything is written inside a temporary folder beside OUTDIR (same filesystem: one rename at the
end), named `.OUTDIR.NNN.partial` with the writer's process id inside; every shard is read back,
framed and CRC-checked and its count compared before the rename. An error, Ctrl+C or a cancel
removes the temporary folder; a killed writer leaves it, and the next write beside it removes every
one whose process is gone. OUTDIR is never half-written: it either does not change or is whole."""

from __future__ import annotations

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
        (tmp / OWNER).unlink()
        os.chmod(tmp, 0o777 & ~_umask())
        _swap_in(tmp, outdir)
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
    from tfrview.core.output.index_files import write_index
    from tfrview.core.tfrecord.report import index_and_verify
    from tfrview.core.tfrecord.source import open_source
    from tfrview.core.tfrecord.status import intact_mask

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
    written = []
    for k, s in enumerate(shards):
        if progress is not None:
            progress("reading back", k, len(shards))
        path = tmp / s.name
        with open_source(path) as src:
            idx, found = index_and_verify(src, jobs=jobs)
            good = int(intact_mask(idx.status[: idx.count]).sum())
            if found or idx.problems or good != s.records or idx.count != s.records:
                raise RewriteError(
                    f"{printable(str(outdir / s.name))}: read back {good:,} intact records of "
                    f"{idx.count:,}, expected {s.records:,}; nothing was written"
                )
            if index:
                write_index(tmp / (s.name + ".idx"), idx)
        written.append(WrittenShard(s.name, s.records, path.stat().st_size))
    if progress is not None:
        progress("reading back", len(shards), len(shards))
    return written


def _swap_in(tmp: Path, outdir: Path) -> None:
    """The finished folder renamed to OUTDIR; an existing OUTDIR (empty, or --force) moved aside
    first and removed after, or put back if the rename fails."""
    _fsync_dir(tmp)
    old = None
    if os.path.lexists(outdir):
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
