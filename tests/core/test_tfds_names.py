"""A TFDS dataset's ClassLabel names (`<feature>.labels.txt`) wherever a class is shown from the
analysis: the fact table (`facts.CLASS_META`), a class id's histogram, Compare's bars, the dataset
step's box classes, the Parquet export (a `#name` column and the file's metadata) and the image
export (boxes named as the window names them). Never bare class numbers where names are known."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from tests.tfdsdata import detection
from tfrview.core.analysis.facts import class_names
from tfrview.core.analysis.merge import merge
from tfrview.core.analysis.shard import analyze_shard, plan


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _analysed(*folders: Path):
    paths = [str(p) for d in folders for p in sorted(d.glob("*.tfrecord-*"))]
    return merge([analyze_shard(t) for t in plan(paths, True)])


def test_the_fact_table_plots_and_box_classes_name_the_classes(tmp_path) -> None:
    from tfrview.core.analysis.factboxes import box_classes, table_boxes
    from tfrview.core.analysis.plots import plot

    a = _analysed(detection(tmp_path / "d", records=6))
    facts = a.facts()
    names = class_names(facts.schema)
    assert names["label"] == {0: "cat", 1: "dog", 2: "bird"}
    assert names["objects/label"] == {0: "person", 1: "car", 2: "tree"}
    h = plot(facts, "label", histogram=True)["histogram"]
    assert h["names"] == ["0 (cat)", "1 (dog)", "2 (bird)"] and h["counts"] == [2, 2, 2]
    o = plot(facts, "objects/label", histogram=True)["histogram"]
    assert o["names"] == ["0 (person)", "1 (car)", "2 (tree)"]
    _, words = box_classes(facts, table_boxes(facts))
    assert sorted(words) == ["car", "person", "tree"]  # the dataset step's class names, not "id 1"


def test_compare_names_the_classes_of_two_tfds_folders(tmp_path) -> None:
    from tfrview.core.analysis.compare import CLASS_BALANCE, compare, side_of

    a = detection(tmp_path / "a", records=6)
    b = detection(tmp_path / "b", records=3)
    sides = []
    for name, d in (("a", a), ("b", b)):
        results = [analyze_shard(t) for t in plan([str(p) for p in sorted(d.glob("*.tfrecord-*"))], True)]
        sides.append(side_of(name, results, [0]))
    c = compare(*sides)
    shown = {f.key: f.bars.names for f in c.features if f.bars is not None and f.bars.names}
    assert set(shown["label"]) == {"0 (cat)", "1 (dog)", "2 (bird)"}
    assert set(shown["objects/label"]) == {"0 (person)", "1 (car)", "2 (tree)"}
    if CLASS_BALANCE in shown:
        assert not any(n.isdigit() for n in shown[CLASS_BALANCE])


def test_the_parquet_export_has_a_name_column_and_the_names_in_its_metadata(tmp_path) -> None:
    from tfrview.core.analysis.facts import CLASS_META
    from tfrview.core.analysis.parquet_export import write_parquet

    out = tmp_path / "facts.parquet"
    write_parquet(_analysed(detection(tmp_path / "d", records=4)), out)
    t = pq.read_table(out)
    assert t["label#name"].to_pylist() == ["cat", "dog", "bird", "cat"]
    assert t["objects/label#name"].to_pylist()[:2] == [["car", "tree"], ["car", "person"]]
    assert t.column_names.index("label#name") == t.column_names.index("label") + 1
    meta = json.loads(pq.read_schema(out).metadata[CLASS_META])
    assert meta["label"] == {"0": "cat", "1": "dog", "2": "bird"}


def test_the_image_export_names_the_boxes_by_their_class_labels(tmp_path) -> None:
    from tfrview.core.output.export import export_images
    from tfrview.core.records.drawing import draw_overlay
    from tfrview.core.records.images import decode_image, find_images, image_features
    from tfrview.core.records.overlays import compute_overlay
    from tfrview.core.records.payload import decode
    from tfrview.core.tfds.features import features_of_folder
    from tfrview.core.tfrecord.report import index_and_verify
    from tfrview.core.tfrecord.source import open_source

    d = detection(tmp_path / "d", records=1)
    tfds = features_of_folder(d)
    with open_source(next(d.glob("*.tfrecord-*"))) as src:
        idx, _ = index_and_verify(src)
        data = src.read(int(idx.offsets[0]) + 12, int(idx.lengths[0]))
    export_images([(0, data, tfds)], tmp_path / "named")
    export_images([(0, data)], tmp_path / "bare")
    named = np.asarray(Image.open(tmp_path / "named" / "record-0.png"))
    bare = np.asarray(Image.open(tmp_path / "bare" / "record-0.png"))
    feats = image_features(decode(data))
    img = decode_image(feats, find_images(feats)[0])
    ov = compute_overlay(feats, img.width, img.height, None, None, tfds)
    assert [b.label for b in ov.boxes] == ["car", "tree"]  # what the exported image draws
    want = np.asarray(draw_overlay(img.pixels, ov))
    assert np.array_equal(named, want) and not np.array_equal(named, bare)
