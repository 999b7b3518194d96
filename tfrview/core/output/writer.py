"""Writing TFRecord files (plain, GZIP, ZLIB), always to a new file, atomically.

The data goes to a temporary file beside the destination, which is renamed over it only when
everything was written; an error leaves the destination as it was.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.output.atomic import AtomicOutput, new_temp_file, output_error
from tfrview.core.tfrecord.framing import U32, Compression, crc32c_module, encode_header, mask, masked_crc
from tfrview.core.tfrecord.payload_bytes import PayloadHead


class RecordWriter(AtomicOutput):
    """`with RecordWriter(path, "gzip") as w: w.write(payload)`."""

    def __init__(self, path: str | os.PathLike, compression: str = "none", *, level: int = 6) -> None:
        if Compression.of(compression) in (None, Compression.ARRAYRECORD):
            raise TfrviewError(f"unknown compression {compression!r} (none, gzip or zlib)")
        self.path = Path(path)
        self.compression = compression
        self.count = 0
        fd, self._tmp = new_temp_file(self.path)
        self._raw = os.fdopen(fd, "wb")
        if compression == Compression.GZIP:
            self._out = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, compresslevel=level, mtime=0)
        elif compression == Compression.ZLIB:
            self._z = zlib.compressobj(level)
            self._out = None
        else:
            self._out = self._raw
        self._closed = False

    def _put(self, b: bytes) -> None:
        if self.compression == Compression.ZLIB:
            self._raw.write(self._z.compress(b))
        else:
            self._out.write(b)

    def write(self, data: bytes, footer: bytes | None = None) -> None:
        """One record. A PayloadHead (a payload too large to hold) is streamed from its source.
        `footer` replaces the data CRC: a damaged record copied on purpose keeps its failing CRC,
        so the damage stays detectable in the new file."""

        if isinstance(data, PayloadHead):
            self._write_streamed(data, footer)
            return
        self._put(encode_header(len(data)))
        self._put(data)
        self._put(footer if footer is not None else U32.pack(masked_crc(data)))
        self.count += 1

    def _write_streamed(self, head, footer: bytes | None = None) -> None:
        crc32c = crc32c_module()

        if head.pieces is None:
            raise TfrviewError(
                f"a record of {head.full_size:,} bytes cannot be copied: its source is not open"
            )
        self._put(encode_header(head.full_size))
        value = got = 0
        for piece in head.pieces():
            self._put(piece)
            value = crc32c.crc32c(piece, value)
            got += len(piece)
        if got != head.full_size:
            raise TfrviewError(f"a record of {head.full_size:,} bytes ended after {got:,} while copying it")
        self._put(footer if footer is not None else U32.pack(mask(value)))
        self.count += 1

    def _finish(self, sync: bool = True) -> None:
        """The compressor's end written, the file synced (`sync`), closed and renamed into place:
        the one finishing of a written file (an OSError is the caller's to say)."""
        if self.compression == Compression.GZIP:
            self._out.close()
        elif self.compression == Compression.ZLIB:
            self._raw.write(self._z.flush())
        if sync:
            self._raw.flush()
            os.fsync(self._raw.fileno())
        self._raw.close()
        os.replace(self._tmp, self.path)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._finish()
        except OSError as exc:
            self.abort()
            raise output_error(self.path, exc) from None
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Drop everything written; the destination is untouched."""
        self._closed = True
        try:
            self._raw.close()
        finally:
            self._tmp.unlink(missing_ok=True)


def write_records(path: str | os.PathLike, payloads, compression: str = "none") -> int:
    with RecordWriter(path, compression) as w:
        for p in payloads:
            w.write(p)
    return w.count
