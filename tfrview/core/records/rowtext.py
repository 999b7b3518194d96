"""One line per record that makes records tellable apart in a table: label, classes, image size,
box count; else the first few features. Cheap: no image is decoded."""

from __future__ import annotations

from tfrview.core.records import msgpacks
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST
from tfrview.core.records.images import find_images, sniff_image_format
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.records.payload import Payload, decode
from tfrview.core.records.reading import ReadingContext, RecordReading, read_record
from tfrview.core.records.textfmt import format_bytes, format_number, human_bytes
from tfrview.core.termtext import printable


def _image_size(r: RecordReading) -> str | None:
    size = r.stated_size
    return f"{size[0]}×{size[1]}" if size else None


def payload_row_text(
    p: Payload, label_map: dict[int, str] | None = None, context: ReadingContext | None = None
) -> str:
    """One line (keys and class text from the data are escaped: they may hold anything).
    `context`: the dataset's reading context (else one with `label_map`)."""
    return printable(_summary(p, context if context is not None else ReadingContext(label_map)))


def _summary(p: Payload, ctx: ReadingContext) -> str:
    if p.full_size is not None:
        return f"too large to decode ({human_bytes(p.full_size)}): " + format_bytes(p.raw[:64], 40)
    if p.kind == PayloadKind.EVENT:
        return _event_summary(p)
    if p.kind == PayloadKind.EXAMPLE or p.kind == PayloadKind.SEQUENCE_EXAMPLE:
        parts: list[str] = []
        r = read_record(p, ctx)
        cap = r.caption
        if cap:
            parts.append(cap)
        spec = r.spec
        if spec is not None:
            names = r.class_counts
            n = r.box_count  # the reading's count: what is drawn and what the filter's `boxes` holds
            parts.append(f"{n} box{'es' if n != 1 else ''}")
            if names:
                parts.append(", ".join(f"{k}×{v}" if v > 1 else k for k, v in names.most_common(4)))
        imgs = find_images(p.features)
        if imgs:
            size = _image_size(r)
            parts.insert(0, f"{imgs[0].detail}{' ' + size if size and imgs[0].storage == 'encoded' else ''}")
        if p.kind == PayloadKind.SEQUENCE_EXAMPLE:
            steps = max((len(v) for v in p.feature_lists.values()), default=0)
            parts.append(f"{len(p.feature_lists)} feature lists, {steps} steps")
        if not parts or (len(parts) == 1 and p.kind == PayloadKind.SEQUENCE_EXAMPLE):
            parts.append(_first_features(p))
        elif cap and not imgs and spec is None and p.kind == PayloadKind.EXAMPLE:
            # tabular data: the label alone told records apart by nothing else (issue 18)
            parts.append(_first_features(p, skip=r.label_key, scalars_first=True))
        if p.limits:
            parts.append("partly decoded (limit)")
        return "  ·  ".join(x for x in parts if x)
    if p.kind == PayloadKind.EXAMPLE_LIST:
        keys = sorted({k for ex in p.examples for k in ex})
        shown = ", ".join(keys[:4]) + (" …" if len(keys) > 4 else "")
        return f"{len(p.examples):,} example{'s' if len(p.examples) != 1 else ''} ({shown})" + (
            f"  ·  context {', '.join(list(p.features)[:4])}" if p.features else ""
        )
    if p.kind == PayloadKind.PROTOBUF:
        return f"protobuf, {len(p.fields)} top-level fields"
    if p.kind == PayloadKind.MSGPACK:
        return msgpacks.row_text(p.value)
    if p.kind == PayloadKind.PICKLE:
        return f"Python pickle, protocol {p.raw[1]}, {len(p.raw):,} bytes (never unpickled)"
    return format_bytes(p.raw, 60)


def _first_features(p: Payload, n: int = 4, skip: str | None = None, scalars_first: bool = False) -> str:
    """The first n features as key=value (`skip` left out; single values first when asked: the
    columns of tabular data)."""
    feats = [(k, f) for k, f in p.features.items() if k != skip]
    if scalars_first:
        feats.sort(key=lambda kf: len(kf[1].values) != 1)  # stable: the record's order otherwise
    out = []
    for k, f in feats[:n]:
        if not len(f.values):
            out.append(f"{k}=[]")
            continue
        v0 = f.values[0]
        if f.type == BYTES_LIST:
            fmt = sniff_image_format(v0)
            s = fmt or format_bytes(v0, 24)
        else:
            s = format_number(v0, f.type == FLOAT_LIST)
        more = f"…+{len(f.values) - 1}" if len(f.values) > 1 else ""
        out.append(f"{k}={s}{more}")
    if len(feats) > n:
        out.append(f"+{len(feats) - n} more")
    return ", ".join(out)


def row_text(
    data: bytes, label_map: dict[int, str] | None = None, context: ReadingContext | None = None
) -> tuple[str, str]:
    """(kind, summary line) of a record's payload (`context`: its dataset's, e.g. with a TFDS
    dataset's features)."""
    p = decode(data)
    return p.kind, payload_row_text(p, label_map, context)


def _event_summary(p: Payload) -> str:
    """'step 1,200  ·  loss 0.231  ·  accuracy 0.91  ·  +3 more': the tags of a TensorBoard event."""
    feats = p.features
    step = int(feats["step"].values[0]) if "step" in feats and len(feats["step"].values) else 0
    parts = [f"step {step:,}"]
    # a tag's own features (samples/height, weights/buckets) are parts of the tag, not tags
    tags = [
        k
        for k in feats
        if k not in ("wall_time", "step") and ("/" not in k or k.rsplit("/", 1)[0] not in feats)
    ]
    for k in tags[:4]:
        f = feats[k]
        if f.type == "float_list" and len(f.values) == 1:
            parts.append(f"{k} {float(f.values[0]):.6g}")
        elif f.type == "bytes_list" and f.values and len(f.values[0]) < 80 and f.values[0].isascii():
            parts.append(f"{k}: {f.values[0].decode('ascii', 'replace')}")
        else:
            parts.append(k)
    if len(tags) > 4:
        parts.append(f"+{len(tags) - 4} more")
    return "  ·  ".join(parts)
