"""COCO instances JSON and its images: `images/{split}/<file>` and
`annotations/instances_{split}.json` ([x, y, width, height] boxes in pixels; `image_id` is the
dataset's record number, stable across exports; categories keep their ids and the label map's or
TFDS ClassLabel's names; each image keeps its `source_id` and the record it came from; the Object
Detection API's instance masks as uncompressed RLE `segmentation`, their pixels the `area`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tfrview.core.output.annotated import Annotated, Classes, split_folder, xywh


def write_coco(records: Iterable[Annotated], folder: Path, classes: Classes) -> int:
    """Write the images as they come, the JSON of each split at the end. Returns images written."""
    splits: dict[str, tuple[list, list]] = {}
    ann_id = 0
    n = 0
    for a in records:
        word = split_folder(a.split)
        images, anns = splits.setdefault(word, ([], []))
        d = folder / "images" / word
        if len(images) == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / a.file_name).write_bytes(a.image)
        entry = {
            "id": a.number,
            "file_name": a.file_name,
            "width": a.width,
            "height": a.height,
            "record": a.number,
        }
        if a.source_id is not None:
            entry["source_id"] = a.source_id
        images.append(entry)
        segs = a.segmentations or (None,) * len(a.boxes)
        for box, cid, seg in zip(xywh(a.boxes).tolist(), a.class_ids.tolist(), segs, strict=True):
            ann_id += 1
            anns.append(
                {
                    "id": ann_id,
                    "image_id": a.number,
                    "category_id": int(cid),
                    "bbox": box,
                    "area": box[2] * box[3] if seg is None else float(sum(seg["counts"][1::2])),
                    "iscrowd": 0,
                    "segmentation": [] if seg is None else seg,
                }
            )
        n += 1
    cats = [{"id": i, "name": name, "supercategory": ""} for i, name in classes.ordered()]
    (folder / "annotations").mkdir(exist_ok=True)
    for word, (images, anns) in splits.items():
        doc = {
            "info": {"description": "exported by tfrview", "version": "1.0"},
            "licenses": [],
            "images": images,
            "annotations": anns,
            "categories": cats,
        }
        with open(folder / "annotations" / f"instances_{word}.json", "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
    return n
