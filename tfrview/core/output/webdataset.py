"""WebDataset tar shards: `{split}-{shard:06d}.tar`, N records a shard, each record three members
sharing its key (`r{number:09d}`, no dot: WebDataset splits a member's name at the first dot of
its base name): `{key}.jpg`/`.png` (the image), `{key}.json` (size, file name, source_id, COCO
[x, y, width, height] pixel boxes, category ids and names) and `{key}.cls` (the record label, when
it is an integer). Members in record order, fixed times and owners: the same records make the
same bytes."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterable
from pathlib import Path

from tfrview.core.output.annotated import Annotated, Classes, split_folder, xywh

SHARD_RECORDS = 1000  # records a shard by default (`--shard-size`)


def _member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def annotation_json(a: Annotated) -> dict:
    return {
        "record": a.number,
        "file_name": a.file_name,
        "source_id": a.source_id,
        "width": a.width,
        "height": a.height,
        "bbox": xywh(a.boxes).tolist(),
        "category": a.class_ids.tolist(),
        "category_name": list(a.class_names),
        "label": a.label,
        "label_name": a.label_name,
    }


def write_webdataset(
    records: Iterable[Annotated], folder: Path, classes: Classes, shard_size: int = SHARD_RECORDS
) -> int:
    """Shards of `shard_size` records each, one series a split. Returns records written."""
    open_: dict[str, tuple[tarfile.TarFile, int, int]] = {}  # split -> (tar, shard number, records in it)
    n = 0
    try:
        for a in records:
            word = split_folder(a.split)
            tar, shard, k = open_.get(word, (None, -1, shard_size))
            if k >= shard_size:
                if tar is not None:
                    tar.close()
                shard += 1
                tar = tarfile.open(  # noqa: SIM115 - one open a split at once, closed below
                    folder / f"{word}-{shard:06d}.tar", "w", format=tarfile.USTAR_FORMAT
                )
                k = 0
            _member(tar, f"{a.key}.{a.ext}", a.image)
            _member(tar, f"{a.key}.json", json.dumps(annotation_json(a)).encode())
            if a.label is not None:
                _member(tar, f"{a.key}.cls", str(a.label).encode())
            open_[word] = (tar, shard, k + 1)
            n += 1
    finally:
        for tar, _, _ in open_.values():
            tar.close()
    names = {str(i): name for i, name in classes.ordered()}
    (folder / "classes.json").write_text(json.dumps(names, indent=1) + "\n", encoding="utf-8")
    return n
