"""One big plain file framed and CRC-checked in parts, on every core.

`index_and_verify` of a 2,000,000-record file spent its time in two per-record Python loops on one
core (framing, then every data CRC). Here the file is cut into chunks of ~8 MB (byte ranges); this
process and one process a further core each take the next chunk when free (a pipe of tokens,
`childproc.deal_chunks`), so whoever starts first or runs faster frames more and all end together;
each chunk is framed and CRC-checked reading each window of the file once for both. A range finds its first record boundary as the scanner does past damage
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
_SPILL = 64 << 10  # bytes a window reads past its range's end (a longer record takes a window more)
_MARGIN = 8  # records before the first disagreement framed again sequentially (it looks back up to 4)
_HEAD = struct.Struct("<qq")  # st_ino, parts: a child's answer, then each part's
_PART = struct.Struct("<qqqqBq")  # lo, hi, start, end, clean, record count; then its offsets


@dataclass(frozen=True)
class Part:
    """What one range's framing found: a run of whole records (both CRCs pass) from `start`."""

    lo: int
    hi: int
    start: int  # where its framing begins: 0, or the first valid header at or past lo; -1: none before hi
    offsets: np.ndarray  # uint64: each whole record's header offset, from `start`
    end: int  # where the run stops: the first record at or past hi (clean), or the first that is not whole
    clean: bool  # the run reached hi (or the end of the file) with every record whole


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


def frame_range(
    source: Source,
    lo: int,
    hi: int,
    said: Callable[[int], None] | None = None,
    buf: bytearray | None = None,
    scratch: bytearray | None = None,
) -> Part:
    """Frame and CRC-check the records of [lo, hi): from the first header at or past lo, every
    record whose header and data CRC pass, up to the first record that starts at or past hi. Stops
    early at the first record that is not whole (that one is left to the sequential framing).
    `said(position)`: told after each window. `buf`: the read buffer, kept by a caller that frames
    many ranges (no fresh pages a range), and `scratch` the buffer of each window's CRC copy
    (`window.all_whole`), likewise. A window reaches at most _SPILL past hi: the records
    that start before hi and end after it, without reading a whole window more."""
    size = source.file_size
    buf = bytearray() if buf is None else buf
    scratch = bytearray() if scratch is None else scratch  # one CRC copy buffer for all its windows
    start = 0 if lo == 0 else _first_header(source, lo, hi, buf)
    if start < 0:
        return Part(lo, hi, -1, np.empty(0, np.uint64), hi, True)
    pos = start
    kept: list[np.ndarray] = []
    clean = True
    while pos < hi and pos < size:
        n = min(_WINDOW, size - pos, max(hi - pos + _SPILL, HEADER_SIZE))
        if n < HEADER_SIZE:
            clean = False
            break
        span = source.span(pos, n, buf)
        starts, nxt, why = frame_window(span, n, hi - pos, pos + n == size, scratch)
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


def _crew(source: Source, jobs: int) -> tuple[list[subprocess.Popen], int, int]:
    """(part processes, token pipe, chunk bytes) to frame `source` with: those started ahead with
    this very file (`_given_ahead`), those started ahead for a file of its size still waiting for
    their path (given it now), else new ones (`childproc.deal_chunks`)."""
    from tfrview.core import childproc

    size = source.file_size
    given = _given_ahead(source)
    if given:
        return given, given[0].part[2], given[0].part[3]
    ahead = childproc.started_ahead(__name__)
    waiting = [p for p in ahead if p.part[0] is None and p.part[1] == size]
    for p in waiting:
        ahead.remove(p)
        fd, chunk = p.part[2], p.part[3]
        try:
            p.stdin.write(f"{fd} {chunk} {size} {source.path}\n".encode())
            p.stdin.close()
        except (BrokenPipeError, OSError, ValueError):  # it died waiting: the others frame
            log.debug("a started part process was gone")
    if waiting:
        return waiting, waiting[0].part[2], waiting[0].part[3]
    n = min(jobs, size // max(1, limits.FRAME_PART_MIN_BYTES)) - 1
    if n < 1:
        return [], -1, 0
    record = childproc.record_scale(lambda at, k: bytes(source.read(at, k)), size)
    fd, chunk = childproc.deal_chunks(size, n + 1, record)
    procs = []
    for _ in range(n):
        line = f"{fd} {chunk} {size} {source.path}\n"
        proc = childproc.spawn(__name__, "-", stdin_text=line, keep_stderr=True, pass_fds=(fd,))
        proc.part = (str(source.path), size, fd, chunk)
        procs.append(proc)
    return procs, fd, chunk


def prestart(source_size: int, jobs: int) -> int:
    """Start the part processes a file of `source_size` bytes will need on `jobs` cores now, to wait
    on their stdin for its path: their Python and numpy start-up (~0.2 s) then overlaps the
    caller's own (the CLI's imports and plan) instead of delaying the framing. Those never given a
    path end when the caller does (their stdin closes). How many were started. (The CLI calls this
    module's twin in childproc, before numpy is loaded here: `childproc.start_parts_ahead`.)"""
    from tfrview.core import childproc

    return childproc.start_parts_ahead(source_size, jobs)


def _answer(proc: subprocess.Popen, ino: int) -> list[Part] | None:
    """A child's parts (one a chunk it took), or None when it failed or read another file (the
    caller frames alone; why is logged: its exit code and the last line it wrote to stderr)."""
    why = ""
    out: list[Part] = []
    try:
        head = proc.stdout.read(_HEAD.size)
        if len(head) < _HEAD.size:
            why = f"it answered {len(head)} of {_HEAD.size} bytes"
            return None
        got_ino, count = _HEAD.unpack(head)
        if got_ino != ino:
            why = "it read another file"
            return None
        for _ in range(count):
            one = proc.stdout.read(_PART.size)
            if len(one) < _PART.size:
                why = f"it answered {len(out)} of {count} chunks"
                return None
            lo, hi, start, end, clean, n = _PART.unpack(one)
            body = proc.stdout.read(8 * n)
            if len(body) != 8 * n:
                why = f"it sent {len(body) // 8} of {n} offsets of bytes {lo}-{hi}"
                return None
            out.append(Part(lo, hi, start, np.frombuffer(body, dtype=np.uint64), end, bool(clean)))
        return out
    finally:
        proc.stdout.close()
        code = proc.wait()
        if why:
            log.warning("a framing process failed: %s, %s", why, _ended(proc, code))
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
    """The part processes started ahead with this very file (same size, device and inode as
    `source`), taken from those started ahead; any given another file end here."""
    from tfrview.core import childproc

    ahead = childproc.started_ahead(__name__)
    given = [p for p in ahead if p.part[0] is not None]
    if not given:
        return []
    for p in given:
        ahead.remove(p)
    path, size = given[0].part[:2]
    try:
        st = os.stat(path)
        same = size == source.file_size and (st.st_dev, st.st_ino) == source.identity
    except OSError:
        same = False
    if same and all(p.part[:2] == (path, size) for p in given):
        return given
    _end(given)  # another file's (or one replaced since): of no use here
    return []


def _end(procs: list[subprocess.Popen]) -> None:
    """Part processes ended (killed when still running), their pipes and token pipe closed."""
    from tfrview.core.childproc import close_tokens

    close_tokens(procs)
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
        for pipe in (p.stdin, p.stdout, getattr(p, "error_file", None)):
            if pipe is not None and not pipe.closed:
                with contextlib.suppress(OSError):
                    pipe.close()


def _take(fd: int) -> int | None:
    """The next chunk's number from the token pipe, or None when every chunk is taken."""
    got = os.read(fd, 8)
    return int.from_bytes(got, "little") if len(got) == 8 else None


def _heap_kept(size: int) -> None:
    """glibc's malloc gives each block over 128 KB fresh pages of its own (every page faulted in
    again when used, returned when freed) until a block that large is freed: from then on it keeps
    blocks up to that size in its heap, reused. A window's temporaries (a few arrays of ~80,000
    starts, lengths and CRCs: ~5 MB) cost ~1,300 page faults a window (~5 ms of system time) without
    it. A block of `size` bytes taken and freed untouched (no page faulted in) raises that bar for
    this process; the heap then keeps up to twice that free. Elsewhere than glibc: nothing."""
    np.empty(size, np.uint8)


def _chunks(source: Source, fd: int, chunk: int, said: Callable[[int], None] | None = None) -> list[Part]:
    """Every chunk this process takes from the token pipe, framed (`frame_range`), one read buffer
    and one CRC copy's buffer for all; `said(bytes)` after each, the bytes of the chunks this process framed."""
    size = source.file_size
    window = min(_WINDOW, chunk) + _SPILL  # the bytes a window of a chunk spans at most
    _heap_kept(window)
    # sized at once: growing one from empty touched its 8 MB twice (a zeroed temporary, then the copy)
    buf, scratch = bytearray(window), bytearray(window)
    out: list[Part] = []
    done = 0
    while (k := _take(fd)) is not None:
        lo, hi = k * chunk, min(size, (k + 1) * chunk)
        if lo >= size:
            continue
        out.append(frame_range(source, lo, hi, buf=buf, scratch=scratch))
        done += hi - lo
        if said is not None:
            said(done)
    return out


def frame_in_parts(
    source: Source, jobs: int, progress: Callable[[str, int, int], None] | None = None
) -> list[Part] | None:
    """Every chunk's part, in file order: this process and its part processes each take the next
    chunk when free (`childproc.deal_chunks`), so all end together whoever started first or runs
    faster. None when a child failed (logged; the caller frames the file on one core)."""
    size = source.file_size
    if not header_valid(source.read(0, HEADER_SIZE)):
        # a file damaged from its first byte (zeros, another format) is the sequential framing's: it
        # resynchronises past damage and strides over zeros; parts would each search theirs. Checked
        # before any part process is started for it (those started ahead for it end here).
        _end(_given_ahead(source))
        return None
    procs, fd, chunk = _crew(source, jobs)
    mine: list[Part] = []
    others: list[list[Part] | None] = []
    try:
        if not procs:
            return None
        said = (lambda done: progress("verify", done, size)) if progress else None
        mine = _chunks(source, fd, chunk, said)
        ino = source.identity[1] if source.identity else -1
        others = [_answer(p, ino) for p in procs]
    finally:
        _end(procs)
    if any(o is None for o in others):
        log.warning("%s: a framing process failed; framed on one core instead", source.path)
        return None
    parts = sorted(mine + [p for o in others for p in o], key=lambda p: p.lo)
    if [p.lo for p in parts] != list(range(0, size, chunk)):  # every chunk once: else one core's
        log.warning("%s: the framing processes left chunks out; framed on one core instead", source.path)
        return None
    return parts


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


def child_main(path: str, fd: int, chunk: int, size: int) -> int:
    """Frame every chunk taken from the token pipe `fd` and write their parts to stdout
    (python -m tfrview.core.tfrecord.parts -, then one line on stdin: FD CHUNK SIZE PATH)."""
    from pathlib import Path

    from tfrview.core.childproc import worker_start, write_all
    from tfrview.core.errors import TfrviewError
    from tfrview.core.tfrecord.source import FileBytes

    # at its parent's priority (inherited), not lowered: the parent frames chunks beside it and
    # waits for this one's answer, so on a busy machine a lowered part left the parent idle (a
    # one-file verify at load 12: the parent's range done 0.6 s before its part's). The window's
    # scan and job processes that frame in parts are lowered already, and so are their parts.
    worker_start(os.getppid(), lower=False)
    try:  # a plain local file, as the parent found it: opened here without open_source's detection and imports
        fd_file = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        st = os.fstat(fd_file)
        if st.st_size != size:
            print(f"tfrview: {path} is {st.st_size} bytes now, not {size}", file=sys.stderr)
            return 1
        src = Source(
            Path(path), FileBytes(fd_file, st.st_size, Path(path)), st.st_size, "none", (st.st_dev, st.st_ino)
        )
        parts = _chunks(src, fd, chunk)
        ino = src.identity[1] if src.identity else -1
        src.close()
    except (TfrviewError, OSError) as exc:
        print(f"tfrview: {exc}", file=sys.stderr)
        return 1
    try:
        write_all(_HEAD.pack(ino, len(parts)))
        for p in parts:
            write_all(_PART.pack(p.lo, p.hi, p.start, p.end, int(p.clean), len(p.offsets)))
            write_all(np.ascontiguousarray(p.offsets, dtype=np.uint64).data)
    except BrokenPipeError:
        return 0
    return 0


def _waiting_main() -> int:
    """`python -m tfrview.core.tfrecord.parts -`: started ahead (`childproc.start_parts_ahead`), it
    waits on stdin for one line, FD CHUNK SIZE PATH (its token pipe, as inherited); none (its
    parent did not need it) ends it quietly."""
    from importlib import import_module

    for name in ("childproc", "errors", "logs"):  # what child_main needs, loaded while waiting
        import_module(f"tfrview.core.{name}")

    crc32c_module()
    line = sys.stdin.buffer.readline().decode("utf-8", "surrogateescape").rstrip("\n")
    if not line:
        return 0
    fd, chunk, size, path = line.split(" ", 3)
    return child_main(path, int(fd), int(chunk), int(size))


if __name__ == "__main__":
    # its answer written by os.write, it ends at once: the parent waits for its exit before joining
    # the parts, and an interpreter's teardown (numpy and the rest freed one by one) cost tens of ms
    code = _waiting_main()
    sys.stderr.flush()
    os._exit(code)
