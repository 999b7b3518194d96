"""A small TFX ExampleGen output for the TFDV tests: `Split-train/` and `Split-eval/`, gzip
TFRecords of Examples whose values are known, with anomalies planted where a test asks."""

from __future__ import annotations

from pathlib import Path

from tfrview.core.output.writer import write_records
from tfrview.core.records.proto import example_pb2

COLOURS = (b"red", b"green", b"blue")
IMAGE = bytes(range(256)) * 4  # longer than the fact table keeps (limits.FACT_BYTES)
NAME = "data_tfrecord-00000-of-00001.gz"  # ExampleGen's file name


def example(i: int, planted: str | None = None) -> bytes:
    """Record i: label (int, i % 3), score (two floats), colour (one of three), opt (every other
    record), image/encoded (bytes). `planted` changes it: "colour" a new colour, "label" a float
    label, "score" three scores, "extra" a new feature, "no_colour" the colour left out."""
    e = example_pb2.Example()
    f = e.features.feature
    if planted == "label":
        f["label"].float_list.value.append(0.5)
    else:
        f["label"].int64_list.value.append(i % 3)
    f["score"].float_list.value.extend([i * 0.5, 1.0] + ([2.0] if planted == "score" else []))
    if planted != "no_colour":
        f["colour"].bytes_list.value.append(b"purple" if planted == "colour" else COLOURS[i % 3])
    if i % 2 == 0:
        f["opt"].bytes_list.value.append(b"x%d" % i)
    f["image/encoded"].bytes_list.value.append(IMAGE)
    if planted == "extra":
        f["extra"].int64_list.value.append(7)
    return e.SerializeToString()


def make_tfx(root: Path, train: int = 20, eval_: int = 8, planted: dict[int, str] | None = None) -> Path:
    """root/Split-train/ and root/Split-eval/; `planted`: eval record number -> what to plant."""
    planted = planted or {}
    for split, n in (("train", train), ("eval", eval_)):
        d = root / f"Split-{split}"
        d.mkdir(parents=True, exist_ok=True)
        recs = [example(i, planted.get(i) if split == "eval" else None) for i in range(n)]
        write_records(d / NAME, recs, "gzip")
    return root
