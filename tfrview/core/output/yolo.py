"""YOLO in Ultralytics' layout: `images/{split}/<file>`, `labels/{split}/<stem>.txt` with one
`class cx cy w h` line a box (normalised to the image), and `data.yaml` (`path`, `train`, `val`,
`test` when present, `names` as {index: name}). Ultralytics wants class indices 0..n-1: ids that
are not are renumbered in id order, and `data.yaml` names each index."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tfrview.core.output.annotated import Annotated, Classes, split_folder


def _lines(a: Annotated, index: dict[int, int] | None) -> str:
    b = a.boxes
    if not len(b):
        return ""
    w, h = float(a.width), float(a.height)
    cx = (b[:, 0] + b[:, 2]) / 2 / w
    cy = (b[:, 1] + b[:, 3]) / 2 / h
    bw = (b[:, 2] - b[:, 0]) / w
    bh = (b[:, 3] - b[:, 1]) / h
    ids = a.class_ids.tolist() if index is None else [index[i] for i in a.class_ids.tolist()]
    rows = zip(ids, cx.tolist(), cy.tolist(), bw.tolist(), bh.tolist(), strict=True)
    return "".join(f"{c} {x:.6f} {y:.6f} {ww:.6f} {hh:.6f}\n" for c, x, y, ww, hh in rows)


def write_yolo(records: Iterable[Annotated], folder: Path, classes: Classes, root: Path | None = None) -> int:
    """Images and label files as they come; labels are renumbered at the end only when the ids met
    are not 0..n-1 already. `root`: where `folder` ends up (data.yaml's absolute `path`: Ultralytics
    reads a relative one under its own datasets folder). Returns images written."""
    words: list[str] = []
    written: list[Path] = []
    n = 0
    for a in records:
        word = split_folder(a.split)
        if word not in words:
            words.append(word)
            (folder / "images" / word).mkdir(parents=True)
            (folder / "labels" / word).mkdir(parents=True)
        (folder / "images" / word / a.file_name).write_bytes(a.image)
        label = folder / "labels" / word / f"{a.stem}.txt"
        label.write_text(_lines(a, None), encoding="utf-8")
        written.append(label)
        n += 1
    ordered = classes.ordered()
    ids = [i for i, _ in ordered]
    if ids != list(range(len(ids))):  # renumber: each label file read back and written again
        index = {i: k for k, i in enumerate(ids)}
        for label in written:
            text = label.read_text(encoding="utf-8")
            if text:
                rows = [line.split(" ", 1) for line in text.splitlines()]
                label.write_text("".join(f"{index[int(c)]} {rest}\n" for c, rest in rows), encoding="utf-8")
    names = {k: name for k, (_, name) in enumerate(ordered)}
    train = "train" if "train" in words else (words[0] if words else "all")
    val = "val" if "val" in words else train
    lines = [
        "# YOLO dataset (Ultralytics layout), exported by tfrview",
        f"path: {json.dumps(str((root or folder).absolute()))}",
        f"train: images/{train}",
        f"val: images/{val}",
    ]
    if "test" in words:
        lines.append("test: images/test")
    lines.append(f"nc: {len(names)}")
    lines.append("names:")
    lines += [f"  {k}: {json.dumps(name)}" for k, name in names.items()]
    if ids != list(range(len(ids))):
        lines.append("# the records' class ids, by index: " + json.dumps({k: i for k, i in enumerate(ids)}))
    (folder / "data.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n
