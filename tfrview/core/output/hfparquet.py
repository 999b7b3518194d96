"""A Parquet file typed for Hugging Face `datasets`: `image` as the struct {bytes, path} its `Image`
feature stores, `image_id`, `width`, `height`, `objects` {`bbox` (COCO [x, y, width, height] in
pixels), `category` (a ClassLabel)} and `label` (a ClassLabel) when records carry an integer
label. The Arrow schema's `huggingface` metadata holds `{"info": {"features": ...}}`, so
`datasets.load_dataset("parquet", data_files=...)` shows images and class names.

The class names are known only once every record is read, and a Parquet file's schema is written
first: rows go to a temporary file, then are copied a row group at a time into the final one under
the schema that names them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tfrview.core.output.annotated import Annotated, Classes, xywh

ROW_GROUP = 256  # records a row group (image bytes: ~256 MB at 1 MB an image)


def _arrow_schema(labels: bool):
    import pyarrow as pa  # heavy: on first use only

    fields = [
        pa.field("image", pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])),
        pa.field("image_id", pa.int64()),
        pa.field("width", pa.int32()),
        pa.field("height", pa.int32()),
        pa.field(
            "objects",
            pa.struct(
                [
                    pa.field("bbox", pa.list_(pa.list_(pa.float32()))),
                    pa.field("category", pa.list_(pa.int64())),
                ]
            ),
        ),
        pa.field("split", pa.string()),
    ]
    if labels:
        fields.append(pa.field("label", pa.int64()))
    return pa.schema(fields)


def class_label_names(classes: Classes) -> list[str]:
    """A ClassLabel's names: index = id (ids with no class in between named `id N`)."""
    names = dict(classes.ordered())
    top = max(names, default=-1)
    return [names.get(i, f"id {i}") for i in range(top + 1)]


def hf_features(classes: Classes, labels: Classes | None) -> dict:
    """The `datasets.Features` of the file as its JSON form (`Features.to_dict()`)."""
    value = {"dtype": "float32", "_type": "Value"}
    feats = {
        "image": {"_type": "Image"},
        "image_id": {"dtype": "int64", "_type": "Value"},
        "width": {"dtype": "int32", "_type": "Value"},
        "height": {"dtype": "int32", "_type": "Value"},
        "objects": {
            "bbox": {"feature": {"feature": value, "_type": "Sequence"}, "_type": "Sequence"},
            "category": {
                "feature": {"names": class_label_names(classes), "_type": "ClassLabel"},
                "_type": "Sequence",
            },
        },
        "split": {"dtype": "string", "_type": "Value"},
    }
    if labels is not None:
        feats["label"] = {"names": class_label_names(labels), "_type": "ClassLabel"}
    return feats


def _batch(rows: list[Annotated], labels: bool):
    import pyarrow as pa

    cols = {
        "image": [{"bytes": a.image, "path": a.file_name} for a in rows],
        "image_id": [a.number for a in rows],
        "width": [a.width for a in rows],
        "height": [a.height for a in rows],
        "objects": [{"bbox": xywh(a.boxes).tolist(), "category": a.class_ids.tolist()} for a in rows],
        "split": [a.split for a in rows],
    }
    if labels:
        cols["label"] = [a.label for a in rows]
    return pa.RecordBatch.from_pydict(cols, schema=_arrow_schema(labels))


def write_hf_parquet(records: Iterable[Annotated], out: Path, scratch: Path, classes: Classes) -> int:
    """Rows to `scratch` (a temporary file) as they come, then `out` with the named schema.
    Returns records written."""
    import pyarrow.parquet as pq

    records = iter(records)
    first: list[Annotated] = []
    for a in records:
        first.append(a)
        if len(first) >= ROW_GROUP:
            break
    labels = any(a.label is not None for a in first)  # decided on the first row group's records
    label_classes = Classes()
    n = 0
    with pq.ParquetWriter(scratch, _arrow_schema(labels)) as w:
        rows = first
        while rows:
            for a in rows:
                if labels and a.label is not None:
                    label_classes.add(a.label, a.label_name)
            w.write_batch(_batch(rows, labels), row_group_size=ROW_GROUP)
            n += len(rows)
            rows = [a for _, a in zip(range(ROW_GROUP), records, strict=False)]
    meta = {
        "huggingface": json.dumps(
            {"info": {"features": hf_features(classes, label_classes if labels else None)}}
        )
    }
    schema = _arrow_schema(labels).with_metadata(meta)
    src = pq.ParquetFile(scratch)
    with pq.ParquetWriter(out, schema) as w:
        for i in range(src.num_row_groups):
            w.write_table(src.read_row_group(i).cast(schema), row_group_size=ROW_GROUP)
    return n
