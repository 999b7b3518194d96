"""Record payloads as plain values: Example, SequenceExample, any other protobuf, or opaque bytes.

The kind is decided by trying, never from names: a protobuf parser accepts almost anything, so the
top-level wire fields are walked first and must be exactly what each message allows.

Decoding is bounded whatever the payload holds (see `limits`): payloads up to UPB_MAX_BYTES are
parsed by protobuf's C parser, larger ones by a walker of our own that never builds more than the
limits allow (a 40 M-entry int64 list, 500,000 keys or 5 M steps cost what their first values cost).
Each limit hit is named in `Payload.limits`.
"""

from __future__ import annotations

import math
import struct
import threading
from dataclasses import dataclass, field, replace

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import (
    HEAD_BYTES,
    MAX_DECODE_BYTES,
    MAX_FEATURES,
    MAX_LIST_EXAMPLES,
    MAX_LIST_VALUES,
    MAX_NESTING,
    MAX_STEPS,
    MAX_WIRE_FIELDS,
    ONE_AT_A_TIME_BYTES,
    PICKLE_SHOWN_BYTES,
    UPB_MAX_BYTES,
    too_large,
)
from tfrview.core.records import msgpacks
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST, Feature
from tfrview.core.records.kinds import FEATURE_KINDS, PayloadKind
from tfrview.core.tfrecord.payload_bytes import PayloadHead

# The kinds are `kinds.PayloadKind` (its one home); these names are its members, for the decoders.
EXAMPLE = PayloadKind.EXAMPLE
SEQUENCE_EXAMPLE = PayloadKind.SEQUENCE_EXAMPLE
PROTOBUF = PayloadKind.PROTOBUF
BYTES = PayloadKind.BYTES
PICKLE = PayloadKind.PICKLE
MSGPACK = PayloadKind.MSGPACK
EVENT = PayloadKind.EVENT
# TF-Ranking's ExampleListWithContext: `examples` (field 1, repeated Example), `context` (field 2,
# an Example): the context as features, each example's features in `examples`
EXAMPLE_LIST = PayloadKind.EXAMPLE_LIST
KINDS = tuple(PayloadKind)


def fixed_as_float(wire_type: int, value: int) -> float | None:
    """A fixed64 / fixed32 field read as a double / float, when that reading is plausible (a
    finite value of a sensible size, from bits that are not a small integer): schema-less
    protobufs often hold times and measurements this way (a wall time reads 1.7e9, not 4.7e18)."""
    if wire_type == 1:
        if value < 1 << 32:
            return None
        (f,) = struct.unpack("<d", struct.pack("<Q", value))
    elif wire_type == 5:
        if value < 1 << 16:
            return None
        (f,) = struct.unpack("<f", struct.pack("<I", value))
    else:
        return None
    return f if math.isfinite(f) and (f == 0 or 1e-6 <= abs(f) <= 1e15) else None


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
    raw: bytes = b""  # the payload, or only its first bytes when it was too large to read whole
    limits: tuple[str, ...] = ()  # each limit this decode hit, in words: nothing is cut silently
    full_size: int | None = None  # the payload's size when `raw` holds only its head
    examples: list[dict[str, Feature]] = field(default_factory=list)  # EXAMPLE_LIST: each example's features
    text: str = ""  # PICKLE: its `pickletools` disassembly (never unpickled)
    value: object = None  # MSGPACK: the decoded value (`msgpacks.unpack`: maps dicts, arrays tuples)

    @property
    def size(self) -> int:
        return len(self.raw) if self.full_size is None else self.full_size


class WireError(TfrviewError, ValueError):
    """Bytes that are not a well-formed protobuf message (`schema.decode_with` lets it out): in the
    one hierarchy, so a caller that lets it through says it in one line like any other; a ValueError
    too, for callers that catch that."""


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


def iter_fields(buf, start: int = 0, end: int | None = None):
    """(field number, wire type, value start, value end) of each field in buf[start:end]; WireError
    if those bytes are not a well-formed message. A generator: callers stop when they have enough."""
    i = start
    n = len(buf) if end is None else end
    while i < n:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise WireError("field number 0")
        if wt == 0:
            a = i
            _, i = _varint(buf, i)
        elif wt == 1:
            a, i = i, i + 8
        elif wt == 2:
            ln, a = _varint(buf, i)
            i = a + ln
        elif wt == 5:
            a, i = i, i + 4
        else:
            raise WireError(f"wire type {wt}")
        if i > n:
            raise WireError("field runs past the end")
        yield num, wt, a, i


def top_fields(buf: bytes, limit: int | None = None) -> list[tuple[int, int, int, int]]:
    """The top-level fields (at most `limit` of them); WireError if buf is not a well-formed message."""
    out = []
    for f in iter_fields(buf):
        out.append(f)
        if limit is not None and len(out) >= limit:
            break
    return out


def parse_wire(
    buf: bytes, depth: int = 0, max_fields: int = MAX_WIRE_FIELDS, notes: list[str] | None = None
) -> list[WireField]:
    """A schema-less field tree. Length-delimited values become nested trees when they parse fully
    as messages and do not look like text; otherwise they stay bytes. At most `max_fields` fields
    in all and MAX_NESTING levels; `notes` receives a line for each limit hit."""
    budget = [max_fields]
    notes = notes if notes is not None else []
    out = _parse_wire(memoryview(buf), depth, budget, notes)
    if budget[0] < 0:
        notes.append(f"more than {max_fields:,} protobuf fields: the first {max_fields:,} are shown")
    return out


def _parse_wire(buf: memoryview, depth: int, budget: list[int], notes: list[str]) -> list[WireField]:
    # the message must parse (as far as the field budget reaches) before it is trusted as one
    spans = []
    for f in iter_fields(buf):
        spans.append(f)
        if len(spans) > budget[0]:
            break
    fields = []
    for num, wt, a, z in spans:
        if budget[0] <= 0:
            budget[0] = -1
            break
        budget[0] -= 1
        if wt == 0:
            value: int | bytes | list[WireField] = _varint(buf, a)[0]
        elif wt == 1:
            value = struct.unpack_from("<Q", buf, a)[0]
        elif wt == 5:
            value = struct.unpack_from("<I", buf, a)[0]
        else:
            chunk = buf[a:z]
            value = bytes(chunk[:HEAD_BYTES]) if z - a > MAX_DECODE_BYTES else bytes(chunk)
            if chunk and not _looks_like_text(chunk[:1024]):
                if depth + 1 >= MAX_NESTING:
                    if not any(n.startswith("nesting") for n in notes):
                        notes.append(f"nesting deeper than {MAX_NESTING} levels is shown as bytes")
                else:
                    saved = budget[0]
                    try:
                        value = _parse_wire(chunk, depth + 1, budget, notes)
                    except WireError:
                        budget[0] = saved
        fields.append(WireField(num, wt, value))
    return fields


def _looks_like_text(b) -> bool:
    try:
        s = bytes(b).decode("utf-8")
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
        from tfrview.core.records.proto import example_pb2  # heavy: protobuf on first use only

        _example_pb2 = example_pb2
    return _example_pb2


def parse_clean_example(data: bytes, check_keys: bool = True):
    """The parsed Example when upb parses it with no unknown fields in it or its Features, else None.
    `check_keys=False`: the caller looks for a key that betrays an Example read as Features itself
    (once a layout of keys, not once a record)."""
    global _unknown_fields
    if _unknown_fields is None:
        from google.protobuf.unknown_fields import UnknownFieldSet  # heavy: protobuf on first use only

        _unknown_fields = UnknownFieldSet
    try:
        ex = _pb().Example.FromString(data)
    except Exception:  # upb refuses it (any error type): not an Example, the caller reads it otherwise
        return None
    if ex.HasField("features") and not len(_unknown_fields(ex)) and not len(_unknown_fields(ex.features)):
        if check_keys and any(k[:1] == "\n" for k in ex.features.feature):  # an Example read as Features
            return None
        return ex
    return None


def _cut(
    n: int, limit: int, what: str, notes: list[str], unit: str = "values", name: str = "MAX_LIST_VALUES"
) -> int:
    """How many of n items to decode under `limit` (limits.`name`), noting it when the limit bites."""
    if n <= limit:
        return n
    notes.append(cut_note(what, unit, n, limit, name))
    return limit


def cut_note(what: str, unit: str, n: int | None, limit: int, name: str) -> str:
    """A list, key or step limit hit, in limits.too_large's words; n None: more than the limit, not counted."""
    many = f"over {limit:,} {unit}" if n is None else f"{n:,} {unit}, over the limit of {limit:,}"
    return f"{what}: {many}; the first {limit:,} are decoded (limits.{name})"


_FEW = 64  # values of a list read one by one (fromiter); longer lists np.array reads faster


def feature_from_proto(f, key: str = "", notes: list[str] | None = None) -> Feature:
    notes = notes if notes is not None else []
    which = f.WhichOneof("kind")
    if which == BYTES_LIST:
        vals = f.bytes_list.value
        n = len(vals)
        k = _cut(n, MAX_LIST_VALUES, key, notes)
        return Feature(BYTES_LIST, list(vals[:k]) if k < n else list(vals), n if k < n else None)
    if which in (FLOAT_LIST, INT64_LIST):
        vals = getattr(f, which).value
        n = len(vals)
        k = _cut(n, MAX_LIST_VALUES, key, notes)
        dtype = np.float32 if which == FLOAT_LIST else np.int64
        if n <= _FEW:  # np.array walks a protobuf container slowly: 7 us for 10 values, fromiter 1.6 us
            return Feature(which, np.fromiter(vals, dtype, n), None)
        return Feature(which, np.array(vals[:k] if k < n else vals, dtype=dtype), n if k < n else None)
    return Feature(BYTES_LIST, [])  # a Feature with no list set: TensorFlow treats it as empty


def _features_from_proto(items, what: str, notes: list[str]) -> dict[str, Feature]:
    items = sorted(items)
    k = _cut(len(items), MAX_FEATURES, what, notes, "keys", "MAX_FEATURES")
    return {key: feature_from_proto(v, key, notes) for key, v in items[:k]}


def _only(fields, allowed: set[int]) -> bool:
    return all(num in allowed and wt == 2 for num, wt, _, _ in fields)


def looks_like_pickle(data: bytes) -> bool:
    """A pickle of protocol 2 to 5: its PROTO opcode first and its STOP opcode last (a protobuf
    whose first byte is 0x80 would need a field number over 15 and to end in '.')."""
    return len(data) >= 3 and data[0] == 0x80 and 2 <= data[1] <= 5 and data[-1] == 0x2E


def pickle_text(data: bytes) -> str:
    """A pickle as `pickletools` disassembly of its first limits.PICKLE_SHOWN_BYTES: reading the
    opcodes runs nothing (pickletools never imports or calls what the pickle names)."""
    import io
    import pickletools

    head = bytes(data[:PICKLE_SHOWN_BYTES])
    out = io.StringIO()
    try:
        pickletools.dis(head, out=out)
    except Exception as exc:  # a cut copy or a malformed pickle: what was read so far, and why it stopped
        out.write(f"(disassembly stopped: {exc})\n")
    if len(data) > len(head):
        out.write(
            too_large("the pickle", len(data), PICKLE_SHOWN_BYTES, name="PICKLE_SHOWN_BYTES")
            + "; its first bytes are shown\n"
        )
    return out.getvalue()


def sniff_kind(data: bytes) -> str:
    """The payload kind without converting values: cheap enough for a table column."""
    if isinstance(data, PayloadHead):
        return BYTES  # too large to decode: its head alone says nothing reliable
    if not data:
        return EXAMPLE  # an empty Example serialises to zero bytes
    if looks_like_pickle(data):
        return PICKLE
    # A map's or an array's first byte is never a protobuf's field 1 or 2 (Example, SequenceExample,
    # event, example list): only a generic protobuf or bytes could be lost to it, and a payload that
    # is wholly one msgpack container is more specific than a field-16-or-above lookalike.
    if msgpacks.could_be(data) and msgpacks.unpack(data) is not None:
        return MSGPACK
    if len(data) > UPB_MAX_BYTES:
        return _big_kind(data)
    if data[0] == 0x0A and parse_clean_example(data) is not None:
        return EXAMPLE
    try:
        fields = top_fields(data)
    except WireError:
        return BYTES
    nums = {num for num, _, _, _ in fields}
    from tfrview.core.records.events import looks_like_event  # start-up: kept off the CLI's path

    if looks_like_event(data, fields):
        return EVENT
    if _only(fields, {1, 2}) and _is_example_list(data, fields):
        return EXAMPLE_LIST
    if _only(fields, {1, 2}) and 2 in nums:
        try:
            _pb().SequenceExample.FromString(data)
            return SEQUENCE_EXAMPLE
        except Exception:  # upb refuses it: some other protobuf, which is the answer
            return PROTOBUF
    if _only(fields, {1}):
        try:
            _pb().Example.FromString(data)
        except Exception:  # upb refuses it: some other protobuf, which is the answer
            return PROTOBUF
        if len(fields) == 1 and _features_look_real(data[fields[0][2] : fields[0][3]]):
            return EXAMPLE
    return PROTOBUF


def _big_kind(data: bytes) -> str:
    """The kind of a payload over UPB_MAX_BYTES, from its structure alone (no full parse)."""
    try:
        fields = top_fields(data, limit=64)
    except WireError:
        return BYTES
    nums = {num for num, _, _, _ in fields}
    from tfrview.core.records.events import looks_like_event  # start-up: kept off the CLI's path

    if len(fields) < 64 and looks_like_event(data, fields):
        return EVENT
    if _only(fields, {1, 2}) and _is_example_list(data, fields):
        return EXAMPLE_LIST
    if len(fields) < 64 and _only(fields, {1, 2}) and 2 in nums:
        return SEQUENCE_EXAMPLE
    if len(fields) == 1 and _only(fields, {1}) and _features_look_real(data[fields[0][2] : fields[0][3]]):
        return EXAMPLE
    return PROTOBUF


def _is_example_list(data: bytes, fields) -> bool:
    """An ExampleListWithContext, not a SequenceExample (both are fields 1 and 2 of LEN): each
    non-empty value is an Example (field 1 holding Features whose keys are text), where a
    SequenceExample's values are Features and FeatureLists (map entries: fields 1 and 2)."""
    seen = False
    view = memoryview(data)  # a 100 MB SequenceExample's value is looked at, not copied
    for _, _, a, z in fields[:64]:
        if a == z:
            continue
        if not _looks_like_example(view[a:z]):
            return False
        seen = True
    return seen


def _looks_like_example(b) -> bool:
    """Field 1 of LEN, each holding Features whose keys are text: an Example's bytes."""
    try:
        inner = top_fields(b, limit=4)
    except WireError:
        return False
    return bool(inner) and all(n == 1 and w == 2 and _features_look_real(b[a:z]) for n, w, a, z in inner)


def _features_look_real(features: bytes) -> bool:
    """Map entries (field 1, LEN) whose keys are text: a Features message, not a lookalike."""
    try:
        entries = top_fields(features, limit=4)
    except WireError:
        return False
    for num, wt, a, z in entries:
        if num != 1 or wt != 2:
            return False
        entry = features[a:z]
        try:
            inner = top_fields(entry, limit=8)
        except WireError:
            return False
        for n2, w2, ka, kz in inner:
            if n2 == 1 and (w2 != 2 or not _is_utf8(entry[ka:kz])):
                return False
    return True


def _is_utf8(b: bytes) -> bool:
    try:
        bytes(b).decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# --- the bounded walker for large payloads ------------------------------------------------------------

_LIST_TYPES = {1: BYTES_LIST, 2: FLOAT_LIST, 3: INT64_LIST}
_PIECE = 1 << 20


def _packed_varints(buf: memoryview, want: int) -> tuple[np.ndarray, int]:
    """The first `want` varints of a packed field as int64, and how many it holds; vectorised, in
    pieces, so memory follows `want`, not the field's size."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    total = 0
    ends: list[np.ndarray] = []
    have = 0
    for i in range(0, len(arr), _PIECE):
        term = arr[i : i + _PIECE] < 0x80
        total += int(np.count_nonzero(term))
        if have < want:
            e = np.flatnonzero(term)[: want - have] + i
            ends.append(e)
            have += len(e)
    if len(arr) and arr[-1] >= 0x80:
        raise WireError("packed varint runs past the end")
    if not have:
        return np.empty(0, dtype=np.int64), total
    e = np.concatenate(ends)
    starts = np.empty_like(e)
    starts[0] = 0
    starts[1:] = e[:-1] + 1
    lens = e - starts + 1
    if int(lens.max()) > 10:
        raise WireError("varint too long")
    value = np.zeros(len(e), dtype=np.uint64)
    for k in range(10):
        m = lens > k
        if not m.any():
            break
        part = (arr[starts[m] + k] & 0x7F).astype(np.uint64)
        value[m] |= part << np.uint64(7 * k)
    return value.view(np.int64), total


def _walk_feature(buf: memoryview, a: int, z: int, key: str, notes: list[str]) -> Feature:
    kind, span = None, None
    for num, wt, la, lz in iter_fields(buf, a, z):
        if num in _LIST_TYPES and wt == 2:
            kind, span = _LIST_TYPES[num], (la, lz)
    if kind is None:
        return Feature(BYTES_LIST, [])
    la, lz = span
    if kind == BYTES_LIST:
        vals: list[bytes] = []
        for num, wt, va, vz in iter_fields(buf, la, lz):
            if num != 1:
                continue
            if wt != 2:
                raise WireError("bytes value of the wrong wire type")
            if len(vals) >= MAX_LIST_VALUES:
                notes.append(cut_note(key, "values", None, MAX_LIST_VALUES, "MAX_LIST_VALUES"))
                return Feature(BYTES_LIST, vals, -1)
            vals.append(bytes(buf[va:vz]))
        return Feature(BYTES_LIST, vals)
    parts: list[np.ndarray] = []
    have = total = 0
    singles: list = []
    dtype = np.float32 if kind == FLOAT_LIST else np.int64
    for num, wt, va, vz in iter_fields(buf, la, lz):
        if num != 1:
            continue
        want = max(MAX_LIST_VALUES - have, 0)
        if wt == 2:  # packed
            if kind == FLOAT_LIST:
                if (vz - va) % 4:
                    raise WireError("packed floats not a multiple of 4 bytes")
                n = (vz - va) // 4
                parts.append(np.frombuffer(buf[va : va + 4 * min(n, want)], dtype="<f4").astype(np.float32))
            else:
                got, n = _packed_varints(buf[va:vz], want)
                parts.append(got)
            total += n
            have += min(n, want)
        elif (wt == 5 and kind == FLOAT_LIST) or (wt == 0 and kind == INT64_LIST):
            total += 1
            if have < MAX_LIST_VALUES:
                if wt == 5:
                    singles.append(struct.unpack_from("<f", buf, va)[0])
                else:
                    v = _varint(buf, va)[0]
                    singles.append(v - (1 << 64) if v >= 1 << 63 else v)
                have += 1
                if len(singles) >= 65536:
                    parts.append(np.array(singles, dtype=dtype))
                    singles = []
        else:
            raise WireError("list value of the wrong wire type")
    if singles:
        parts.append(np.array(singles, dtype=dtype))
    values = np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype=dtype)
    if total > len(values):
        notes.append(cut_note(key, "values", total, MAX_LIST_VALUES, "MAX_LIST_VALUES"))
        return Feature(kind, values, total)
    return Feature(kind, values)


def _map_entry(buf: memoryview, a: int, z: int) -> tuple[str, int | None, int]:
    """(key, value start or None, value end) of a map<string, Message> entry."""
    key = b""
    va, vz = None, 0
    for num, wt, fa, fz in iter_fields(buf, a, z):
        if num == 1 and wt == 2:
            key = bytes(buf[fa:fz])
        elif num == 2 and wt == 2:
            va, vz = fa, fz
    try:
        return key.decode("utf-8"), va, vz
    except UnicodeDecodeError:
        raise WireError("map key is not UTF-8") from None


def _walk_features(buf: memoryview, a: int, z: int, what: str, notes: list[str], out: dict) -> None:
    for num, wt, ea, ez in iter_fields(buf, a, z):
        if num != 1 or wt != 2:
            continue
        key, va, vz = _map_entry(buf, ea, ez)
        if key not in out and len(out) >= MAX_FEATURES:
            notes.append(cut_note(what, "keys", None, MAX_FEATURES, "MAX_FEATURES"))
            return
        out[key] = _walk_feature(buf, va, vz, key, notes) if va is not None else Feature(BYTES_LIST, [])


def _walk_example(buf: memoryview, notes: list[str]) -> dict[str, Feature]:
    feats: dict[str, Feature] = {}
    for num, wt, a, z in iter_fields(buf):
        if num == 1 and wt == 2:
            _walk_features(buf, a, z, "features", notes, feats)
    return dict(sorted(feats.items()))


def _walk_sequence_example(buf: memoryview, notes: list[str]) -> tuple[dict, dict]:
    ctx: dict[str, Feature] = {}
    lists: dict[str, list[Feature]] = {}
    for num, wt, a, z in iter_fields(buf):
        if num == 1 and wt == 2:
            _walk_features(buf, a, z, "context", notes, ctx)
        elif num == 2 and wt == 2:
            for n2, w2, ea, ez in iter_fields(buf, a, z):
                if n2 != 1 or w2 != 2:
                    continue
                key, va, vz = _map_entry(buf, ea, ez)
                if key not in lists and len(lists) >= MAX_FEATURES:
                    notes.append(cut_note("feature_lists", "keys", None, MAX_FEATURES, "MAX_FEATURES"))
                    break
                steps: list[Feature] = []
                for n3, w3, sa, sz in iter_fields(buf, va, vz) if va is not None else ():
                    if n3 != 1 or w3 != 2:
                        continue
                    if len(steps) >= MAX_STEPS:
                        notes.append(cut_note(key, "steps", None, MAX_STEPS, "MAX_STEPS"))
                        break
                    steps.append(_walk_feature(buf, sa, sz, f"{key}[{len(steps)}]", notes))
                lists[key] = steps
    return dict(sorted(ctx.items())), dict(sorted(lists.items()))


# --- decode -------------------------------------------------------------------------------------------


_big_decodes = threading.Lock()


def decode(data: bytes) -> Payload:
    """Full decode into plain values, within the limits. Never raises on any input."""
    if isinstance(data, PayloadHead):
        note = (
            too_large("the record", data.full_size, MAX_DECODE_BYTES, name="MAX_DECODE_BYTES")
            + f"; its first {len(data):,} bytes are shown"
        )
        return Payload(BYTES, raw=bytes(data), limits=(note,), full_size=data.full_size)
    data = bytes(data)
    notes: list[str] = []
    if looks_like_pickle(data):
        return Payload(PICKLE, raw=data, text=pickle_text(data))
    if msgpacks.could_be(data):
        value = msgpacks.unpack(data)
        if value is not None:
            return Payload(MSGPACK, raw=data, value=value, limits=msgpacks.cut_notes(value))
    try:
        if len(data) > ONE_AT_A_TIME_BYTES:  # the row summary, the tree and a sample may want it at once
            with _big_decodes:
                p = _decode_big(data, notes)
        else:
            p = _decode_big(data, notes) if len(data) > UPB_MAX_BYTES else _decode_small(data, notes)
    except RecursionError:
        notes.append("nested too deeply to decode")
        p = Payload(BYTES, raw=data)
    if notes:
        p = replace(p, limits=tuple(dict.fromkeys(notes))[:20])
    return p


def _decode_small(data: bytes, notes: list[str]) -> Payload:
    ex = parse_clean_example(data) if data[:1] == b"\x0a" else None  # the common case, parsed once
    if ex is not None or not data:
        feats = _features_from_proto(ex.features.feature.items(), "features", notes) if ex is not None else {}
        return Payload(EXAMPLE, features=feats, raw=data)
    kind = sniff_kind(data)
    if kind == EXAMPLE:  # an Example the fast path would not vouch for, accepted by the slower walk
        ex = _pb().Example.FromString(data)
        return Payload(
            EXAMPLE, features=_features_from_proto(ex.features.feature.items(), "features", notes), raw=data
        )
    if kind == SEQUENCE_EXAMPLE:
        se = _pb().SequenceExample.FromString(data)
        ctx = _features_from_proto(se.context.feature.items(), "context", notes)
        items = sorted(se.feature_lists.feature_list.items())
        lists = {}
        for key, fl in items[
            : _cut(len(items), MAX_FEATURES, "feature_lists", notes, "keys", "MAX_FEATURES")
        ]:
            steps = fl.feature
            k = _cut(len(steps), MAX_STEPS, key, notes, "steps", "MAX_STEPS")
            lists[key] = [feature_from_proto(f, f"{key}[{i}]", notes) for i, f in enumerate(steps[:k])]
        return Payload(SEQUENCE_EXAMPLE, features=ctx, feature_lists=lists, raw=data)
    if kind == EXAMPLE_LIST:
        return _decode_example_list(data, notes)
    if kind == EVENT:
        from tfrview.core.records.events import event_features  # start-up: kept off the CLI's path

        feats = event_features(data, notes)
        if feats:
            return Payload(EVENT, features=feats, raw=data)
        kind = PROTOBUF
    if kind == PROTOBUF:
        try:
            return Payload(PROTOBUF, fields=parse_wire(data, notes=notes), raw=data)
        except WireError:  # not a protobuf after all: shown as bytes, which is the answer
            pass
    return Payload(BYTES, raw=data)


def _decode_big(data: bytes, notes: list[str]) -> Payload:
    kind = _big_kind(data)
    buf = memoryview(data)
    if kind == EVENT:  # an image summary of a few MB: protobuf parses it in one go
        from tfrview.core.records.events import event_features  # start-up: kept off the CLI's path

        feats = event_features(data, notes)
        if feats:
            return Payload(EVENT, features=feats, raw=data)
    try:
        if kind == EXAMPLE_LIST:
            return _decode_example_list(data, notes)
        if kind == EXAMPLE:
            return Payload(EXAMPLE, features=_walk_example(buf, notes), raw=data)
        if kind == SEQUENCE_EXAMPLE:
            ctx, lists = _walk_sequence_example(buf, notes)
            return Payload(SEQUENCE_EXAMPLE, features=ctx, feature_lists=lists, raw=data)
    except WireError:
        notes.clear()
    try:
        return Payload(PROTOBUF, fields=parse_wire(data, notes=notes), raw=data)
    except WireError:
        notes.clear()
        return Payload(BYTES, raw=data)


def _decode_example_list(data: bytes, notes: list[str]) -> Payload:
    """An ExampleListWithContext: each sub-message read as the Example it is (within the Example
    limits), at most MAX_LIST_EXAMPLES examples."""
    context: dict[str, Feature] = {}
    examples: list[dict[str, Feature]] = []
    n = 0
    for num, _, a, z in iter_fields(data):
        if num == 2:
            context = _example_features(data[a:z], "context", notes)
            continue
        n += 1
        if len(examples) < MAX_LIST_EXAMPLES:
            examples.append(_example_features(data[a:z], f"examples[{len(examples)}]", notes))
    if n > MAX_LIST_EXAMPLES:
        notes.append(cut_note("examples", "examples", n, MAX_LIST_EXAMPLES, "MAX_LIST_EXAMPLES"))
    return Payload(EXAMPLE_LIST, features=context, raw=data, examples=examples)


def _example_features(b: bytes, what: str, notes: list[str]) -> dict[str, Feature]:
    if len(b) > UPB_MAX_BYTES:
        return _walk_example(memoryview(b), notes)
    ex = _pb().Example.FromString(b)
    return _features_from_proto(ex.features.feature.items(), what, notes)


# --- plain JSON-able values -----------------------------------------------------------------------


def json_float(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 13))  # what JSON writes as \u00XX: 6 bytes each


def json_bytes(b: bytes) -> str | dict:
    """Text when the bytes are UTF-8 text, else base64. Bytes with a NUL or more than one control
    character in eight are not text, however they decode: JSON would write each as six characters
    (22 MB of zeros became 135 MB of JSON and a 420 MB peak in `dump --json`)."""
    import base64  # start-up: kept off the CLI's path

    if b"\x00" not in b and len(b.translate(None, _CONTROL)) * 8 >= len(b) * 7:
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:  # not text: base64 below
            pass
    return {"base64": base64.b64encode(b).decode("ascii")}


def feature_json(f: Feature) -> dict:
    if f.type == BYTES_LIST:
        values: list = [json_bytes(v) for v in f.values]
    elif f.type == FLOAT_LIST:
        values = [json_float(float(v)) for v in f.values]
    else:
        values = [int(v) for v in f.values]
    d = {"type": f.type, "values": values}
    if f.total is not None:  # a limit decoded only these; -1: more, not counted
        d["total"] = f.total
    return d


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
    if p.full_size is not None:
        d["size"] = p.full_size
        d["truncated"] = True  # only the head was read: see "limits"
    if p.limits:
        d["limits"] = list(p.limits)
    if p.kind in FEATURE_KINDS:  # an example list's context; an event's wall time, step and tags
        d["features"] = {k: feature_json(f) for k, f in p.features.items()}
    if p.kind == EXAMPLE_LIST:
        d["examples"] = [{k: feature_json(f) for k, f in ex.items()} for ex in p.examples]
    if p.kind == SEQUENCE_EXAMPLE:
        d["feature_lists"] = {k: [feature_json(f) for f in fl] for k, fl in p.feature_lists.items()}
    if p.kind == PROTOBUF:
        d["fields"] = wire_json(p.fields)
    if p.kind == BYTES:
        d["bytes"] = json_bytes(p.raw)
    if p.kind == PICKLE:
        d["pickle"] = p.text.splitlines()
    if p.kind == MSGPACK:
        d["msgpack"] = msgpacks.to_json(p.value)[0]
    return d
