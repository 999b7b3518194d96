"""TFRecord framing: `u64 length | u32 masked_crc(length) | data | u32 masked_crc(data)`, all little-endian.

Also the vocabulary every other module reports damage in: `ProblemKind`, `Problem` and the one
exception hierarchy rooted at `TfrviewError`.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

HEADER_SIZE = 12
FOOTER_SIZE = 4
OVERHEAD = HEADER_SIZE + FOOTER_SIZE
MASK_DELTA = 0xA282EAD8

HEADER = struct.Struct("<QI")
U32 = struct.Struct("<I")
U64 = struct.Struct("<Q")


class TfrviewError(Exception):
    """Base of every error tfrview raises on purpose; its message is one line meant for a person."""


class NotTFRecordError(TfrviewError):
    """The input holds no TFRecord data at all."""


class SourceError(TfrviewError):
    """A file could not be opened, mapped or read (missing, permission, a directory, shrank...)."""


class FileChangedError(SourceError):
    """A file changed (grew, was rewritten) while it was read: what was read of it at different
    moments does not fit together, so no answer about it can be given."""

    def __init__(self, path: str, detail: str = "") -> None:
        super().__init__(f"{one_line(str(path))}: the file changed while it was read{detail}; read it again")


class ProblemKind(enum.StrEnum):
    BAD_LENGTH_CRC = "bad_length_crc"
    BAD_DATA_CRC = "bad_data_crc"
    TRUNCATED = "truncated"
    UNREADABLE_BYTES = "unreadable_bytes"
    TRAILING_BYTES = "trailing_bytes"
    NOT_TFRECORD = "not_tfrecord"
    DECOMPRESSION_ERROR = "decompression_error"
    UNREADABLE_FILE = "unreadable_file"  # a file that could not be opened or read at all (the window's rows)
    MISSING_SHARD = "missing_shard"  # a shard a `-NNNNN-of-MMMMM` set names that is not there
    # QA checks of record contents (tfrview.core.analysis.checks)
    UNEXPECTED_PAYLOAD = "unexpected_payload"
    IMAGE_UNDECODABLE = "image_undecodable"
    IMAGE_NOT_IMAGE = "image_not_an_image"  # an image key (by convention) holding empty bytes, text or noise
    IMAGE_FORMAT_MISMATCH = "image_format_mismatch"  # the bytes are one format, */format names another
    IMAGE_SIZE_MISMATCH = "image_size_mismatch"
    IMAGE_EXIF_ROTATION = "image_exif_rotation"
    DUPLICATE_IMAGE = "duplicate_image"
    MASK_SIZE_MISMATCH = "mask_size_mismatch"  # a segmentation or instance mask of another size than the image
    MASK_CLASS_NOT_IN_MAP = "mask_class_not_in_map"  # class ids in a segmentation mask the label map lacks
    MASK_COUNT_MISMATCH = "mask_count_mismatch"  # instance masks and boxes differ in number
    MASK_EMPTY = "mask_empty"  # an instance mask with no pixel set
    BOX_OUT_OF_BOUNDS = "box_out_of_bounds"
    BOX_INVERTED = "box_inverted"
    BOX_ZERO_AREA = "box_zero_area"
    BOX_LIST_LENGTHS = "box_list_lengths"
    CLASS_LIST_LENGTH = "class_list_length"
    LABEL_NOT_IN_MAP = "label_not_in_map"
    LABEL_ZERO = "label_zero"
    LABEL_TEXT_MISMATCH = "label_text_mismatch"
    LABEL_TEXT_CASE = "label_text_case"  # class text and label map differ only in case or spacing
    IMAGE_SIZE_TYPE = "image_size_type"  # image/height or image/width stored as floats
    NAN_OR_INF = "nan_or_inf"
    MISSING_FEATURE = "missing_feature"
    FEATURE_TYPE_MISMATCH = "feature_type_mismatch"
    LIMIT_EXCEEDED = "limit_exceeded"  # a resource limit (tfrview.core.limits) kept part of a record unchecked

    @property
    def severity(self) -> str:
        """error: data is lost or unreadable; warning: training would see wrong data; info: worth a look."""
        return _SEVERITY.get(self, "warning")

    @property
    def severity_rank(self) -> int:
        """0 for errors, 1 for warnings, 2 for notes: the order every panel and report lists them in."""
        return SEVERITIES.index(self.severity)


SEVERITIES = ("error", "warning", "info")  # worst first


FRAMING_KINDS = frozenset({
    ProblemKind.BAD_LENGTH_CRC, ProblemKind.BAD_DATA_CRC, ProblemKind.TRUNCATED, ProblemKind.UNREADABLE_BYTES,
    ProblemKind.TRAILING_BYTES, ProblemKind.NOT_TFRECORD, ProblemKind.DECOMPRESSION_ERROR,
    ProblemKind.UNREADABLE_FILE, ProblemKind.MISSING_SHARD,
})  # fmt: skip
QA_KINDS = frozenset(k for k in ProblemKind if k not in FRAMING_KINDS)

_SEVERITY = {
    ProblemKind.BAD_LENGTH_CRC: "error", ProblemKind.BAD_DATA_CRC: "error", ProblemKind.TRUNCATED: "error",
    ProblemKind.UNREADABLE_BYTES: "error", ProblemKind.TRAILING_BYTES: "error", ProblemKind.NOT_TFRECORD: "error",
    ProblemKind.DECOMPRESSION_ERROR: "error", ProblemKind.UNREADABLE_FILE: "error", ProblemKind.MISSING_SHARD: "error",
    ProblemKind.UNEXPECTED_PAYLOAD: "error",
    ProblemKind.IMAGE_UNDECODABLE: "error", ProblemKind.IMAGE_NOT_IMAGE: "error", ProblemKind.DUPLICATE_IMAGE: "info", ProblemKind.MISSING_FEATURE: "info",
    ProblemKind.IMAGE_EXIF_ROTATION: "info", ProblemKind.LABEL_TEXT_CASE: "info", ProblemKind.IMAGE_SIZE_TYPE: "error",
}  # fmt: skip


_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\"}


def one_line(text: str) -> str:
    """Text from the data made safe for a terminal and one line long: control characters (escape
    sequences, CR, LF), other unprintable characters and backslashes are shown as escapes."""
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Problem:
    """One damaged region. `offset` is in the (decompressed) record stream; `record` is the local
    record number the damage belongs to, or None when no record could be framed there."""

    kind: ProblemKind
    offset: int
    length: int | None
    record: int | None
    message: str
    cause: str = ""  # why, where the bytes show it (tfrecord.forensics); "" when they do not
    feature: str = ""  # the feature key a finding is about: repeats group by kind and feature
    detail: str = ""  # what varies from record to record (quoted data bytes, a class text), apart from the message

    def __post_init__(self) -> None:
        for name in ("message", "feature", "detail"):  # they quote the data (keys, class text): one line, always
            text = getattr(self, name)
            if not text.isprintable():
                object.__setattr__(self, name, one_line(text))

    @property
    def text(self) -> str:
        """The message with its detail, for a person reading one problem."""
        return f"{self.message}: {self.detail}" if self.detail else self.message

    def to_json(self) -> dict:
        return {
            "kind": str(self.kind),
            "offset": self.offset,
            "length": self.length,
            "record": self.record,
            "message": self.message,
            **({"cause": self.cause} if self.cause else {}),
            **({"feature": self.feature} if self.feature else {}),
            **({"detail": self.detail} if self.detail else {}),
        }

    @classmethod
    def from_json(cls, d: dict) -> Problem:
        return cls(ProblemKind(d["kind"]), d["offset"], d["length"], d["record"], d["message"], d.get("cause", ""),
                   d.get("feature", ""), d.get("detail", ""))  # fmt: skip


def _crc32c():
    # `import crc32c` costs ~0.1 s; only pay it when a CRC is first needed.
    import crc32c

    return crc32c.crc32c


def mask(crc: int) -> int:
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    rot = (masked - MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def masked_crc(data) -> int:
    """Masked CRC-32C of any bytes-like object (bytes, memoryview, mmap slice), without copying."""
    return mask(_crc32c()(data))


@lru_cache(maxsize=65536)
def length_crc(length: int) -> int:
    """Masked CRC of the 8 length bytes; lengths repeat a lot, so this is cached."""
    return masked_crc(U64.pack(length))


def encode_header(length: int) -> bytes:
    return HEADER.pack(length, length_crc(length))


def encode_record(data: bytes) -> bytes:
    return encode_header(len(data)) + data + U32.pack(masked_crc(data))


# --- vectorised CRC-32C of 8-byte windows, for resynchronisation scans -------------------------------

_POLY = 0x82F63B78


@lru_cache(maxsize=1)
def _crc_table() -> np.ndarray:
    table = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table[i] = c
    return table


def masked_length_crcs(windows: np.ndarray) -> np.ndarray:
    """Masked CRC-32C of each row of an (N, 8) uint8 array: every candidate header in a block at once."""
    table = _crc_table()
    crc = np.full(windows.shape[0], 0xFFFFFFFF, dtype=np.uint32)
    for i in range(8):
        crc = table[(crc ^ windows[:, i]) & 0xFF] ^ (crc >> np.uint32(8))
    crc ^= np.uint32(0xFFFFFFFF)
    return mask_array(crc)


def mask_array(crc: np.ndarray) -> np.ndarray:
    """`mask` of every CRC in a uint32 array (the addition wraps as mask's & 0xFFFFFFFF does)."""
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(MASK_DELTA)


def crc32c_function():
    """The CRC-32C function itself, for loops that call it per record."""
    return _crc32c()


def valid_header_positions(raw: bytes, n: int, room: int | None = None) -> np.ndarray:
    """Offsets k < n where raw[k:k+12] is a header whose length CRC validates, vectorised.

    `raw` must hold n + 11 bytes. With `room`, a record at k must also fit: its length at most
    room - k (the bytes left before the end of the stream, less the framing)."""
    if n <= 0:
        return np.empty(0, dtype=np.int64)
    lengths = np.array(np.ndarray((n,), dtype="<u8", buffer=raw, offset=0, strides=(1,)))
    if room is not None:
        fits = np.zeros(n, dtype=bool)
        m = max(0, min(n, room + 1))
        if m:
            fits[:m] = lengths[:m] <= np.uint64(room) - np.arange(m, dtype=np.uint64)
    else:
        fits = lengths < np.uint64(1 << 40)
    cand = np.nonzero(fits)[0]
    if not len(cand):
        return cand
    stored = np.array(np.ndarray((n,), dtype="<u4", buffer=raw, offset=8, strides=(1,)))[cand]
    lc = lengths[cand]
    good = np.zeros(len(cand), dtype=bool)
    zero = lc == 0
    good[zero] = stored[zero] == np.uint32(length_crc(0))
    rest = np.nonzero(~zero)[0]
    if len(rest):  # the CRC depends on the length alone: once per distinct length
        uniq, inverse = np.unique(lc[rest], return_inverse=True)
        crcs = masked_length_crcs(uniq.astype("<u8").view(np.uint8).reshape(-1, 8))
        good[rest] = crcs[inverse] == stored[rest]
    return cand[good]
