"""A schema for custom payloads: records that are some other protobuf (Waymo `Frame`, Magenta
`NoteSequence`, a company's own messages) shown with field names, decoded by protobuf's own
descriptor pool from a compiled descriptor set (`protoc --include_imports --descriptor_set_out`)
or from a `.proto` file when protoc is at hand (grpcio-tools).

The schema file is read as data files are (a regular file, opened without blocking, at most
MAX_SCHEMA_BYTES), and a record read through it obeys the list limit an Example does: a repeated
field past MAX_LIST_VALUES is cut in the bytes before protobuf parses them (a 40 M-value packed
list would cost gigabytes as protobuf's array and then as Python numbers), and the cut is a note.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import MAX_LIST_VALUES, MAX_NESTING, MAX_SCHEMA_BYTES, too_large
from tfrview.core.records.payload import cut_note, iter_fields
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.source import open_regular


@dataclass(frozen=True)
class MessageSchema:
    name: str  # the message's full name, e.g. waymo.open_dataset.Frame
    cls: type  # its generated message class


def message_names(path: str | os.PathLike) -> list[str]:
    """Every message a descriptor set (or .proto file) defines, nested ones included."""
    fds = _descriptor_set(Path(path))
    out: list[str] = []

    def walk(prefix: str, msgs) -> None:
        for m in msgs:
            name = f"{prefix}.{m.name}" if prefix else m.name
            out.append(name)
            walk(name, m.nested_type)

    for f in fds.file:
        walk(f.package, f.message_type)
    return out


def load_schema(path: str | os.PathLike, message: str | None = None) -> MessageSchema:
    """The message class named `message` (or the file's only top-level message) from a descriptor
    set or a .proto file. Raises TfrviewError with a one-line reason."""
    from google.protobuf import descriptor_pool, message_factory  # heavy: protobuf on first use only

    p = Path(path)
    fds = _descriptor_set(p)
    pool = descriptor_pool.DescriptorPool()
    try:
        for f in fds.file:
            pool.Add(f)
    except Exception as exc:  # protobuf raises TypeError/KeyError for an inconsistent set
        raise TfrviewError(
            f"{printable(str(p))}: the schema does not load ({printable(str(exc))[:200]})"
        ) from None
    names = message_names(p)
    if message is None:
        tops = [f"{f.package}.{m.name}" if f.package else m.name for f in fds.file for m in f.message_type]
        if len(tops) != 1:
            raise TfrviewError(
                f"{printable(str(p))}: defines {len(tops)} messages; name one with --message "
                f"(e.g. {', '.join(tops[:3])})"
            )
        message = tops[0]
    try:
        desc = pool.FindMessageTypeByName(message)
    except KeyError:
        near = [n for n in names if n.endswith("." + message) or n == message]
        if len(near) == 1:
            desc = pool.FindMessageTypeByName(near[0])
        else:
            raise TfrviewError(
                f"{printable(str(p))}: no message {printable(message)!r} "
                f"(it has {', '.join(names[:5])}{', …' if len(names) > 5 else ''})"
            ) from None
    return MessageSchema(desc.full_name, message_factory.GetMessageClass(desc))


def decode_with(data: bytes, schema: MessageSchema, notes: list[str] | None = None) -> dict | None:
    """The record as the schema's message, as a dict with field names; None when the bytes are not
    that message. Numbers stay numbers (protobuf's JSON mapping would write 64-bit integers as
    text), bytes are base64 as that mapping writes them, enums are their names. A repeated field
    keeps its first MAX_LIST_VALUES values; `notes` receives a line for each one cut."""
    notes = notes if notes is not None else []
    try:
        bounded = _bounded(memoryview(bytes(data)), schema.cls.DESCRIPTOR, "", 0, notes)
        msg = schema.cls.FromString(bytes(bounded))
    except Exception:  # WireError, DecodeError, or a parser error for bytes that are not this message
        notes.clear()
        return None
    return message_dict(msg, notes)


def message_dict(msg, notes: list[str] | None = None, path: str = "") -> dict:
    """A parsed message as a dict; lists past MAX_LIST_VALUES (only a payload of under a few MB can
    still hold one: `decode_with` cut larger ones) keep their first values, with a note."""
    notes = notes if notes is not None else []
    out = {}
    for field, value in msg.ListFields():
        mt = field.message_type
        where = path + field.name
        if field.is_repeated and len(value) > MAX_LIST_VALUES:
            notes.append(cut_note(where, "values", len(value), MAX_LIST_VALUES, "MAX_LIST_VALUES"))
        if mt is not None and mt.GetOptions().map_entry:
            vf = mt.fields_by_name["value"]
            items = list(value.items())[:MAX_LIST_VALUES] if len(value) > MAX_LIST_VALUES else value.items()
            out[field.name] = {str(k): _value(vf, v, notes, where) for k, v in items}
        elif field.is_repeated and field.type in _PLAIN:
            out[field.name] = value[:MAX_LIST_VALUES]  # a list of Python numbers already: no call a value
        elif field.is_repeated:
            out[field.name] = [_value(field, v, notes, where) for v in value[:MAX_LIST_VALUES]]
        else:
            out[field.name] = _value(field, value, notes, where)
    return out


# Field types whose values are plain Python numbers (all but enums, strings, bytes, messages, groups).
_PLAIN = frozenset((1, 2, 3, 4, 5, 6, 7, 8, 13, 15, 16, 17, 18))
# Field types protobuf may pack, by how wide each packed value is (0: a varint).
_PACKED_WIDTH = {1: 8, 2: 4, 3: 0, 4: 0, 5: 0, 6: 8, 7: 4, 8: 0, 13: 0, 14: 0, 15: 4, 16: 8, 17: 0, 18: 0}
_PIECE = 1 << 20


def _packed_span(b: memoryview, width: int, want: int) -> tuple[int, int]:
    """(values in a packed run, bytes holding its first `want`), counted in pieces so memory stays
    a piece's whatever the run's length."""
    if width:
        n = len(b) // width
        return n, width * min(n, want)
    arr = np.frombuffer(b, dtype=np.uint8)
    total, cut = 0, 0 if want <= 0 else None
    for i in range(0, len(arr), _PIECE):
        term = arr[i : i + _PIECE] < 0x80
        c = int(np.count_nonzero(term))
        if cut is None and total + c >= want:
            cut = i + int(np.flatnonzero(term)[want - total - 1]) + 1
        total += c
    return total, len(b) if cut is None else cut


def _field_head(num: int, length: int) -> bytes:
    """A length-delimited field's tag and length, as the wire format writes them."""
    out = bytearray()
    for v in ((num << 3) | 2, length):
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
    return bytes(out)


def _bounded(buf: memoryview, desc, path: str, depth: int, notes: list[str]):
    """buf with every repeated field of `desc` (nested messages too) cut to MAX_LIST_VALUES values;
    buf itself when nothing was cut. A value takes a byte at least, so a message of fewer bytes
    than the limit is never walked: only big records cost a walk of their fields. Raises
    WireError on bytes that are not a message (groups included: protobuf parses those only in
    records under the limit)."""
    if len(buf) <= MAX_LIST_VALUES or depth >= MAX_NESTING:
        return buf
    pieces: list = []
    have: dict[int, int] = {}
    total: dict[int, int] = {}
    changed = False
    prev = 0
    for num, wt, a, z in iter_fields(buf):
        start, prev = prev, z
        f = desc.fields_by_number.get(num)
        piece = buf[start:z]
        if f is not None and f.is_repeated:
            got = have.get(num, 0)
            width = _PACKED_WIDTH.get(f.type)
            if wt == 2 and width is not None:  # a packed run: count its values, keep what fits
                n, keep = _packed_span(buf[a:z], width, MAX_LIST_VALUES - got)
                if got + n > MAX_LIST_VALUES:
                    piece = _field_head(num, keep) + bytes(buf[a : a + keep]) if keep else None
                    changed = True
                total[num] = total.get(num, 0) + n
                have[num] = min(got + n, MAX_LIST_VALUES)
            else:
                total[num] = total.get(num, 0) + 1
                if got >= MAX_LIST_VALUES:
                    piece, changed = None, True
                else:
                    have[num] = got + 1
        if (
            piece is not None
            and f is not None
            and f.message_type is not None
            and wt == 2
            and z - a > MAX_LIST_VALUES
        ):
            where = f"{path}{f.name}[{have.get(num, 1) - 1}]." if f.is_repeated else f"{path}{f.name}."
            sub = buf[a:z]
            inner = _bounded(sub, f.message_type, where, depth + 1, notes)
            if inner is not sub:
                piece, changed = _field_head(num, len(inner)) + bytes(inner), True
        if piece is not None:
            pieces.append(piece)
    for num, n in total.items():
        if n > MAX_LIST_VALUES:
            notes.append(
                cut_note(
                    path + desc.fields_by_number[num].name, "values", n, MAX_LIST_VALUES, "MAX_LIST_VALUES"
                )
            )
    return b"".join(pieces) if changed else buf


def _value(field, v, notes: list[str] | None = None, path: str = ""):
    from google.protobuf.descriptor import FieldDescriptor as F  # heavy: protobuf on first use only

    if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        return message_dict(v, notes, path + ".")
    if field.type == F.TYPE_BYTES:
        import base64  # standard library, used here only

        return base64.b64encode(v).decode("ascii")
    if field.type == F.TYPE_ENUM:
        named = field.enum_type.values_by_number.get(v)
        return named.name if named is not None else v
    return v


def summary_line(named: dict, type_name: str, n: int = 4) -> str:
    """'Frame: name='frame 1', timestamp_micros=1700000000000001, cameras=[1]' for the table."""
    parts = []
    for k, v in list(named.items())[:n]:
        if isinstance(v, dict):
            shown = "{…}"
        elif isinstance(v, list):
            shown = f"[{len(v)}]"
        elif isinstance(v, str):
            shown = repr(v if len(v) <= 40 else v[:37] + "…")
        else:
            shown = f"{v:.6g}" if isinstance(v, float) else str(v)
        parts.append(f"{k}={shown}")
    more = f", +{len(named) - n} more" if len(named) > n else ""
    return f"{type_name.rsplit('.', 1)[-1]}: " + ", ".join(parts) + more


def _descriptor_set(p: Path):
    """The file's FileDescriptorSet. It is opened as data files are (tfrecord.source.open_regular):
    a FIFO, device or directory is refused at once, without blocking or reading (/dev/zero), and
    so is a file over MAX_SCHEMA_BYTES."""
    from google.protobuf import descriptor_pb2  # heavy: protobuf on first use only

    fd, st = open_regular(p)
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > MAX_SCHEMA_BYTES:
            raise TfrviewError(
                f"{printable(str(p))}: "
                + too_large("the schema", st.st_size, MAX_SCHEMA_BYTES, name="MAX_SCHEMA_BYTES")
            )
        if p.suffix == ".proto":
            return _compile(p)
        try:
            data = fh.read(MAX_SCHEMA_BYTES + 1)
        except OSError as exc:
            raise TfrviewError(f"{printable(str(p))}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_SCHEMA_BYTES:  # it grew since its size was read
        raise TfrviewError(
            f"{printable(str(p))}: "
            + too_large("the schema", len(data), MAX_SCHEMA_BYTES, name="MAX_SCHEMA_BYTES")
        )
    try:
        fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    except Exception:
        fds = None
    if fds is None or not fds.file:
        raise TfrviewError(
            f"{printable(str(p))}: not a descriptor set (make one with protoc --include_imports "
            "--descriptor_set_out=schema.desc your.proto)"
        )
    return fds


def _compile(p: Path):
    from google.protobuf import descriptor_pb2  # heavy: protobuf on first use only

    try:
        from grpc_tools import protoc  # optional dependency
    except ImportError:
        raise TfrviewError(
            f"{printable(str(p))}: a .proto file needs protoc (pip install grpcio-tools), or give a "
            "descriptor set: protoc --include_imports --descriptor_set_out=schema.desc "
            f"{p.name}"
        ) from None
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "schema.desc"
        code = protoc.main(
            ["protoc", f"-I{p.parent}", "--include_imports", f"--descriptor_set_out={out}", str(p)]
        )
        if code != 0 or not out.exists():
            raise TfrviewError(f"{printable(str(p))}: protoc could not compile it (see its message above)")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
