"""Index and verify a plain file in a child process, streaming binary chunks to the parent.

Why: the framing and CRC loops are pure Python and hold the GIL; in a GUI process every Qt->Python
call (each cell of a repaint) then waits for the GIL. A child process leaves the parent's GIL free:
the parent only blocks on a pipe and applies each chunk with a few numpy operations.

Frames on stdout: one type byte, a u32 JSON length, the JSON, then the arrays the JSON describes.
`I` index chunk (offsets u64, lengths u64, status u8), `V` verify chunk (bad record numbers i64),
`E` error (a `messages.Failed`, raised in the parent as `ChildFailed`). Run as `python -m tfrview.core.procs.scanproc PATH index|verify`.
"""

from __future__ import annotations

import json
import logging
import struct
import subprocess
import sys
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

from tfrview.core import childproc
from tfrview.core.childproc import lower_priority
from tfrview.core.errors import ChildError
from tfrview.core.problems import Problem
from tfrview.core.procs.messages import Failed, from_json, to_json
from tfrview.core.tfrecord.framing import OVERHEAD
from tfrview.core.tfrecord.index import IndexChunk, VerifyChunk, scan, verify
from tfrview.core.tfrecord.source import open_source

_LEN = struct.Struct("<cI")
log = logging.getLogger(__name__)


class ChildFailed(ChildError):
    """The scan process said it failed (`failed`), or stopped without a word (kind "exited")."""

    def __init__(self, failed: Failed) -> None:
        super().__init__(failed.message)
        self.failed = failed


def _problem_json(p: Problem) -> dict:
    return p.to_json()


def _problem(d: dict) -> Problem:
    return Problem.from_json(d)


def _write(out: BinaryIO, kind: bytes, meta: dict, *arrays: np.ndarray) -> None:
    head = json.dumps(meta).encode()
    out.write(_LEN.pack(kind, len(head)))
    out.write(head)
    for a in arrays:
        out.write(np.ascontiguousarray(a).tobytes())
    out.flush()


def child_main(path: str, mode: str) -> int:
    """mode 'index': stream index chunks. mode 'verify': index quietly, then stream verify chunks."""
    from tfrview.core.logs import configure_child

    out = childproc.PipeOut()  # every frame whole, even when this process is stopped and continued
    lower_priority()
    configure_child()
    try:
        src = open_source(path)
        if mode == "verify":
            return _verify_all(src, out)
        for c in scan(src):
            meta = {
                "first": c.first,
                "n": len(c.offsets),
                "scanned": c.scanned,
                "consumed": c.consumed,
                "done": c.done,
                "problems": [_problem_json(p) for p in c.problems],
            }
            _write(out, b"I", meta, c.offsets, c.lengths, c.status)
        src.close()
    except BrokenPipeError:
        return 0
    except Exception as exc:  # reported to the parent, which falls back and says so
        log.warning("scanning %s failed: %s", path, exc)
        _write(out, b"E", to_json(Failed.of(exc)))
        return 1
    return 0


def _verify_all(src, out: BinaryIO) -> int:
    """Verify mode: the file framed again quietly, then verify chunks streamed. A big plain file is
    framed and checked in parts on every core (`tfrecord.parts`): the whole records they agree on
    from the start are sent as verified at once, and only the rest is framed and checked here."""
    from tfrview.core.tfrecord.parts import clean_prefix, frame_in_parts, worth_splitting
    from tfrview.core.tfrecord.report import index_source  # start-up of this process

    prefix, start = None, 0
    jobs = childproc.cores()
    if worth_splitting(src, jobs):
        parts = frame_in_parts(src, jobs)
        if parts is not None:
            prefix, start, _ = clean_prefix(parts, src.file_size)
            offs, lens = prefix.offsets, prefix.lengths
            for a in range(0, prefix.count, _CHUNK):
                b = min(prefix.count, a + _CHUNK)
                done = int(offs[b - 1]) + int(lens[b - 1]) + OVERHEAD - int(offs[a])
                meta = {"start": a, "stop": b, "n": 0, "bytes": done, "problems": []}
                _write(out, b"V", meta, np.empty(0, np.int64))
    idx = index_source(src, None, None, None, prefix, start)
    for v in verify(src, idx, start=prefix.count if prefix is not None else 0, chunk_records=_CHUNK):
        meta = {
            "start": v.start,
            "stop": v.stop,
            "n": len(v.bad),
            "bytes": v.bytes_checked,
            "problems": [_problem_json(p) for p in v.problems],
        }
        _write(out, b"V", meta, v.bad.astype(np.int64))
    src.close()
    return 0


_CHUNK = 50_000  # records a verify frame


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        part = stream.read(n - len(buf))
        if not part:
            raise ChildFailed(Failed("the indexer process stopped early", "exited"))
        buf += part
    return bytes(buf)


def read_frames(stream: BinaryIO) -> Iterator[IndexChunk | VerifyChunk]:
    """Parse the child's frames. Raises ChildFailed for an `E` frame or when it died."""
    while True:
        head = stream.read(_LEN.size)
        if not head:
            return
        if len(head) < _LEN.size:
            head += _read_exact(stream, _LEN.size - len(head))
        kind, n = _LEN.unpack(head)
        meta = json.loads(_read_exact(stream, n))
        if kind == b"I":
            k = meta["n"]
            offs = np.frombuffer(_read_exact(stream, 8 * k), dtype=np.uint64)
            lens = np.frombuffer(_read_exact(stream, 8 * k), dtype=np.uint64)
            st = np.frombuffer(_read_exact(stream, k), dtype=np.uint8)
            yield IndexChunk(
                meta["first"],
                offs,
                lens,
                st,
                tuple(_problem(p) for p in meta["problems"]),
                meta["scanned"],
                meta["consumed"],
                meta["done"],
            )
        elif kind == b"V":
            bad = np.frombuffer(_read_exact(stream, 8 * meta["n"]), dtype=np.int64)
            yield VerifyChunk(
                meta["start"], meta["stop"], bad, tuple(_problem(p) for p in meta["problems"]), meta["bytes"]
            )
        elif kind == b"E":
            raise ChildFailed(from_json(meta))
        else:
            raise ChildFailed(Failed(f"unknown frame {kind!r} from the indexer process", "internal"))


def spawn(path: str, mode: str) -> subprocess.Popen:
    """A scan process over one file, its frames in binary on stdout."""
    return childproc.spawn("tfrview.core.procs.scanproc", path, mode)


if __name__ == "__main__":
    raise SystemExit(child_main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "index"))
