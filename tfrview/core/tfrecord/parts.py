"""One big plain file framed and CRC-checked in parts, on every core.

`index_and_verify` of a 2,000,000-record file spent its time in two per-record Python loops on one
core (framing, then every data CRC). Here the file is cut into byte ranges, one per core; each range
is framed and CRC-checked in its own process (this one takes the first range), reading each window
of the file once for both. A range finds its first record boundary as the scanner does past damage
(a header whose length's masked CRC matches) and goes on to the first record that starts at or past
its end. Ranges are joined only where they agree: range i's framing reaches exactly where range
i+1's begins (or lands on one of its records: a false sync at the start of a range that met the true
framing again). Only records whose header and data CRC both pass are taken this way, and the framing
of such a run is the same whoever frames it, so a clean file's result is `index_and_verify`'s.

At the first place they do not agree (damage, a record cut short, a false sync that never meets the
true framing again), the rest of the file is framed again sequentially by `report.index_and_verify`'s
own steps, from a few records before it (the scanner looks back at the record before damage, and the
coincidence check up to three records back), so numbering, statuses and problems are the ones one
core gives. Compressed files are never split: a deflate stream cannot be entered in the middle.
"""

from __future__ import annotations

import contextlib
import logging
import os
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tfrview.core import limits
from tfrview.core.tfrecord.framing import (
    HEADER_SIZE,
    OVERHEAD,
    crc32c_module,
    header_valid,
    valid_header_positions,
)
from tfrview.core.tfrecord.index import (
    VERIFIED,
    IndexChunk,
    RecordIndex,
    data_crc_ok,
)
from tfrview.core.tfrecord.source import Source
from tfrview.core.tfrecord.window import LONG, NOT_WHOLE, frame_window

if TYPE_CHECKING:
    import subprocess

log = logging.getLogger(__name__)

_WINDOW = 8 << 20  # bytes read at once: framed, then their data CRCs checked while still in cache
_MARGIN = 8  # records before the first disagreement framed again sequentially (it looks back up to 4)
_HEAD = struct.Struct("<qqqBq")  # st_ino, start, end, clean, record count: a child's answer


@dataclass(frozen=True)
class Part:
    """What one range's framing found: a run of whole records (both CRCs pass) from `start`."""

    lo: int
    hi: int
    start: int  # where its framing begins: 0, or the first valid header at or past lo; -1: none before hi
    offsets: np.ndarray  # uint64: each whole record's header offset, from `start`
    end: int  # where the run stops: the first record at or past hi (clean), or the first that is not whole
    clean: bool  # the run reached hi (or the end of the file) with every record whole


def ranges(size: int, jobs: int, started: bool = False) -> list[tuple[int, int]]:
    """The byte ranges of a file's parts: one per core, none under limits.FRAME_PART_MIN_BYTES. The
    first, framed in the caller while the others' processes start (~0.2 s of CPU: Python and numpy
    imported), is longer by about what one core frames in half that time, so all end together
    (at most half a range more); not when the others were `started` before (`prestart`)."""
    from tfrview.core.childproc import part_ranges

    return part_ranges(size, jobs, 0 if started else _LEAD)


_LEAD = 40 << 20


def worth_splitting(source: Source, jobs: int) -> bool:
    """A local plain file of limits.FRAME_PARTS_BYTES or more, and more than one core to use."""
    return (
        jobs > 1
        and source.compression == "none"
        and not source.remote
        and source.identity is not None
        and source.file_size >= limits.FRAME_PARTS_BYTES
    )


def _first_header(source: Source, lo: int, hi: int, buf: bytearray) -> int:
    """The first position in [lo, hi) where a header's length CRC validates, or -1. Looked for in
    blocks that grow from 4 KB (it is usually within a record's length of lo; each block's check
    costs numpy work for every byte of it)."""
    p = lo
    size = source.file_size
    block = 4096
    while p < hi:
        p = max(p, source.data_from(p))  # a sparse file's holes hold no header: never read
        if p >= hi:
            return -1
        n = min(block, hi - p, size - p - HEADER_SIZE + 1)
        if n <= 0:
            return -1
        raw = bytes(source.span(p, n + HEADER_SIZE - 1, buf))
        ok = valid_header_positions(raw, n)
        if len(ok):
            return p + int(ok[0])
        p += n
        block = min(block * 4, 1 << 20)
    return -1


def frame_range(source: Source, lo: int, hi: int, said: Callable[[int], None] | None = None) -> Part:
    """Frame and CRC-check the records of [lo, hi): from the first header at or past lo, every
    record whose header and data CRC pass, up to the first record that starts at or past hi. Stops
    early at the first record that is not whole (that one is left to the sequential framing).
    `said(position)`: told after each window."""
    size = source.file_size
    buf = bytearray()
    start = 0 if lo == 0 else _first_header(source, lo, hi, buf)
    if start < 0:
        return Part(lo, hi, -1, np.empty(0, np.uint64), hi, True)
    pos = start
    kept: list[np.ndarray] = []
    clean = True
    while pos < hi and pos < size:
        n = min(_WINDOW, size - pos)
        if n < HEADER_SIZE:
            clean = False
            break
        span = source.span(pos, n, buf)
        starts, nxt, why = frame_window(span, n, hi - pos, pos + n == size)
        if isinstance(span, memoryview):
            span.release()
        if len(starts):
            kept.append((starts + pos).astype(np.uint64))
        pos += nxt
        if why == NOT_WHOLE:
            clean = False
            break
        if why == LONG:  # one record longer than the window: framed alone, its data CRC streamed
            head = source.read(pos, HEADER_SIZE)
            length = int.from_bytes(head[:8], "little")
            if (
                pos + length + OVERHEAD > size
                or not header_valid(head)
                or not data_crc_ok(source, pos, length)
            ):
                clean = False
                break
            kept.append(np.array([pos], dtype=np.uint64))
            pos += length + OVERHEAD
        if said is not None:
            said(pos)
    offsets = np.concatenate(kept) if kept else np.empty(0, np.uint64)
    return Part(lo, hi, start, offsets, pos, clean)


def join(parts: list[Part], size: int) -> tuple[np.ndarray, int, bool]:
    """(offsets of the records the parts agree on from the file's start, where that run ends,
    whether it is the whole file). Parts are joined only where the run so far ends exactly at a
    record the next part framed (its records before that, after a false sync, are dropped); a part
    whose whole range the run has already passed (a record longer than a range) adds nothing."""
    taken: list[np.ndarray] = []
    at = 0
    for p in parts:
        if at >= p.hi:
            continue
        k = int(np.searchsorted(p.offsets, np.uint64(at)))
        meets = k < len(p.offsets) and int(p.offsets[k]) == at  # its framing reaches ours
        stopped_here = p.start == at == p.end  # it starts where we are, with a record that is not whole
        if p.start < 0 or not (meets or stopped_here):
            return _cat(taken), at, False
        taken.append(p.offsets[k:])
        at = p.end
        if not p.clean:
            return _cat(taken), at, False
    return _cat(taken), at, at == size


def _cat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.empty(0, np.uint64)


# --- running the parts -------------------------------------------------------------------------------


def _spawn(path: str, lo: int, hi: int) -> subprocess.Popen:
    """A part process for one range: a started one waiting for its range (`prestart`), else a new one."""
    from tfrview.core import childproc

    waiting = [p for p in childproc.started_ahead(__name__) if not hasattr(p, "part")]
    while waiting:
        proc = waiting.pop()
        childproc.started_ahead(__name__).remove(proc)
        try:
            proc.stdin.write(f"{lo} {hi} {path}\n".encode())
            proc.stdin.close()
            return proc
        except (BrokenPipeError, OSError, ValueError):  # it died waiting: another, or a new one
            log.debug("a started part process was gone; another one instead")
            proc.wait()
    return childproc.spawn("tfrview.core.tfrecord.parts", path, str(lo), str(hi), keep_stderr=True)


def prestart(source_size: int, jobs: int) -> int:
    """Start the part processes a file of `source_size` bytes will need on `jobs` cores now, to wait
    on their stdin for a range: their Python and numpy start-up (~0.2 s) then overlaps the caller's
    own (the CLI's imports and plan) instead of delaying the framing. Those never given a range end
    when the caller does (their stdin closes). How many were started. (The CLI calls this module's
    twin in childproc, before numpy is loaded here: `childproc.start_parts_ahead`.)"""
    from tfrview.core import childproc

    return childproc.start_parts_ahead(source_size, jobs)


def _answer(proc: subprocess.Popen, lo: int, hi: int, ino: int) -> Part | None:
    """A child's part, or None when it failed or read another file (the caller frames alone; why is
    logged: its exit code and the last line it wrote to stderr)."""
    why = ""
    try:
        head = proc.stdout.read(_HEAD.size)
        if len(head) < _HEAD.size:
            why = f"it answered {len(head)} of {_HEAD.size} bytes"
            return None
        got_ino, start, end, clean, n = _HEAD.unpack(head)
        body = proc.stdout.read(8 * n)
        if got_ino != ino or len(body) != 8 * n:
            why = "it read another file" if got_ino != ino else f"it sent {len(body) // 8} of {n} offsets"
            return None
        return Part(lo, hi, start, np.frombuffer(body, dtype=np.uint64), end, bool(clean))
    finally:
        proc.stdout.close()
        code = proc.wait()
        if why:
            log.warning("the process framing bytes %d-%d failed: %s, %s", lo, hi, why, _ended(proc, code))
        if getattr(proc, "error_file", None) is not None:
            proc.error_file.close()


def _ended(proc: subprocess.Popen, code: int) -> str:
    """How a part process ended, in words: its exit code (a signal named) and its last stderr line."""
    import signal

    if code < 0:
        try:
            said = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            said = f"killed by signal {-code}"
    else:
        said = f"exit code {code}"
    err = getattr(proc, "error_file", None)
    if err is not None:
        with contextlib.suppress(OSError, ValueError):
            err.seek(0)
            lines = err.read().strip().splitlines()
            if lines:
                said += f" ({lines[-1][:300]})"
    return said


def _given_ahead(source: Source) -> list[subprocess.Popen]:
    """The part processes started ahead with their ranges of this very file (same size, device and
    inode as `source`), in range order, taken from those started ahead; any given another file's
    ranges end here."""
    from tfrview.core import childproc

    ahead = childproc.started_ahead(__name__)
    given = sorted((p for p in ahead if hasattr(p, "part")), key=lambda p: p.part[1])
    if not given:
        return []
    for p in given:
        ahead.remove(p)
    path, _, _, size = given[0].part
    try:
        st = os.stat(path)
        same = size == source.file_size and (st.st_dev, st.st_ino) == source.identity
    except OSError:
        same = False
    if same and all(p.part[0] == path and p.part[3] == size for p in given):
        return given
    for p in given:  # another file's ranges (or one replaced since): of no use here
        p.kill()
        p.wait()
        p.stdout.close()
        if getattr(p, "error_file", None) is not None:
            p.error_file.close()
    return []


def frame_in_parts(
    source: Source, jobs: int, progress: Callable[[str, int, int], None] | None = None
) -> list[Part] | None:
    """Every range's part: the first framed here, the others in child processes at once. None when
    a child failed (logged; the caller frames the file on one core)."""
    from tfrview.core import childproc

    given = _given_ahead(source)  # already framing their ranges of this file (the CLI's start)
    if given:
        rs = [(0, given[0].part[1])] + [p.part[1:3] for p in given]
    else:
        waiting = sum(not hasattr(p, "part") for p in childproc.started_ahead(__name__))
        rs = ranges(source.file_size, jobs, started=waiting >= jobs - 1)
    procs = list(given)
    try:
        if len(rs) < 2 or not header_valid(source.read(0, HEADER_SIZE)):
            # a file damaged from its first byte (zeros, another format) is the sequential framing's:
            # it resynchronises past damage and strides over zeros; parts would each search theirs
            return None
        path = str(source.path)
        if not given:
            procs = [_spawn(path, lo, hi) for lo, hi in rs[1:]]
        first = frame_range(source, *rs[0])
        if progress:
            progress("verify", rs[0][1], source.file_size)
        ino = source.identity[1] if source.identity else -1
        others = [_answer(p, lo, hi, ino) for p, (lo, hi) in zip(procs, rs[1:], strict=True)]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if p.stdout is not None and not p.stdout.closed:
                p.stdout.close()
            if getattr(p, "error_file", None) is not None:
                p.error_file.close()
    if any(o is None for o in others):
        log.warning("%s: a framing process failed; framed on one core instead", source.path)
        return None
    return [first, *others]


def clean_prefix(parts: list[Part], size: int) -> tuple[RecordIndex, int, bool]:
    """The index of the whole records the parts agree on from the start (all VERIFIED), where
    sequential framing must take over (a few records before their run ends, unless it is the whole
    file), and whether it is the whole file."""
    offsets, end, whole = join(parts, size)
    if not whole:
        keep = max(0, len(offsets) - _MARGIN)
        end = int(offsets[keep]) if keep < len(offsets) else end
        offsets = offsets[:keep]
    lengths = np.empty_like(offsets)
    if len(offsets):  # in place: no 16 MB temporaries for 2 M records
        np.subtract(offsets[1:], offsets[:-1], out=lengths[:-1])
        lengths[:-1] -= np.uint64(OVERHEAD)
        lengths[-1] = np.uint64(end - int(offsets[-1]) - OVERHEAD)
    idx = RecordIndex()  # the arrays made here (join's a fresh one) held as they are: no copy of 2 M rows
    idx.adopt(IndexChunk(0, offsets, lengths, np.full(len(offsets), VERIFIED, np.uint8), (), end, end, whole))
    return idx, end, whole


def child_main(path: str, lo: int, hi: int) -> int:
    """Frame one range and write its part to stdout (python -m tfrview.core.tfrecord.parts PATH LO HI)."""
    from pathlib import Path

    from tfrview.core.childproc import worker_start
    from tfrview.core.errors import TfrviewError
    from tfrview.core.tfrecord.source import FileBytes

    # at its parent's priority (inherited), not lowered: the parent frames a range beside it and
    # waits for this one's answer, so on a busy machine a lowered part left the parent idle (a
    # one-file verify at load 12: the parent's range done 0.6 s before its part's). The window's
    # scan and job processes that frame in parts are lowered already, and so are their parts.
    worker_start(os.getppid(), lower=False)
    try:  # a plain local file, as the parent found it: opened here without open_source's detection and imports
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        st = os.fstat(fd)
        src = Source(
            Path(path), FileBytes(fd, st.st_size, Path(path)), st.st_size, "none", (st.st_dev, st.st_ino)
        )
        p = frame_range(src, lo, hi)
        ino = src.identity[1] if src.identity else -1
        src.close()
    except (TfrviewError, OSError) as exc:
        print(f"tfrview: {exc}", file=sys.stderr)
        return 1
    try:
        _write_all(_HEAD.pack(ino, p.start, p.end, int(p.clean), len(p.offsets)))
        _write_all(np.ascontiguousarray(p.offsets, dtype=np.uint64).data)
    except BrokenPipeError:
        return 0
    return 0


def _write_all(data) -> None:
    """All of `data` to stdout, by os.write until every byte is taken. Not sys.stdout.buffer: a
    write of megabytes through it to a pipe, stopped and continued on its way (Ctrl-Z then fg, a
    tracer such as py-spy), lost all but the first pipeful and still exited 0 (CPython 3.11); the
    parent then saw a short answer and framed the whole file on one core."""
    view = memoryview(data).cast("B")
    at = 0
    while at < len(view):
        at += os.write(1, view[at:])


def _waiting_main() -> int:
    """`python -m tfrview.core.tfrecord.parts -`: started ahead (`prestart`), it waits on stdin for
    one line, LO HI PATH; none (its parent did not need it) ends it quietly."""
    from importlib import import_module

    for name in ("childproc", "errors", "logs"):  # what child_main needs, loaded while waiting
        import_module(f"tfrview.core.{name}")

    crc32c_module()
    line = sys.stdin.buffer.readline().decode("utf-8", "surrogateescape").rstrip("\n")
    if not line:
        return 0
    lo, hi, path = line.split(" ", 2)
    return child_main(path, int(lo), int(hi))


if __name__ == "__main__":
    if sys.argv[1:] == ["-"]:
        raise SystemExit(_waiting_main())
    raise SystemExit(child_main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
