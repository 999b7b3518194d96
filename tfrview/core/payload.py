"""Record payloads as plain values: Example, SequenceExample, any other protobuf, or opaque bytes.

The kind is decided by trying, never from names: a protobuf parser accepts almost anything, so the
top-level wire fields are walked first and must be exactly what each message allows.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

import numpy as np

EXAMPLE = "example"
SEQUENCE_EXAMPLE = "sequence_example"
PROTOBUF = "protobuf"
BYTES = "bytes"
KINDS = (EXAMPLE, SEQUENCE_EXAMPLE, PROTOBUF, BYTES)

BYTES_LIST = "bytes_list"
FLOAT_LIST = "float_list"
INT64_LIST = "int64_list"
TYPE_SHORT = {BYTES_LIST: "bytes", FLOAT_LIST: "float", INT64_LIST: "int64"}


@dataclass(frozen=True, slots=True)
class Feature:
    """One feature's values: list[bytes] for bytes_list, float32 / int64 numpy arrays otherwise."""

    type: str
    values: list[bytes] | np.ndarray

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True, slots=True)
class WireField:
    """A field of a protobuf we have no schema for. `value` is an int, bytes, or a nested list."""

    number: int
    wire_type: int
    value: int | bytes | list[WireField]


@dataclass(frozen=True)
class Payload:
    kind: str
    features: dict[str, Feature] = field(default_factory=dict)  # Example features / SequenceExample context
    feature_lists: dict[str, list[Feature]] = field(default_factory=dict)
    fields: list[WireField] = field(default_factory=list)  # PROTOBUF
    raw: bytes = b""

    @property
    def size(self) -> int:
        return len(self.raw)


class WireError(ValueError):
    pass


# --- wire format walking --------------------------------------------------------------------------


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if i >= len(buf):
            raise WireError("varint runs past the end")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise WireError("varint too long")


def top_fields(buf: bytes) -> list[tuple[int, int, int, int]]:
    """(field number, wire type, value start, value end) for each top-level field; WireError if the
    bytes are not a well-formed message."""
    out = []
    i = 0
    n = len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise WireError("field number 0")
        if wt == 0:
            start = i
            _, i = _varint(buf, i)
        elif wt == 1:
            start, i = i, i + 8
        elif wt == 2:
            ln, start = _varint(buf, i)
            i = start + ln
        elif wt == 5:
            start, i = i, i + 4
        else:
            raise WireError(f"wire type {wt}")
        if i > n:
            raise WireError("field runs past the end")
        out.append((num, wt, start, i))
    return out


def parse_wire(buf: bytes, depth: int = 0, max_fields: int = 10000) -> list[WireField]:
    """A schema-less field tree. Length-delimited values become nested trees when they parse fully
    as messages and do not look like text; otherwise they stay bytes."""
    fields = []
    for num, wt, a, z in top_fields(buf)[:max_fields]:
        if wt == 0:
            value: int | bytes | list[WireField] = _varint(buf, a)[0]
        elif wt == 1:
            value = struct.unpack_from("<Q", buf, a)[0]
        elif wt == 5:
            value = struct.unpack_from("<I", buf, a)[0]
        else:
            chunk = bytes(buf[a:z])
            value = chunk
            if depth < 16 and chunk and not _looks_like_text(chunk):
                try:
                    value = parse_wire(chunk, depth + 1, max_fields)
                except WireError:
                    value = chunk
        fields.append(WireField(num, wt, value))
    return fields


def _looks_like_text(b: bytes) -> bool:
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c in "\n\r\t" for c in s[:256])


# --- Example / SequenceExample --------------------------------------------------------------------


_example_pb2 = None
_unknown_fields = None


def _pb():
    """The generated Example module, imported on first use (protobuf costs start-up time)."""
    global _example_pb2
    if _example_pb2 is None:
        from .proto import example_pb2

        _example_pb2 = example_pb2
    return _example_pb2


def parse_clean_example(data: bytes):
    """The parsed Example when upb parses it with no unknown fields in it or its Features, else None."""
    global _unknown_fields
    if _unknown_fields is None:
        from google.protobuf.unknown_fields import UnknownFieldSet

        _unknown_fields = UnknownFieldSet
    try:
        ex = _pb().Example.FromString(data)
    except Exception:
        return None
    if ex.HasField("features") and not len(_unknown_fields(ex)) and not len(_unknown_fields(ex.features)):
        return ex
    return None


def feature_from_proto(f) -> Feature:
    which = f.WhichOneof("kind")
    if which == BYTES_LIST:
        return Feature(BYTES_LIST, list(f.bytes_list.value))
    if which == FLOAT_LIST:
        return Feature(FLOAT_LIST, np.array(f.float_list.value, dtype=np.float32))
    if which == INT64_LIST:
        return Feature(INT64_LIST, np.array(f.int64_list.value, dtype=np.int64))
    return Feature(BYTES_LIST, [])  # a Feature with no list set: TensorFlow treats it as empty


def _only(fields, allowed: set[int]) -> bool:
    return all(num in allowed and wt == 2 for num, wt, _, _ in fields)


def sniff_kind(data: bytes) -> str:
    """The payload kind without converting values: cheap enough for a table column."""
    if not data:
        return EXAMPLE  # an empty Example serialises to zero bytes
    if data[0] == 0x0A and parse_clean_example(data) is not None:
        return EXAMPLE
    try:
        fields = top_fields(data)
    except WireError:
        return BYTES
    nums = {num for num, _, _, _ in fields}
    if _only(fields, {1, 2}) and 2 in nums:
        try:
            _pb().SequenceExample.FromString(data)
            return SEQUENCE_EXAMPLE
        except Exception:
            return PROTOBUF
    if _only(fields, {1}):
        try:
            _pb().Example.FromString(data)
        except Exception:
            return PROTOBUF
        if len(fields) == 1 and _features_look_real(data[fields[0][2] : fields[0][3]]):
            return EXAMPLE
    return PROTOBUF


def _features_look_real(features: bytes) -> bool:
    """Map entries (field 1, LEN) whose keys are text: a Features message, not a lookalike."""
    try:
        entries = top_fields(features)
    except WireError:
        return False
    for num, wt, a, z in entries[:4]:
        if num != 1 or wt != 2:
            return False
        entry = features[a:z]
        try:
            inner = top_fields(entry)
        except WireError:
            return False
        for n2, w2, ka, kz in inner:
            if n2 == 1 and (w2 != 2 or not _is_utf8(entry[ka:kz])):
                return False
    return True


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def decode(data: bytes) -> Payload:
    """Full decode into plain values. Never raises on any input."""
    data = bytes(data)
    ex = parse_clean_example(data) if data[:1] == b"\x0a" else None  # the common case, parsed once
    if ex is not None or not data:
        feats = (
            {k: feature_from_proto(v) for k, v in sorted(ex.features.feature.items())}
            if ex is not None
            else {}
        )
        return Payload(EXAMPLE, features=feats, raw=data)
    kind = sniff_kind(data)
    if kind == EXAMPLE:  # an Example the fast path would not vouch for, accepted by the slower walk
        ex = _pb().Example.FromString(data)
        feats = {k: feature_from_proto(v) for k, v in sorted(ex.features.feature.items())}
        return Payload(EXAMPLE, features=feats, raw=data)
    if kind == SEQUENCE_EXAMPLE:
        se = _pb().SequenceExample.FromString(data)
        ctx = {k: feature_from_proto(v) for k, v in sorted(se.context.feature.items())}
        lists = {
            k: [feature_from_proto(f) for f in fl.feature]
            for k, fl in sorted(se.feature_lists.feature_list.items())
        }
        return Payload(SEQUENCE_EXAMPLE, features=ctx, feature_lists=lists, raw=data)
    if kind == PROTOBUF:
        try:
            return Payload(PROTOBUF, fields=parse_wire(data), raw=data)
        except WireError:
            pass
    return Payload(BYTES, raw=data)


# --- plain JSON-able values -----------------------------------------------------------------------


def json_float(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def json_bytes(b: bytes) -> str | dict:
    import base64

    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(b).decode("ascii")}


def feature_json(f: Feature) -> dict:
    if f.type == BYTES_LIST:
        values: list = [json_bytes(v) for v in f.values]
    elif f.type == FLOAT_LIST:
        values = [json_float(float(v)) for v in f.values]
    else:
        values = [int(v) for v in f.values]
    return {"type": f.type, "values": values}


def wire_json(fields: list[WireField]) -> list[dict]:
    out = []
    for f in fields:
        v = f.value
        if isinstance(v, list):
            val: object = wire_json(v)
        elif isinstance(v, bytes):
            val = json_bytes(v)
        else:
            val = v
        out.append({"field": f.number, "wire_type": f.wire_type, "value": val})
    return out


def payload_json(p: Payload) -> dict:
    d: dict = {"kind": p.kind}
    if p.kind in (EXAMPLE, SEQUENCE_EXAMPLE):
        d["features"] = {k: feature_json(f) for k, f in p.features.items()}
    if p.kind == SEQUENCE_EXAMPLE:
        d["feature_lists"] = {k: [feature_json(f) for f in fl] for k, fl in p.feature_lists.items()}
    if p.kind == PROTOBUF:
        d["fields"] = wire_json(p.fields)
    if p.kind == BYTES:
        d["bytes"] = json_bytes(p.raw)
    return d
