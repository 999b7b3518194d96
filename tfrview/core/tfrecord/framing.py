"""TFRecord framing: `u64 length | u32 masked_crc(length) | data | u32 masked_crc(data)`, all little-endian.

The problem vocabulary is `tfrview.core.problems`; the errors are `tfrview.core.errors`.
"""

from __future__ import annotations

import enum
import struct
from functools import lru_cache

import numpy as np

from tfrview.core.limits import LENGTH_CRC_CACHE

HEADER_SIZE = 12
FOOTER_SIZE = 4
OVERHEAD = HEADER_SIZE + FOOTER_SIZE
MASK_DELTA = 0xA282EAD8

HEADER = struct.Struct("<QI")
U32 = struct.Struct("<I")
U64 = struct.Struct("<Q")


class Compression(enum.StrEnum):
    """How a TFRecord file's bytes are stored (TensorFlow's compression_type); the value is the wire
    word of `info --json`, `--compression` and the store."""

    NONE = "none"
    GZIP = "gzip"
    ZLIB = "zlib"
    # not a TFRecord container: an ArrayRecord/Riegeli file read as a stream of its records
    # (source.ArrayRecordSource); never an output's compression
    ARRAYRECORD = "arrayrecord"

    @property
    def shown(self) -> str:
        """What a person reads of it in the window's status line."""
        return _SHOWN.get(self, f"{self.upper()} compressed")

    @property
    def wbits(self) -> int:
        """zlib's wbits for reading this container (0: plain bytes, nothing to inflate)."""
        return {Compression.GZIP: 31, Compression.ZLIB: 15}.get(self, 0)

    @classmethod
    def of(cls, word: str) -> Compression | None:
        """The compression a word names, None for a word that names none (3.11's `in` on an enum
        class raises for a plain string)."""
        return cls._value2member_map_.get(word)  # type: ignore[return-value]


_SHOWN = {Compression.NONE: "uncompressed", Compression.ARRAYRECORD: "ArrayRecord"}


def _crc32c():
    # `import crc32c` costs ~0.1 s; only pay it when a CRC is first needed.
    return crc32c_module().crc32c


_CRC_MODULE: list = []


def crc32c_module():
    """The crc32c package's compiled module (its `crc32c(data, value=0)`), loaded without the
    package's `__init__`, whose `importlib.metadata.version` lookup alone cost ~0.05-0.1 s of every
    process that checks a CRC (each part process of a big file, the CLI). Falls back to the package
    when its layout is not the one expected."""
    if _CRC_MODULE:
        return _CRC_MODULE[0]
    import sys

    mod = sys.modules.get("crc32c")
    if mod is None:
        mod = _load_extension()
    if mod is None:
        import crc32c as mod
    _CRC_MODULE.append(mod)
    return mod


def _load_extension():
    """`crc32c._crc32c` from the package's folder, or None (logged) when it cannot be found so."""
    import importlib.machinery
    import importlib.util
    import logging
    import sys

    name = "crc32c._crc32c"
    if name in sys.modules:
        return sys.modules[name]
    try:
        spec = importlib.util.find_spec("crc32c")  # finds the package without running it
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = f"{folder}/_crc32c{suffix}"
                try:
                    open(path, "rb").close()
                except OSError:
                    continue
                loader = importlib.machinery.ExtensionFileLoader(name, path)
                ext_spec = importlib.util.spec_from_file_location(name, path, loader=loader)
                mod = importlib.util.module_from_spec(ext_spec)
                loader.exec_module(mod)
                if callable(getattr(mod, "crc32c", None)):
                    return mod
    except (ImportError, OSError, ValueError) as exc:
        logging.getLogger(__name__).debug(
            "crc32c's extension not loaded alone (%s): the package instead", exc
        )
    return None


def mask(crc: int) -> int:
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    rot = (masked - MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def masked_crc(data) -> int:
    """Masked CRC-32C of any bytes-like object (bytes, memoryview, mmap slice), without copying."""
    return mask(_crc32c()(data))


@lru_cache(maxsize=LENGTH_CRC_CACHE)
def length_crc(length: int) -> int:
    """Masked CRC of the 8 length bytes; lengths repeat a lot, so this is cached."""
    return masked_crc(U64.pack(length))


def header_valid(head: bytes) -> bool:
    """Do the first 12 bytes of `head` make a record header, its length's masked CRC matching?"""
    if len(head) < HEADER_SIZE:
        return False
    length, crc = HEADER.unpack_from(head, 0)
    return length_crc(length) == crc


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


def length_crcs(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(each record's expected masked length CRC, the distinct lengths, each record's index into
    them), from `lengths` (none negative): the CRC depends on the length alone, so it is computed
    once per distinct length (`distinct_lengths`)."""
    uniq, inverse = distinct_lengths(lengths)
    return masked_length_crcs(uniq.astype("<u8").view(np.uint8).reshape(-1, 8))[inverse], uniq, inverse


def distinct_lengths(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(lengths, return_inverse=True) of lengths (none negative), by a table
    of the lengths seen where they are small beside their count (a quarter of np.unique's sort for
    80,000 records); np.unique where the table would be the longer work (few, long records)."""
    top = int(lengths.max()) if len(lengths) else 0
    # at most 16 table entries a length (a speed choice, the same answer either way: past ~16-32
    # np.unique's sort is the faster)
    if top >= 1 << 16 or top > 16 * len(lengths):
        return np.unique(lengths, return_inverse=True)
    seen = np.zeros(top + 1, bool)
    seen[lengths] = True
    return np.flatnonzero(seen), (np.cumsum(seen, dtype=np.int32) - 1)[lengths]


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
        good[rest] = length_crcs(lc[rest])[0] == stored[rest]
    return cand[good]
