"""Hostile inputs, built by hand (never kept in the repository): what an attacker or a broken writer
would hand tfrview. Each builder writes one file and returns its path. Used by the regression tests
and by bench/fuzz.py."""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path

from tfrview.core.output.writer import write_records
from tfrview.core.tfrecord.framing import encode_header, encode_record, mask

GiB = 1 << 30


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def example(features: dict[str, bytes]) -> bytes:
    """An Example from already-serialised Feature messages (so lists can be of any size)."""
    entries = b"".join(field(1, field(1, k.encode()) + field(2, v)) for k, v in features.items())
    return field(1, entries)


def int64_feature_packed(n: int, value: int = 1) -> bytes:
    return field(3, field(1, varint(value) * n))


def bytes_feature_empty_entries(n: int) -> bytes:
    return field(1, b"\x0a\x00" * n)


def nested(depth: int, num: int = 1, core: bytes = b"") -> bytes:
    b = core
    for _ in range(depth):
        b = field(num, b)
    return b


def crc_of_zeros(n: int) -> int:
    import crc32c

    value = 0
    block = bytes(1 << 24)
    left = n
    while left:
        k = min(left, len(block))
        value = crc32c.crc32c(block[:k] if k < len(block) else block, value)
        left -= k
    return mask(value)


def big_sparse_record(path: Path, size: int = 3 * GiB) -> Path:
    """One valid record of `size` zero bytes in a sparse plain file (a few KB on disk)."""
    with open(path, "wb") as fh:
        fh.write(encode_header(size))
        fh.seek(12 + size)
        fh.write(struct.pack("<I", crc_of_zeros(size)))
    return path


_ZEROS = 1 << 24


def _gzip_zeros(n: int) -> bytes:
    """GZIP members that inflate to n zero bytes, fast: one compressed 16 MB member, repeated."""
    member = gzip.compress(bytes(_ZEROS), 9, mtime=0)
    whole, rest = divmod(n, _ZEROS)
    return member * whole + (gzip.compress(bytes(rest), 9, mtime=0) if rest else b"")


def big_gzip_record(path: Path, size: int = 3 * GiB) -> Path:
    """A small GZIP file (concatenated members, as TensorFlow's reader accepts) that inflates to one
    valid record of `size` zero bytes."""
    path.write_bytes(
        gzip.compress(encode_header(size), mtime=0)
        + _gzip_zeros(size)
        + gzip.compress(struct.pack("<I", crc_of_zeros(size)), mtime=0)
    )
    return path


def gzip_bomb(path: Path, inflated: int = 10 * GiB) -> Path:
    """GZIP of zeros only (no records at all) that inflates `inflated` bytes."""
    path.write_bytes(_gzip_zeros(inflated))
    return path


def zlib_bomb(path: Path, inflated: int = 10 * GiB) -> Path:
    """A ZLIB stream of zeros (no records at all) that inflates `inflated` bytes."""
    c = zlib.compressobj(9)
    block = bytes(1 << 24)
    with open(path, "wb") as fh:
        left = inflated
        while left:
            k = min(left, len(block))
            fh.write(c.compress(block[:k] if k < len(block) else block))
            left -= k
        fh.write(c.flush())
    return path


def many_records_gzip(path: Path, total: int = 8 * GiB, record: int = 1 << 20) -> Path:
    """GZIP of valid records of zeros adding up to `total` inflated bytes (tiny on disk)."""
    rec = encode_record(bytes(record))
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as gz:
        for _ in range(total // len(rec)):
            gz.write(rec)
    return path


def payload_file(path: Path, payloads: list[bytes]) -> Path:
    write_records(path, payloads)
    return path


# --- payloads that cost far more decoded than they weigh ----------------------------------------------


def huge_int64_list(n: int = 40_000_000) -> bytes:
    return example({"x": int64_feature_packed(n)})


def many_keys(n: int = 500_000) -> bytes:
    return example({f"k{i}": int64_feature_packed(1) for i in range(n)})


def many_steps(n: int = 5_000_000) -> bytes:
    """A SequenceExample with one feature list of n empty Feature steps."""
    steps = b"\x0a\x00" * n  # FeatureList.feature[i] = empty Feature
    entry = field(1, b"frames") + field(2, steps)
    return field(2, field(1, entry))


def many_empty_bytes(n: int = 20_000_000) -> bytes:
    return example({"s": bytes_feature_empty_entries(n)})


def png16(width: int, height: int) -> bytes:
    """A valid 16-bit grayscale PNG of zeros (compresses to almost nothing)."""
    raw = (b"\x00" + bytes(2 * width)) * height

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 16, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def image_example(image: bytes, fmt: bytes = b"png") -> bytes:
    return example({"image/encoded": field(1, field(1, image)), "image/format": field(1, field(1, fmt))})


def evil_keys() -> bytes:
    """Feature keys that would clear a terminal and print a fake verdict, or break lines."""
    return example(
        {
            "\x1b[2J\x1b[HALL OK": int64_feature_packed(1),
            "line\nbreak\rreturn": int64_feature_packed(1),
            "image/object/class/text": field(1, field(1, b"\x1b[31mred\x1b[0m\n")),
        }
    )


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


# --- running the CLI as a user would, measured ---------------------------------------------------------


def run_cli(args: list[str], timeout: float = 120, env: dict | None = None):
    """Run `tfrview ARGS` in a child process: (exit code or None if killed at the timeout, stdout,
    stderr, the child's own peak RSS in MB, seconds). The peak is the child's VmHWM, written as it
    exits: its ru_maxrss would carry this process's own peak across exec (a test process holding a
    300 MB input showed in a 124 MB command's figure); a child killed at the timeout gives its
    ru_maxrss."""
    import sys
    import tempfile
    import time

    from tests.helpers import PEAK_RSS_KB

    env = dict(os.environ if env is None else env)
    runner = (
        "import atexit, runpy, sys\n"
        "peak = sys.argv.pop(1)\n"
        f"atexit.register(lambda: open(peak, 'w').write(str({PEAK_RSS_KB})))\n"
        "runpy.run_module('tfrview.cli', run_name='__main__', alter_sys=True)\n"
    )
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as d:
        peak = os.path.join(d, "peak")
        t0 = time.monotonic()
        pid = os.posix_spawn(
            sys.executable,
            [sys.executable, "-c", runner, peak, *args],
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
            ],
        )
        code = None
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - t0 > timeout:
                os.kill(pid, 9)
                _, status, usage = os.wait4(pid, 0)
                break
            time.sleep(0.01)
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        try:
            with open(peak) as fh:
                rss_kb = int(fh.read())
        except (OSError, ValueError):  # killed, or gone before its exit handlers ran
            rss_kb = usage.ru_maxrss
        return (
            code,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            rss_kb / 1024,
            seconds,
        )
