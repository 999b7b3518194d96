"""A TFDS record's values as its features.json declares them, for a person to read: a `Tensor`'s
bytes (encoding `bytes`: the array's raw bytes; `zlib`: those deflated) or values decoded into a
numpy array of its declared shape and dtype, a `ClassLabel`'s ids with their names, and one line
that says what the key is. The feature tree (window) and `dump` show these; the reading
(`reading.read_record`) decides boxes and labels from the same declarations."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import MAX_DECODE_BYTES, too_large
from tfrview.core.records.feature import BYTES_LIST, Feature
from tfrview.core.tfds.features import ClassLabel, Features, FlatFeature, Tensor

# TFDS's dtype names -> numpy's (tf.string is bytes: no array of it is built)
_DTYPES = {
    "bool": np.bool_,
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "uint16": np.uint16,
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
    "float16": np.float16,
    "bfloat16": None,
    "float32": np.float32,
    "float64": np.float64,
    "complex64": np.complex64,
    "complex128": np.complex128,
}


class TensorError(TfrviewError):
    """A Tensor's bytes that do not make the array its features.json declares."""


@dataclass(frozen=True, slots=True)
class Declared:
    """What features.json says of one key of a record, and its values as that reads them."""

    key: str
    text: str  # one line: `Tensor float32 [2x3] zlib`, `ClassLabel, 3 classes, names (...)`
    value: str | None = None  # the values read by it: names of class ids, a decoded array; None: as they are
    array: np.ndarray | None = None  # a Tensor decoded (the first item's, in a sequence)
    error: str | None = None  # why its bytes did not decode


def declared(tfds: Features | None, features: Mapping[str, Feature]) -> dict[str, Declared]:
    """key -> what features.json says of it and its values read so, for every key of the record it
    declares (undeclared keys are left out: the record shows them as they are)."""
    if tfds is None:
        return {}
    out = {}
    for k, f in features.items():
        flat = tfds.lookup(k)
        if flat is not None:
            out[k] = declare(flat, f)
    return out


def declare(flat: FlatFeature, f: Feature) -> Declared:
    spec = flat.spec
    if isinstance(spec, ClassLabel) and spec.names and f.type != BYTES_LIST:
        names = spec.names
        shown = [
            f"{int(v)} ({names[int(v)]})" if 0 <= int(v) < len(names) else str(int(v)) for v in f.values[:8]
        ]
        more = f", … {len(f.values) - 8:,} more" if len(f.values) > 8 else ""
        return Declared(flat.key, flat.text, ", ".join(shown) + more)
    if isinstance(spec, Tensor):
        try:
            a = tensor_array(flat, f)
        except TensorError as exc:
            return Declared(flat.key, flat.text, error=str(exc))
        if a is None:
            return Declared(flat.key, flat.text)
        return Declared(flat.key, flat.text, array_text(a), a)
    return Declared(flat.key, flat.text)


def tensor_array(flat: FlatFeature, f: Feature) -> np.ndarray | None:
    """A Tensor key's values as the array its spec declares (the first item's when it repeats in a
    sequence, with the items' count as the first axis when its values are inline): None for text
    tensors and dtypes numpy lacks; TensorError when the bytes do not fit."""
    spec = flat.spec
    assert isinstance(spec, Tensor)
    dtype = _DTYPES.get(spec.dtype)
    if dtype is None:
        return None
    shape = spec.shape
    if spec.encoding in ("bytes", "zlib"):
        if f.type != BYTES_LIST or not len(f.values):
            return None
        raw = f.values[0]
        if spec.encoding == "zlib":
            raw = _inflate(raw)
        a = np.frombuffer(raw, dtype=dtype)
        return _shaped(a, shape, flat.key)
    if f.type == BYTES_LIST:
        return None
    a = np.asarray(f.values).astype(dtype, copy=False)
    return _shaped(a, ((None,) if flat.sequences else ()) + shape, flat.key)


def _inflate(raw: bytes) -> bytes:
    d = zlib.decompressobj()
    try:
        out = d.decompress(raw, MAX_DECODE_BYTES)
    except zlib.error as exc:
        raise TensorError(f"zlib data does not inflate ({exc})") from None
    if d.unconsumed_tail:
        raise TensorError(too_large("the inflated tensor", None, MAX_DECODE_BYTES, name="MAX_DECODE_BYTES"))
    return out


def _shaped(a: np.ndarray, shape: tuple[int | None, ...], key: str) -> np.ndarray:
    """`a` in `shape`, one unknown dimension found from its size (more than one: flat)."""
    unknown = sum(d is None for d in shape)
    known = int(np.prod([d for d in shape if d is not None])) if shape else 1
    if unknown == 0:
        if a.size != known:
            raise TensorError(f"{a.size:,} values where the shape {list(shape)} needs {known:,}")
        return a.reshape(shape)
    if unknown == 1 and known and a.size % known == 0:
        return a.reshape(tuple(-1 if d is None else d for d in shape))
    return a


def array_text(a: np.ndarray) -> str:
    """An array in one line: its dtype and shape, then its first 12 values (`float32[2, 3] 1, 1.25, …`)."""
    vals = a.reshape(-1)[:12].tolist()
    shown = ", ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in vals)
    return f"{a.dtype}{list(a.shape)} {shown}" + (", …" if a.size > 12 else "")
