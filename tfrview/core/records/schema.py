"""A schema for custom payloads: records that are some other protobuf (Waymo `Frame`, Magenta
`NoteSequence`, a company's own messages) shown with field names, decoded by protobuf's own
descriptor pool from a compiled descriptor set (`protoc --include_imports --descriptor_set_out`)
or from a `.proto` file when protoc is at hand (grpcio-tools).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tfrview.core.limits import MAX_LABEL_MAP_BYTES
from tfrview.core.tfrecord.framing import TfrviewError, one_line

MAX_SCHEMA_BYTES = MAX_LABEL_MAP_BYTES  # a descriptor set is read whole; 16 MB holds any real one


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
    from google.protobuf import descriptor_pool, message_factory

    p = Path(path)
    fds = _descriptor_set(p)
    pool = descriptor_pool.DescriptorPool()
    try:
        for f in fds.file:
            pool.Add(f)
    except Exception as exc:  # protobuf raises TypeError/KeyError for an inconsistent set
        raise TfrviewError(f"{one_line(str(p))}: the schema does not load ({one_line(str(exc))[:200]})") from None
    names = message_names(p)
    if message is None:
        tops = [f"{f.package}.{m.name}" if f.package else m.name for f in fds.file for m in f.message_type]
        if len(tops) != 1:
            raise TfrviewError(f"{one_line(str(p))}: defines {len(tops)} messages; name one with --message "
                               f"(e.g. {', '.join(tops[:3])})")  # fmt: skip
        message = tops[0]
    try:
        desc = pool.FindMessageTypeByName(message)
    except KeyError:
        near = [n for n in names if n.endswith("." + message) or n == message]
        if len(near) == 1:
            desc = pool.FindMessageTypeByName(near[0])
        else:
            raise TfrviewError(f"{one_line(str(p))}: no message {one_line(message)!r} "
                               f"(it has {', '.join(names[:5])}{', …' if len(names) > 5 else ''})") from None  # fmt: skip
    return MessageSchema(desc.full_name, message_factory.GetMessageClass(desc))


def decode_with(data: bytes, schema: MessageSchema) -> dict | None:
    """The record as the schema's message, as a dict with field names; None when the bytes are not
    that message. Numbers stay numbers (protobuf's JSON mapping would write 64-bit integers as
    text), bytes are base64 as that mapping writes them, enums are their names."""
    try:
        msg = schema.cls.FromString(bytes(data))
    except Exception:  # DecodeError, or a parser error for bytes that are not this message
        return None
    return message_dict(msg)


def message_dict(msg) -> dict:
    out = {}
    for field, value in msg.ListFields():
        mt = field.message_type
        if mt is not None and mt.GetOptions().map_entry:
            vf = mt.fields_by_name["value"]
            out[field.name] = {str(k): _value(vf, v) for k, v in value.items()}
        elif field.is_repeated:
            out[field.name] = [_value(field, v) for v in value]
        else:
            out[field.name] = _value(field, value)
    return out


def _value(field, v):
    from google.protobuf.descriptor import FieldDescriptor as F

    if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        return message_dict(v)
    if field.type == F.TYPE_BYTES:
        import base64

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
    from google.protobuf import descriptor_pb2

    try:
        size = p.stat().st_size
        if size > MAX_SCHEMA_BYTES:
            raise TfrviewError(f"{one_line(str(p))}: {size:,} bytes is too large for a schema (limit {MAX_SCHEMA_BYTES:,})")
        if p.suffix == ".proto":
            return _compile(p)
        data = p.read_bytes()
    except OSError as exc:
        raise TfrviewError(f"{one_line(str(p))}: cannot read ({exc.strerror or exc})") from None
    try:
        fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    except Exception:
        fds = None
    if fds is None or not fds.file:
        raise TfrviewError(f"{one_line(str(p))}: not a descriptor set (make one with protoc --include_imports "
                           "--descriptor_set_out=schema.desc your.proto)")  # fmt: skip
    return fds


def _compile(p: Path):
    from google.protobuf import descriptor_pb2

    try:
        from grpc_tools import protoc
    except ImportError:
        raise TfrviewError(f"{one_line(str(p))}: a .proto file needs protoc (pip install grpcio-tools), or give a "
                           "descriptor set: protoc --include_imports --descriptor_set_out=schema.desc "
                           f"{p.name}") from None  # fmt: skip
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "schema.desc"
        code = protoc.main(["protoc", f"-I{p.parent}", "--include_imports", f"--descriptor_set_out={out}", str(p)])
        if code != 0 or not out.exists():
            raise TfrviewError(f"{one_line(str(p))}: protoc could not compile it (see its message above)")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
