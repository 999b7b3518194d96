"""An ArrayRecord file (a Riegeli file with a footer index) read without the official wheel.

Opening reads only the last block (the postscript, stored three times, says where the footer is)
and the footer chunk (one small record per data chunk: its offset, decoded size and record count):
the count and where record N lives are known before any data chunk is read. A record is read by
decoding its chunk (the newest decoded chunk is kept: a group_size > 1 file reads a chunk's records
in turn at the cost of one decode). A file without a readable footer (its writer was never closed,
a copy was cut short, the footer is damaged) is read by walking its chunk headers, past damage by
its block headers, and what could not be read is said as problems (`walk`).

Every size and count a footer or header claims is checked against the file's size and the limits
in `core/limits.py` before anything of that size is allocated.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tfrview.core.arrayrecord.highway import hash64, hash_many, hash_rows
from tfrview.core.arrayrecord.riegeli import (
    BLOCK_HEADER_SIZE,
    BLOCK_SIZE,
    CHUNK_HEADER_SIZE,
    ChunkType,
    RiegeliError,
    codec_word,
    is_riegeli,
    parse_chunk_header,
    read_block_header,
    read_chunk_header,
    read_logical,
    read_varint,
    simple_chunk_records,
    simple_chunk_sizes,
    varints_at,
)
from tfrview.core.arrayrecord.transposed import chunk_records, transposed_chunk_records
from tfrview.core.errors import SourceError
from tfrview.core.limits import AR_FOOTER_BYTES, AR_MAX_CHUNKS, AR_MAX_RECORDS, AR_METADATA_BYTES, too_large
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)

POSTSCRIPT_MAGIC = 0x71930E704FDAE05E  # RiegeliPostscript.magic, as the official writer stores it
RECORD_CHUNK_TYPES = (ChunkType.SIMPLE, ChunkType.TRANSPOSED)


# --- protobuf fields, by hand: the footer's few messages are varints and one string ----------------


def _fields(buf: bytes) -> dict[int, int | bytes]:
    """A small message's fields by number (the last of each wins, as protobuf reads them): varints
    and length-delimited bytes; other wire types are skipped by their size. ValueError if malformed."""
    out: dict[int, int | bytes] = {}
    pos = 0
    while pos < len(buf):
        tag, pos = read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            out[number], pos = read_varint(buf, pos)
        elif wire == 2:
            n, pos = read_varint(buf, pos)
            if pos + n > len(buf):
                raise ValueError("a field runs past its message")
            out[number] = buf[pos : pos + n]
            pos += n
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"wire type {wire}")
    if pos != len(buf):
        raise ValueError("a field runs past its message")
    return out


def group_size_of(options: str) -> int | None:
    """The `group_size:N` of a writer's options string, or None where it names none."""
    for part in options.split(","):
        name, _, value = part.partition(":")
        if name.strip() == "group_size" and value.strip().isdigit():
            return int(value)
    return None


# --- the chunk table ---------------------------------------------------------------------------------


@dataclass
class Chunks:
    """The data chunks of a file in order, as arrays: where each begins, its records, the number
    of its first record (`first`, one longer: the last entry is the record count)."""

    begin: np.ndarray  # int64 file offsets
    records: np.ndarray  # int64
    decoded: np.ndarray  # int64 decoded bytes
    first: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.first = np.zeros(len(self.begin) + 1, dtype=np.int64)
        np.cumsum(self.records, out=self.first[1:])

    def __len__(self) -> int:
        return len(self.begin)

    @property
    def num_records(self) -> int:
        return int(self.first[-1])

    def chunk_of(self, record: int) -> int:
        return int(np.searchsorted(self.first, record, side="right")) - 1


@dataclass(frozen=True)
class Footer:
    """What the postscript and footer say: where the footer chunk is, the writer's options."""

    offset: int
    version: int
    options: str
    group_size: int | None


@dataclass(frozen=True)
class RecordsMetadata:
    """What a Riegeli file's metadata chunk ('m', right after the signature) says of its records,
    read as data: the .proto file descriptors it carries are named, never built or run. `error`:
    why a metadata chunk that is there could not be read (one line)."""

    comment: str = ""
    record_type: str = ""
    writer_options: str = ""
    num_records: int | None = None
    # each file descriptor: its file name and the full names of the messages it defines
    descriptors: tuple[tuple[str, tuple[str, ...]], ...] = ()
    error: str = ""

    def lines(self) -> list[str]:
        """The metadata in words, one safe line each (`info` and the window)."""
        if self.error:
            return [f"metadata chunk unreadable: {self.error}"]
        out = []
        if self.record_type:
            out.append(f"record type {printable(self.record_type)}")
        if self.writer_options:
            out.append(f"writer options {printable(self.writer_options)}")
        if self.num_records is not None:
            out.append(f"{self.num_records:,} records expected by the writer")
        for name, messages in self.descriptors:
            shown = ", ".join(printable(m) for m in messages[:8]) + (" …" if len(messages) > 8 else "")
            out.append(f"file descriptor {printable(name)}" + (f" ({shown})" if shown else ""))
        if self.comment:
            out.append(f"comment {printable(self.comment)}")
        return out or ["an empty metadata chunk"]

    def to_json(self) -> dict:
        if self.error:
            return {"error": self.error}
        d: dict = {
            "record_type_name": self.record_type,
            "record_writer_options": self.writer_options,
            "file_descriptors": [{"name": n, "messages": list(m)} for n, m in self.descriptors],
        }
        if self.num_records is not None:
            d["num_records"] = self.num_records
        if self.comment:
            d["file_comment"] = self.comment
        return d

    @classmethod
    def from_json(cls, d: dict) -> RecordsMetadata:
        """Back from `to_json` (as `info --json` and the stored answer keep it)."""
        return cls(
            comment=d.get("file_comment", ""),
            record_type=d.get("record_type_name", ""),
            writer_options=d.get("record_writer_options", ""),
            num_records=d.get("num_records"),
            descriptors=tuple((x["name"], tuple(x["messages"])) for x in d.get("file_descriptors", [])),
            error=d.get("error", ""),
        )


def info_lines(info: dict) -> list[tuple[str, str]]:
    """What `ArrayRecordFile.info()` says (or `{"error": ...}` when the file could not be read), in
    words: (label, text) a line, every text printable (the options, metadata and error come from
    the file). The one wording of `tfrview info` and the window's record tree."""
    if "error" in info:
        return [("arrayrecord", printable(str(info["error"])))]
    opts = f", options {printable(str(info['options']))}" if info.get("options") else " (no footer)"
    out = [("chunks", f"{info['chunks']:,}{opts}")]
    m = info.get("metadata")
    if m is not None:
        out += [("metadata", line) for line in RecordsMetadata.from_json(m).lines()]
    return out


def read_metadata(read, size: int) -> RecordsMetadata | None:
    """The file's metadata chunk, if its first chunk after the signature is one (None otherwise).
    Its claims are checked against the file and `limits.AR_METADATA_BYTES` before it is read; its
    data hash is checked; it is decoded as the one-record transposed chunk it is."""
    h = read_chunk_header(read, 64) if size >= 64 + CHUNK_HEADER_SIZE else None
    if h is None or h.chunk_type != ChunkType.METADATA:
        return None
    if not h.hash_ok:
        return RecordsMetadata(error="its chunk header fails its hash")
    for what, n in (("stored", h.data_size), ("decoded", h.decoded_size)):
        if n > AR_METADATA_BYTES:
            return RecordsMetadata(
                error=too_large(
                    f"the metadata chunk ({what})", n, AR_METADATA_BYTES, name="AR_METADATA_BYTES"
                )
            )
    if h.end > size:
        return RecordsMetadata(error=f"its chunk claims {h.data_size:,} bytes past the end of the file")
    data = read_logical(read, h.data_begin, h.data_size)
    if hash64(data) != h.data_hash:
        return RecordsMetadata(error="its data hash fails")
    from dataclasses import replace

    try:
        values, offsets = transposed_chunk_records(replace(h, num_records=1), data)
    except ValueError as exc:  # RiegeliError too: one line
        return RecordsMetadata(error=f"it does not decode ({exc})")
    return _parse_metadata(bytes(values[int(offsets[0]) : int(offsets[1])]))


def _parse_metadata(raw: bytes) -> RecordsMetadata:
    from google.protobuf.message import DecodeError  # start-up: only for a file that has metadata

    from tfrview.core.arrayrecord.proto.records_metadata_pb2 import RecordsMetadata as Proto

    m = Proto()
    try:
        m.ParseFromString(raw)
    except (DecodeError, RecursionError, ValueError) as exc:
        return RecordsMetadata(error=f"not a RecordsMetadata message ({printable(str(exc))})")
    descriptors = tuple(
        (
            fd.name,
            tuple(f"{fd.package}.{t.name}" if fd.package else t.name for t in fd.message_type),
        )
        for fd in m.file_descriptor
    )
    return RecordsMetadata(
        comment=m.file_comment,
        record_type=m.record_type_name,
        writer_options=m.record_writer_options,
        num_records=m.num_records if m.HasField("num_records") else None,
        descriptors=descriptors,
    )


class ArrayRecordFile:
    """One ArrayRecord (or plain Riegeli) file, read by chunk. Thread-safe `record`/`chunk`."""

    def __init__(self, path: Path, fd: int, size: int, check_data: bool = False) -> None:
        self.path = path
        # a chunk's data hash checked each time it is decoded: ~5 us per 32 bytes in Python, so
        # opt-in (`verify(data=True)` checks every chunk's at numpy's speed); a chunk that fails to
        # decode has its hash checked to say whether it is damage
        self.check_data = check_data
        self.size = size
        self._fd = fd
        self._lock = threading.Lock()
        self._cached: tuple[int, bytes, np.ndarray] | None = None
        self.problems: list[Problem] = []  # what opening found (a missing footer, what a walk lost)
        self.footer: Footer | None = None
        self.chunks = self._index()
        # chunks whose data hash a verify found good: not hashed again when decoded
        self._data_ok = np.zeros(len(self.chunks), dtype=bool)

    # reading bytes
    def read(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        return os.pread(self._fd, n, offset) if n else b""

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ArrayRecordFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def name(self) -> str:
        return printable(os.fspath(self.path))

    @property
    def num_records(self) -> int:
        return self.chunks.num_records

    @functools.cached_property
    def metadata(self) -> RecordsMetadata | None:
        """The metadata chunk's RecordsMetadata (plain Riegeli files: TFDS's, riegeli's writer), read
        on first ask; None when the file has none (the official ArrayRecord writer writes none).
        Never a record: it is not in the footer, and a walk counts only record chunks."""
        return read_metadata(self.read, self.size)

    @property
    def group_size(self) -> int | None:
        return self.footer.group_size if self.footer else None

    # --- the index: footer first, else a walk ---
    def _index(self) -> Chunks:
        try:
            footer, chunks = self._from_footer()
        except ValueError as exc:
            why = str(exc)
        else:
            self.footer = footer
            return chunks
        chunks, lost = walk(self.read, self.size, self.name)
        if not lost and self._plain_riegeli(chunks.num_records):
            log.info("%s: a plain Riegeli file (no ArrayRecord footer): read by its chunk headers", self.name)
            return chunks
        self.problems.append(
            Problem(
                ProblemKind.FOOTER_MISSING,
                self.size,
                None,
                None,
                f"{self.name}: {why}; read by its block headers instead: {len(chunks):,} whole "
                f"chunks, {chunks.num_records:,} records"
                + (f"; {len(lost)} damaged or cut regions (below)" if lost else ""),
            )
        )
        self.problems.extend(lost)
        return chunks

    def _plain_riegeli(self, walked: int) -> bool:
        """Whether a file with no footer is a whole plain Riegeli file (riegeli's or TFDS's writer),
        which has none by design, rather than an ArrayRecord file whose writer never closed it: it
        has a readable metadata chunk, which ArrayRecord's writer never writes, and every chunk was
        whole, with the records the metadata expects where it says."""
        m = self.metadata
        return m is not None and not m.error and (m.num_records is None or m.num_records == walked)

    def _postscript(self) -> int:
        """The footer's offset from the postscript chunk at the start of the last block."""
        if self.size < BLOCK_SIZE + CHUNK_HEADER_SIZE:
            raise ValueError("no footer (the file is smaller than its last block)")
        at = (self.size - 1) // BLOCK_SIZE * BLOCK_SIZE
        header = read_chunk_header(self.read, at)
        if header is None or not header.hash_ok or header.chunk_type != ChunkType.SIMPLE:
            raise ValueError("no footer (no postscript at the start of the last 64 KiB block)")
        if header.data_size > BLOCK_SIZE or header.end > self.size:
            raise ValueError("a damaged postscript")
        data = read_logical(self.read, header.data_begin, header.data_size)
        if hash64(data) != header.data_hash:
            raise ValueError("a damaged postscript (its data hash fails)")
        values, offsets = simple_chunk_records(header, data)
        for i in range(len(offsets) - 1):  # stored three times: the first that reads
            try:
                f = _fields(values[offsets[i] : offsets[i + 1]])
            except ValueError:
                continue
            offset = f.get(1)
            if f.get(2) == POSTSCRIPT_MAGIC and isinstance(offset, int) and 64 <= offset < at:
                return offset
        raise ValueError("a damaged postscript (no copy names a footer inside the file)")

    def _from_footer(self) -> tuple[Footer, Chunks]:
        offset = self._postscript()
        header = read_chunk_header(self.read, offset)
        if header is None or not header.hash_ok:
            raise ValueError(f"a damaged footer (its chunk header at byte {offset:,} fails its hash)")
        if header.end > (self.size - 1) // BLOCK_SIZE * BLOCK_SIZE:
            raise ValueError(
                f"a damaged footer (its chunk claims {header.data_size:,} bytes past the postscript)"
            )
        if header.decoded_size > AR_FOOTER_BYTES:
            raise ValueError(
                too_large("the footer", header.decoded_size, AR_FOOTER_BYTES, name="AR_FOOTER_BYTES")
            )
        if header.num_records - 1 > AR_MAX_CHUNKS:
            raise ValueError(
                too_large("the footer", header.num_records - 1, AR_MAX_CHUNKS, "chunks", "AR_MAX_CHUNKS")
            )
        data = read_logical(self.read, header.data_begin, header.data_size)
        try:
            values, offsets = simple_chunk_records(header, data)
        except RiegeliError:
            raise
        except ValueError as exc:
            raise ValueError(f"a damaged footer ({exc})") from None
        if len(offsets) < 2:
            raise ValueError("an empty footer")
        meta = _fields(values[: offsets[1]])
        inner = meta.get(1)
        if not isinstance(inner, bytes):
            raise ValueError("a footer of another kind than ArrayRecord's")
        m = _fields(inner)
        num_chunks, num_records = m.get(2, 0), m.get(3, 0)
        options = m.get(4, b"")
        options = options.decode("utf-8", "replace") if isinstance(options, bytes) else ""
        if num_chunks != len(offsets) - 2:
            raise ValueError(
                f"a damaged footer (it says {num_chunks:,} chunks and lists {len(offsets) - 2:,})"
            )
        begin, decoded, records = _footer_entries(values, offsets)
        if num_records > AR_MAX_RECORDS:
            raise ValueError(
                too_large("the footer", num_records, AR_MAX_RECORDS, "records", "AR_MAX_RECORDS")
            )
        chunks = Chunks(begin, records, decoded)
        if len(begin) and (
            int(begin[0]) < 64
            or int(begin[-1]) >= offset
            or (len(begin) > 1 and bool((np.diff(begin) <= 0).any()))
        ):
            raise ValueError("a damaged footer (its chunk offsets are not in order inside the file)")
        if chunks.num_records != num_records:
            raise ValueError(
                f"a damaged footer (it says {num_records:,} records, its chunks {chunks.num_records:,})"
            )
        # a chunk spans at least as many bytes as it has records (the format's padding rule)
        room = np.diff(np.append(begin, offset))
        if len(begin) and bool((records > room).any()):
            raise ValueError("a damaged footer (a chunk claims more records than it has bytes)")
        return Footer(offset, m.get(1, 0), options, group_size_of(options)), chunks

    # --- records ---
    def chunk(self, c: int) -> tuple[bytes, np.ndarray]:
        """Chunk c's records: (bytes, offsets). Raises RiegeliError naming the chunk and what it lost."""
        with self._lock:
            if self._cached is not None and self._cached[0] == c:
                return self._cached[1], self._cached[2]
        values, offsets = self._decode(c)
        with self._lock:
            self._cached = (c, values, offsets)
        return values, offsets

    def _decode(self, c: int) -> tuple[bytes, np.ndarray]:
        begin = int(self.chunks.begin[c])
        lost = int(self.chunks.records[c])
        first = int(self.chunks.first[c])
        where = f"chunk {c:,} at byte {begin:,}"

        def damaged(why: str) -> RiegeliError:
            return RiegeliError(
                f"{self.name}: {where} {why}; its {lost:,} records ({first:,}-{first + lost - 1:,}) are lost"
            )

        header = read_chunk_header(self.read, begin)
        if header is None:
            raise damaged("is cut short")
        if not header.hash_ok:
            raise damaged("has a damaged header (hash mismatch)")
        if header.num_records != lost or header.end > self.size:
            raise damaged("disagrees with the footer, or runs past the file's end")
        data = read_logical(self.read, header.data_begin, header.data_size)
        if self.check_data and not self._data_ok[c] and hash64(data) != header.data_hash:
            raise damaged("has damaged data (hash mismatch)")
        try:
            return chunk_records(header, data)  # simple or transposed (transposed.py)
        except RiegeliError as exc:
            raise RiegeliError(f"{self.name}: {where}: {exc}") from None
        except ValueError as exc:
            if not self.check_data and hash64(data) != header.data_hash:
                raise damaged("has damaged data (hash mismatch)") from None
            raise damaged(f"cannot be decoded ({exc})") from None

    def chunk_sizes(self, c: int) -> np.ndarray:
        """Chunk c's record sizes from its size table alone (RiegeliError if it cannot be read)."""
        begin = int(self.chunks.begin[c])
        h = read_chunk_header(self.read, begin)
        lost = int(self.chunks.records[c])
        if h is None or not h.hash_ok or h.num_records != lost or h.end > self.size:
            raise RiegeliError(
                f"{self.name}: chunk {c:,} at byte {begin:,} has a damaged header; its {lost:,} records are lost"
            )
        if h.chunk_type == ChunkType.TRANSPOSED:  # no size table: the sizes are known by decoding
            return np.diff(self.chunk(c)[1])
        try:
            return simple_chunk_sizes(h, lambda n: read_logical(self.read, h.data_begin, n)).astype(np.int64)
        except RiegeliError as exc:
            raise RiegeliError(f"{self.name}: chunk {c:,} at byte {begin:,}: {exc}") from None
        except ValueError as exc:
            raise RiegeliError(
                f"{self.name}: chunk {c:,} at byte {begin:,} cannot be decoded ({exc}); its {lost:,} records are lost"
            ) from None

    def record_lengths(self) -> np.ndarray:
        """Every record's length (int64): a one-record chunk's is its decoded size (the footer
        says it); a bigger chunk's come from its size table, read alone (not its records). A chunk
        whose table cannot be read counts its records as empty (verify names it damaged)."""
        ch = self.chunks
        out = np.zeros(ch.num_records, dtype=np.int64)
        single = ch.records == 1
        out[ch.first[:-1][single]] = ch.decoded[single]
        for c in np.flatnonzero(~single & (ch.records > 0)).tolist():
            try:
                out[int(ch.first[c]) : int(ch.first[c + 1])] = self.chunk_sizes(c)
            except RiegeliError as exc:
                log.warning("%s", exc)
        return out

    def record(self, n: int) -> bytes:
        """Record n's bytes (RecordRangeError past the end; RiegeliError if its chunk is damaged)."""
        if not 0 <= n < self.num_records:
            from tfrview.core.errors import RecordRangeError

            raise RecordRangeError(f"{self.name}: no record {n:,} (the file has {self.num_records:,})")
        c = self.chunks.chunk_of(n)
        values, offsets = self.chunk(c)
        j = n - int(self.chunks.first[c])
        return values[offsets[j] : offsets[j + 1]]

    # --- checks ---
    def verify(self, data: bool = False) -> list[Problem]:
        """Every block header's and every chunk header's hash (array operations over all of them)
        and the footer's agreement with the chunk headers; with `data`, every chunk's data hash.
        Damage is named where it is: byte offset, chunk number, records lost."""
        found: list[Problem] = []
        # block headers: gathered (24 bytes each) and hashed together
        rows = self._gather(
            np.arange(0, self.size - BLOCK_HEADER_SIZE + 1, BLOCK_SIZE, dtype=np.int64), BLOCK_HEADER_SIZE
        )
        bad = np.flatnonzero(hash_rows(rows[:, 8:]) != rows[:, :8].copy().view("<u8")[:, 0])
        for b in bad.tolist():
            c = max(0, int(np.searchsorted(self.chunks.begin, b * BLOCK_SIZE, side="right")) - 1)
            found.append(
                Problem(
                    ProblemKind.CHUNK_DAMAGED,
                    b * BLOCK_SIZE,
                    BLOCK_HEADER_SIZE,
                    None,
                    f"block header at byte {b * BLOCK_SIZE:,} (in chunk {c:,}) fails its hash: "
                    "recovery past damage near it is less sure",
                )
            )
        found.extend(self._verify_chunk_headers(data))
        return found

    def _verify_chunk_headers(self, data: bool) -> list[Problem]:
        ch = self.chunks
        begins = ch.begin.tolist()
        headers = self._chunk_headers(ch.begin)
        found: list[Problem] = []
        if len(headers) != CHUNK_HEADER_SIZE * len(begins):  # a header cut short: slow path, one by one
            return self._verify_one_by_one(data)
        rows = np.frombuffer(headers, dtype=np.uint8).reshape(-1, CHUNK_HEADER_SIZE)
        words = rows.copy().view("<u8")
        hash_bad = hash_rows(rows[:, 8:]) != words[:, 0] if len(rows) else np.zeros(0, bool)
        count_bad = ((words[:, 3] >> np.uint64(8)).astype(np.int64) != ch.records) | (
            words[:, 4].astype(np.int64) != ch.decoded
        )
        bad_data = np.zeros(len(begins), dtype=bool)
        if data:
            trusted = ~(hash_bad | count_bad)
            bad_data = self._data_hashes_bad(words, trusted)
            self._data_ok = trusted & ~bad_data
        for c in np.flatnonzero(hash_bad | count_bad | bad_data).tolist():
            why = (
                "has a damaged header (hash mismatch)"
                if hash_bad[c]
                else "disagrees with the footer"
                if count_bad[c]
                else "has damaged data (hash mismatch)"
            )
            found.append(self._chunk_problem(c, why))
        return found

    def _chunk_headers(self, begins: np.ndarray) -> bytes:
        """Every chunk's 40 header bytes, joined: gathered where no block header interrupts them
        (nearly all), the rest read around the block header."""
        in_block = begins % BLOCK_SIZE
        plain = ((in_block >= BLOCK_HEADER_SIZE) & (in_block <= BLOCK_SIZE - CHUNK_HEADER_SIZE)) | (
            in_block == 0
        )
        at = np.where(in_block == 0, begins + BLOCK_HEADER_SIZE, begins)  # a chunk at a block's start
        out = np.zeros((len(begins), CHUNK_HEADER_SIZE), dtype=np.uint8)
        rows = self._gather(at[plain], CHUNK_HEADER_SIZE)
        out[np.flatnonzero(plain)[: len(rows)]] = rows
        for i in np.flatnonzero(~plain).tolist():  # interrupted by a block header: read around it
            raw = read_logical(self.read, int(begins[i]), CHUNK_HEADER_SIZE)
            out[i, : len(raw)] = np.frombuffer(raw, dtype=np.uint8)
        short = len(rows) < int(plain.sum()) or any(
            len(read_logical(self.read, int(begins[i]), CHUNK_HEADER_SIZE)) < CHUNK_HEADER_SIZE
            for i in np.flatnonzero(~plain).tolist()[-1:]
        )
        return out.tobytes()[:-1] if short else out.tobytes()  # a cut header: the slow path

    def _gather(self, at: np.ndarray, width: int) -> np.ndarray:
        """`width` bytes at each of the sorted positions `at`, as an (n, width) array (shorter where
        the file ends): one read a position where they are sparse; where they are dense (a header
        every few KB), the file read in 8 MB pieces and the bytes picked out by index arrays, so
        the cost is the copy, not a system call each."""
        n = len(at)
        if n and int(at[-1]) + width > self.size:
            at = at[at + width <= self.size]
            n = len(at)
        if not n:
            return np.zeros((0, width), dtype=np.uint8)
        span = int(at[-1]) - int(at[0]) + width
        if span > n * (16 << 10):  # sparse (a block header every 64 KiB, big chunks): a read each
            raw = b"".join([os.pread(self._fd, width, a) for a in at.tolist()])
            return np.frombuffer(raw, dtype=np.uint8).reshape(n, width)
        out = np.empty((n, width), dtype=np.uint8)
        lane = np.arange(width, dtype=np.int64)
        i = 0
        while i < n:
            lo = int(at[i])
            piece = np.frombuffer(os.pread(self._fd, _GATHER_PIECE + width, lo), dtype=np.uint8)
            j = max(i + 1, int(np.searchsorted(at, lo + len(piece) - width, side="right")))
            out[i:j] = piece[(at[i:j] - lo)[:, None] + lane]
            i = j
        return out

    def _verify_one_by_one(self, data: bool) -> list[Problem]:
        found = []
        for c in range(len(self.chunks)):
            try:
                if data:
                    self._decode(c)
                else:
                    h = read_chunk_header(self.read, int(self.chunks.begin[c]))
                    if h is None or not h.hash_ok or h.num_records != int(self.chunks.records[c]):
                        raise RiegeliError("cut short or damaged")
            except RiegeliError as exc:
                found.append(self._chunk_problem(c, str(exc).split(": ")[-1]))
        return found

    def _data_hashes_bad(self, words: np.ndarray, trusted: np.ndarray) -> np.ndarray:
        """Chunks whose data fail their hash, a batch of ~64 MB at a time (hash_many)."""
        bad = np.zeros(len(words), dtype=bool)
        batch: list[int] = []
        size = 0

        def flush() -> None:
            nonlocal size
            bufs = []
            for c in batch:
                h = parse_chunk_header(words[c].tobytes(), int(self.chunks.begin[c]), True)  # hashed: trusted
                bufs.append(read_logical(self.read, h.data_begin, h.data_size) if h.end <= self.size else b"")
            got = hash_many(bufs)
            for i, c in enumerate(batch):
                bad[c] = got[i] != words[c, 2] or (int(words[c, 1]) and not bufs[i])
            batch.clear()
            size = 0

        for c in np.flatnonzero(trusted).tolist():
            batch.append(c)
            size += int(words[c, 1])
            if size >= 64 << 20:
                flush()
        if batch:
            flush()
        return bad

    def _chunk_problem(self, c: int, why: str) -> Problem:
        begin = int(self.chunks.begin[c])
        first = int(self.chunks.first[c])
        lost = int(self.chunks.records[c])
        return Problem(
            ProblemKind.CHUNK_DAMAGED,
            begin,
            None,
            first if lost else None,
            f"chunk {c:,} at byte {begin:,} {why}: its {lost:,} records ({first:,}-{first + lost - 1:,}) are lost",
        )

    def notes(self) -> list[Problem]:
        """What is worth a look but no damage: a group size over 1 (each record read alone decodes
        its whole chunk: Grain and random access crawl)."""
        g = self.group_size
        if g is not None and g > 1:
            return [
                Problem(
                    ProblemKind.ARRAYRECORD_GROUP_SIZE,
                    0,
                    None,
                    None,
                    f"{self.name}: group_size {g:,}: reading one record decodes a chunk of up to {g:,} "
                    "records (random access, as Grain reads, is slow); write with group_size:1",
                )
            ]
        return []

    def info(self) -> dict:
        """What `info` says of the file beyond its records: chunks, the writer's options and group
        size from the footer, and the metadata chunk (None when it has none)."""
        m = self.metadata
        return {
            "chunks": len(self.chunks),
            "options": self.footer.options if self.footer else None,
            "group_size": self.group_size,
            "metadata": m.to_json() if m is not None else None,
        }

    def describe(self) -> str:
        """One line: records, chunks, compression, options."""
        codec = "?"
        if len(self.chunks):
            try:
                h = read_chunk_header(self.read, int(self.chunks.begin[0]))
                if h is not None and h.data_size:
                    codec = codec_word(self.read(h.data_begin, 1)[0])
            except (OSError, IndexError):
                pass
        opts = f", options {self.footer.options}" if self.footer and self.footer.options else ""
        return f"ArrayRecord: {self.num_records:,} records in {len(self.chunks):,} chunks, {codec}{opts}"


def _footer_entries(values: bytes, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ArrayRecordFooter records (offset, decoded size, records each), as arrays: in one pass
    of array operations when every entry is the writer's three varint fields in order, else one by one."""
    n = len(offsets) - 2
    a = np.frombuffer(values, dtype=np.uint8)[int(offsets[1]) :]
    ends = np.flatnonzero(a < 0x80)
    if n == 0:
        if not len(a):
            return (np.zeros(0, dtype=np.int64),) * 3
    elif len(ends) == 6 * n and ends[-1] == len(a) - 1:
        # the writer's shape: tag 1, value, tag 2, value, tag 3, value. Only the values are decoded
        # (a third of the varints); each tag is checked to be its one byte
        e = ends.reshape(n, 6)
        tag_at = np.empty((n, 3), dtype=np.int64)
        tag_at[0, 0] = 0
        tag_at[1:, 0] = e[:-1, 5] + 1
        tag_at[:, 1:] = e[:, 1:4:2] + 1
        if (tag_at == e[:, 0::2]).all() and (a[e[:, 0::2]] == np.array([8, 16, 24], np.uint8)).all():
            u = [varints_at(a, e[:, k - 1] + 1, e[:, k]) for k in (1, 3, 5)]
            if all((x <= np.uint64(np.iinfo(np.int64).max)).all() for x in u):  # int64 offsets
                return u[0].astype(np.int64), u[1].astype(np.int64), u[2].astype(np.int64)
    out = np.zeros((n, 3), dtype=np.int64)
    for i in range(n):
        f = _fields(values[offsets[i + 1] : offsets[i + 2]])
        out[i] = [int(f.get(1, 0)), int(f.get(2, 0)), int(f.get(3, 0))]  # type: ignore[arg-type]
    return out[:, 0].copy(), out[:, 1].copy(), out[:, 2].copy()


def walk(read, size: int, name: str) -> tuple[Chunks, list[Problem]]:
    """Every whole record chunk found by walking chunk headers from the start; past a header that
    fails its hash, on from the next block header that passes. What was skipped is said as problems
    (the records in it are not known: only the footer counts them). Headers are read ahead
    unchecked and hashed a batch at a time (`hash_rows`); from the first that fails, step by step."""
    found: list[tuple[int, int, int, int]] = []  # begin, type, records, decoded
    lost: list[Problem] = []
    pos = 0
    while pos < size:
        batch: list[tuple[int, bytes]] = []
        p = pos
        while p < size and len(batch) < _WALK_BATCH:
            raw = read_logical(read, p, CHUNK_HEADER_SIZE)
            if len(raw) < CHUNK_HEADER_SIZE:
                break
            h = parse_chunk_header(raw, p)
            end = h.end
            if end <= p or end > size:
                break
            batch.append((p, raw))
            p = end
        good = len(batch)
        if batch:
            rows = np.frombuffer(b"".join(r for _, r in batch), dtype=np.uint8).reshape(-1, CHUNK_HEADER_SIZE)
            ok = hash_rows(rows[:, 8:]) == rows.copy().view("<u8")[:, 0]
            good = len(batch) if ok.all() else int(np.argmin(ok))
        for begin, raw in batch[:good]:
            h = parse_chunk_header(raw, begin)
            if h.chunk_type in RECORD_CHUNK_TYPES and h.num_records:
                found.append((begin, h.chunk_type, h.num_records, h.decoded_size))
        if good:
            pos = parse_chunk_header(batch[good - 1][1], batch[good - 1][0]).end
            if good == len(batch) and len(batch) == _WALK_BATCH:
                continue
        step = _walk_step(read, size, name, pos, found, lost)
        if step is None:
            break
        pos = step
    begins = np.array([f[0] for f in found], dtype=np.int64)
    records = np.array([f[2] for f in found], dtype=np.int64)
    decoded = np.array([f[3] for f in found], dtype=np.int64)
    # a footer and postscript read as ordinary chunks would add their entries as records: the
    # footer's first record is ArrayRecord's metadata; drop it and what follows
    b, r, d = _without_footer(read, begins, records, decoded)
    return Chunks(b, r, d), lost


_WALK_BATCH = 4096  # headers read ahead and hashed together
_GATHER_PIECE = 8 << 20  # bytes read at once where headers are dense (verify)


def _walk_step(read, size: int, name: str, pos: int, found: list, lost: list[Problem]) -> int | None:
    """One chunk at `pos` read with care: where the walk goes on, or None where it ends."""
    if pos >= size:
        return None
    h = read_chunk_header(read, pos)
    if h is not None and h.hash_ok and pos < h.end <= size:
        if h.chunk_type in RECORD_CHUNK_TYPES and h.num_records:
            found.append((pos, h.chunk_type, h.num_records, h.decoded_size))
        return h.end
    if h is not None and h.hash_ok and h.num_records == len(found) + 1 and h.chunk_type == ChunkType.SIMPLE:
        # one record per chunk found and one more: ArrayRecord's footer, cut (written at close)
        lost.append(
            Problem(
                ProblemKind.TRUNCATED,
                pos,
                size - pos,
                None,
                f"{name}: the file ends inside its footer at byte {pos:,} (the index written when the "
                "writer closed): every record before it is whole",
            )
        )
        return None
    if h is not None and h.hash_ok:  # a whole header whose chunk the file cuts short
        lost.append(
            Problem(
                ProblemKind.TRUNCATED,
                pos,
                size - pos,
                None,
                f"{name}: the file ends inside the chunk at byte {pos:,}: its {h.num_records:,} records are "
                f"lost (the chunk needs {h.end - pos:,} bytes, {size - pos:,} are there)",
            )
        )
        return None
    nxt = _next_chunk_after(read, size, pos)
    if h is None and nxt >= size:
        if any(read(pos, min(size - pos, 64))):
            lost.append(
                Problem(
                    ProblemKind.TRUNCATED,
                    pos,
                    size - pos,
                    None,
                    f"{name}: the file ends inside a chunk header at byte {pos:,}",
                )
            )
        return None
    lost.append(
        Problem(
            ProblemKind.CHUNK_DAMAGED,
            pos,
            nxt - pos,
            None,
            f"{name}: bytes {pos:,}-{min(nxt, size) - 1:,} hold no readable chunk (a damaged header, "
            "or a cut): the records in them are lost",
        )
    )
    return nxt


def _chunk_messages(read, begin: int) -> list[dict] | None:
    """A small chunk's records read as protobuf messages, or None if they are not (or it is big)."""
    h = read_chunk_header(read, begin)
    if h is None or h.data_size > BLOCK_SIZE or h.num_records > 1 << 16:
        return None
    try:
        values, offsets = simple_chunk_records(h, read_logical(read, h.data_begin, h.data_size))
        return [_fields(values[offsets[i] : offsets[i + 1]]) for i in range(min(len(offsets) - 1, 4))]
    except (ValueError, SourceError):
        return None


def _without_footer(read, b, r, d):
    """The chunk lists less ArrayRecord's postscript and footer chunks at their end, if there."""
    n = len(b)
    if n:
        msgs = _chunk_messages(read, int(b[n - 1]))
        if msgs and all(m.get(2) == POSTSCRIPT_MAGIC for m in msgs):
            n -= 1
    if n:
        msgs = _chunk_messages(read, int(b[n - 1]))
        inner = msgs[0].get(1) if msgs else None
        if isinstance(inner, bytes):
            try:
                meta = _fields(inner)
            except ValueError:
                meta = {}
            if 2 in meta and 3 in meta:
                n -= 1
    return b[:n], r[:n], d[:n]


def _next_chunk_after(read, size: int, pos: int) -> int:
    """Where the first chunk that may be whole begins after `pos`: the next block header that
    passes its hash says where the chunk it interrupts begins or ends."""
    b = (pos // BLOCK_SIZE + 1) * BLOCK_SIZE
    while b < size:
        bh = read_block_header(read, b)
        if bh is None:
            return size
        if bh.hash_ok:
            begin = b - bh.previous_chunk
            return begin if begin > pos else b + bh.next_chunk
        b += BLOCK_SIZE
    return size


def open_arrayrecord(path: str | os.PathLike, check_data: bool = False) -> ArrayRecordFile:
    """Open an ArrayRecord/Riegeli file. Raises SourceError (one line) for anything else."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceError(f"{printable(os.fspath(p))}: cannot open ({exc.strerror or exc})") from None
    try:
        size = os.fstat(fd).st_size
        if not is_riegeli(os.pread(fd, 64, 0)):
            raise SourceError(f"{printable(os.fspath(p))}: not an ArrayRecord/Riegeli file")
        return ArrayRecordFile(p, fd, size, check_data)
    except BaseException:
        os.close(fd)
        raise
