"""Writing ArrayRecord files through the official writer (`array_record`'s `ArrayRecordWriter`,
when installed: it has no Windows wheel), atomically and checked: the records go to a temporary
file beside the destination, which is read back by tfrview's own reader (its count, every block
and chunk header hash, and each record's bytes against what was written) before it is renamed
over the destination. tfrview writes no Riegeli itself: the official writer is the reference."""

from __future__ import annotations

import contextlib
import os
from enum import StrEnum
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.output.atomic import AtomicOutput, new_temp_file, output_error
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import crc32c_module
from tfrview.core.tfrecord.payload_bytes import PayloadHead

# the compressions the official writer takes, by the option word it takes them as
_CODEC_OPTIONS = {"zstd": "zstd:3", "brotli": "brotli:6", "snappy": "snappy", "uncompressed": "uncompressed"}


class RecordFormat(StrEnum):
    """What a new file holding records is written as (`salvage --format`)."""

    TFRECORD = "tfrecord"
    ARRAYRECORD = "arrayrecord"


def official_writer():
    """The official ArrayRecordWriter class, or None where `array-record` cannot be imported."""
    try:
        from array_record.python.array_record_module import ArrayRecordWriter
    except ImportError:
        return None
    return ArrayRecordWriter


def options_like(source) -> str:
    """The writer's options for records copied from `source`: `group_size:1` (each record read
    alone decodes only its own chunk) and the input's compression where the writer takes it (an
    ArrayRecord input's footer options, else its first chunk's codec), else zstd."""
    ar = getattr(source, "ar", None)
    if ar is None:
        return "group_size:1,zstd:3"
    words = ar.footer.options.split(",") if ar.footer is not None else []
    for w in reversed(words):
        if w.split(":", 1)[0] in _CODEC_OPTIONS:
            return f"group_size:1,{w}"
    codec = _first_codec(ar)
    return f"group_size:1,{_CODEC_OPTIONS.get(codec, _CODEC_OPTIONS['zstd'])}"


def _first_codec(ar) -> str:
    """The codec of the file's first chunk with data, as the writer's option word ('' if none)."""
    from tfrview.core.arrayrecord.riegeli import codec_word, read_chunk_header

    for begin in ar.chunks.begin[:1].tolist():
        h = read_chunk_header(ar.read, int(begin))
        if h is not None and h.data_size:
            word = codec_word(ar.read(h.data_begin, 1)[0])
            return "uncompressed" if word == "none" else word
    return ""


class ArrayRecordOut(AtomicOutput):
    """`with ArrayRecordOut(path, options) as w: w.write(payload)`: RecordWriter's interface."""

    def __init__(self, path: str | os.PathLike, options: str = "group_size:1,zstd:3") -> None:
        writer = official_writer()
        if writer is None:
            raise TfrviewError(
                "writing ArrayRecord needs the official array-record package (pip install array-record; "
                "it has no Windows build): write TFRecord instead (--format tfrecord)"
            )
        self.path = Path(path)
        self.options = options
        self.count = 0
        fd, self._tmp = new_temp_file(self.path)
        os.close(fd)  # the writer opens the file by its name
        self._crc = crc32c_module().crc32c
        self._sums: list[tuple[int, int]] = []  # each record's (length, CRC32C): the read-back check
        try:
            self._w = writer(str(self._tmp), options)
        except Exception as exc:  # the writer's own (a RuntimeError or ValueError of pybind11)
            self._tmp.unlink(missing_ok=True)
            raise TfrviewError(
                f"{printable(str(self.path))}: the ArrayRecord writer refused ({exc})"
            ) from None
        self._closed = False

    def write(self, data) -> None:
        if isinstance(data, PayloadHead):  # a record past the decode limit: its whole bytes
            if data.pieces is None:
                raise TfrviewError(
                    f"a record of {data.full_size:,} bytes cannot be copied: its source is not open"
                )
            data = b"".join(data.pieces())
        data = bytes(data)
        self._w.write(data)
        self._sums.append((len(data), self._crc(data)))
        self.count += 1

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._w.close()
            self._check()
            with open(self._tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(self._tmp, self.path)
        except OSError as exc:
            self._tmp.unlink(missing_ok=True)
            raise output_error(self.path, exc) from None
        except BaseException:
            self._tmp.unlink(missing_ok=True)
            raise

    def _check(self) -> None:
        """The file written, read back by tfrview's reader: its count, every header hash and each
        record's length and CRC32C as written (a TfrviewError names the first that differs)."""
        from tfrview.core.arrayrecord.reader import open_arrayrecord

        with open_arrayrecord(self._tmp) as ar:
            bad = [p for p in ar.problems if p.kind] + ar.verify(data=False)
            if bad:
                raise TfrviewError(f"{printable(str(self.path))}: not written: read back, {bad[0].message}")
            if ar.num_records != self.count:
                raise TfrviewError(
                    f"{printable(str(self.path))}: not written: read back, {ar.num_records:,} records "
                    f"where {self.count:,} were written"
                )
            for i, (n, crc) in enumerate(self._sums):
                got = ar.record(i)
                if len(got) != n or self._crc(got) != crc:
                    raise TfrviewError(
                        f"{printable(str(self.path))}: not written: read back, record {i:,} differs"
                    )

    def abort(self) -> None:
        """Drop everything written; the destination is untouched."""
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):  # the file is dropped whatever the writer says
                self._w.close()
        self._tmp.unlink(missing_ok=True)
