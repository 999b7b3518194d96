"""One reading of a record (records/reading.py): decided once per record in the deep pass, and the
same boxes and classes wherever they are drawn, checked, counted or plotted."""

from __future__ import annotations

import numpy as np
import pytest

from tests.core.test_payload import make_example
from tfrview.core.analysis import analyze, plots
from tfrview.core.analysis.checks import CheckTarget, Schema, check_against_schema, check_boxes, run_checks
from tfrview.core.analysis.datasummary import DatasetSummary
from tfrview.core.output.writer import write_records
from tfrview.core.records import reading
from tfrview.core.records.frames import frame_features
from tfrview.core.records.labelmap import LabelMap
from tfrview.core.records.overlays import compute_overlay
from tfrview.core.records.payload import decode
from tfrview.core.records.proto import example_pb2
from tfrview.core.records.reading import BoxConvention, ReadingContext, read_features, read_record

W, H = 200, 100
OD = "image/object/bbox/"


def od_record(xmin, ymin, xmax, ymax, texts=None, ids=None, **extra) -> bytes:
    d = {
        OD + "xmin": xmin,
        OD + "ymin": ymin,
        OD + "xmax": xmax,
        OD + "ymax": ymax,
        "image/width": [W],
        "image/height": [H],
        **extra,
    }
    if texts is not None:
        d["image/object/class/text"] = texts
    if ids is not None:
        d["image/object/class/label"] = ids
    return make_example(**d)


# Each convention the reading supports: a record of two boxes, the second out of the image, and the
# boxes it holds in pixels of a 200 x 100 image (x0, y0, x1, y1).
PIXELS = [(20.0, 10.0, 60.0, 50.0), (-20.0, 50.0, 100.0, 90.0)]
CASES = {
    BoxConvention.OD_NORMALIZED: od_record(
        [0.1, -0.1], [0.1, 0.5], [0.3, 0.5], [0.5, 0.9], texts=[b"cat", b"dog"], ids=[1, 2]
    ),
    BoxConvention.PIXEL_CORNERS: make_example(
        xmin=[20.0, -20.0],
        ymin=[10.0, 50.0],
        xmax=[60.0, 100.0],
        ymax=[50.0, 90.0],
        class_id=[1, 2],
        width=[W],
        height=[H],
    ),
    BoxConvention.COCO_XYWH: make_example(
        bbox=[20.0, 10.0, 40.0, 40.0, -20.0, 50.0, 120.0, 40.0], category_id=[1, 2], width=[W], height=[H]
    ),
    BoxConvention.TFDS_YXYX: make_example(
        **{
            "objects/bbox": [0.1, 0.1, 0.5, 0.3, 0.5, -0.1, 0.9, 0.5],
            "objects/label": [1, 2],
            "image/width": [W],
            "image/height": [H],
        }
    ),
}


@pytest.mark.parametrize("convention", list(CASES))
def test_the_same_boxes_and_classes_in_drawing_checks_statistics_facts_and_plots(
    convention, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    data = CASES[convention]
    p = decode(data)
    lm = {1: "cat", 2: "dog"}
    r = read_record(p, ReadingContext(lm))
    assert r.convention == convention and r.box_count == 2 and r.stated_size == (W, H)
    px = r.boxes_in(W, H)
    assert px == pytest.approx(np.array(PIXELS))
    assert r.normalized == pytest.approx(np.array(PIXELS) / [W, H, W, H])
    assert [r.box_name(i) for i in range(2)] == ["cat", "dog"]

    ov = compute_overlay(p.features, W, H, lm)  # drawing
    assert np.array([(b.x0, b.y0, b.x1, b.y1) for b in ov.boxes]) == pytest.approx(np.array(PIXELS))
    assert [b.label for b in ov.boxes] == ["cat", "dog"]

    found = {f.kind: f.message for f in check_boxes(r, (W, H))}  # checks: box 1 leaves the image
    assert list(found) == ["box_out_of_bounds"]
    x0, y0, x1, y1 = r.boxes[1]
    assert found["box_out_of_bounds"].endswith(f"box 1: x {x0:.4g}..{x1:.4g}, y {y0:.4g}..{y1:.4g}")

    s = DatasetSummary()  # statistics
    s.add(p, lm, r)
    assert s.box_classes == {"cat": 1, "dog": 1}

    path = tmp_path / "a.tfrecord"  # the deep pass's facts, and the plots drawn from them
    write_records(path, [data, data])
    a = analyze([str(path)], deep=True, label_map=LabelMap(lm).to_json(), jobs=1, use_cache=False)
    table = a.facts()
    assert table["boxes"].to_pylist() == [2, 2]
    assert plots.box_spec(table).convention == convention
    widths, n = plots.box_measure(table, "box width")
    assert n.tolist() == [0, 0, 1, 1]
    assert widths.tolist() == pytest.approx((r.boxes[:, 2] - r.boxes[:, 0]).tolist() * 2)
    cx, cy, _ = plots.box_centres(table)
    assert cx.tolist() == pytest.approx(((r.boxes[:, 0] + r.boxes[:, 2]) / 2).tolist() * 2)
    assert cy.tolist() == pytest.approx(((r.boxes[:, 1] + r.boxes[:, 3]) / 2).tolist() * 2)
    assert a.summary.box_classes == {"cat": 2, "dog": 2}


def test_a_sequence_example_frame_is_read_as_an_example_is():
    se = example_pb2.SequenceExample()
    se.context.feature["image/width"].int64_list.value.append(W)
    se.context.feature["image/height"].int64_list.value.append(H)
    for t in range(2):
        fl = se.feature_lists.feature_list
        fl["image/encoded"].feature.add().bytes_list.value.append(b"not an image")
        for key, v in (("xmin", 0.1), ("ymin", 0.1), ("xmax", 0.3), ("ymax", 0.5)):
            fl[f"region/bbox/{key}"].feature.add().float_list.value.extend([v, v + 0.4 + t / 10])
        fl["region/label/string"].feature.add().bytes_list.value.extend([b"cat", b"dog"])
    p = decode(se.SerializeToString())
    assert read_record(p).spec is None  # the context holds no boxes
    for t in range(2):
        f = frame_features(p, t)
        r = read_features(f, kind="sequence_example")
        assert r.convention == BoxConvention.OD_NORMALIZED and r.box_count == 2
        ov = compute_overlay(f, W, H)
        assert np.array([(b.x0, b.y0, b.x1, b.y1) for b in ov.boxes]) == pytest.approx(r.boxes_in(W, H))
        assert [b.label for b in ov.boxes] == ["cat", "dog"] == [r.box_name(i) for i in range(2)]
        assert r.boxes[1, 2] == pytest.approx(0.7 + t / 10)


def test_the_deep_pass_reads_conventions_once_a_record(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = []
    detect = reading._detect_spec

    def counted(features, ctx):
        calls.append(1)
        return detect(features, ctx)

    monkeypatch.setattr(reading, "_detect_spec", counted)
    recs = [od_record([0.1], [0.1], [0.5], [0.5], texts=[b"cat"], ids=[1], label=[i % 3]) for i in range(7)]
    recs.append(make_example(label=[1], x=[0.5]))  # no boxes: read once all the same
    path = tmp_path / "a.tfrecord"
    write_records(path, recs)
    a = analyze([str(path)], deep=True, jobs=1, use_cache=False)
    assert a.summary.records == 8 and a.summary.box_classes == {"cat": 7}
    assert len(calls) == 8


def negative_image() -> bytes:
    """An OD API record with no objects: no box lists at all (a legitimate negative image)."""
    return make_example(**{"image/width": [W], "image/height": [H], "image/format": [b"jpeg"]})


def test_a_negative_image_reads_as_no_boxes_and_is_no_missing_feature(tmp_path, monkeypatch):
    r = read_record(decode(negative_image()))
    assert r.spec is None and r.box_count == 0 and r.notes == () and r.class_counts == {}
    assert r.stated_size == (W, H) and r.boxes.shape == (0, 4)
    positives = [
        od_record([0.1], [0.1], [0.5], [0.5], texts=[b"cat"], ids=[1], **{"image/format": [b"jpeg"]})
        for _ in range(9)
    ]
    s = Schema()
    for b in positives:
        p = decode(b)
        s.add(p, read_record(p))
    assert s.od_dataset and OD + "xmax" in s.expected_keys()
    assert check_against_schema(decode(negative_image()), s) == []
    # one record that drops one box list while keeping others is still said to miss it
    half = make_example(
        **{OD + "xmin": [0.1], "image/width": [W], "image/height": [H], "image/format": [b"jpeg"]}
    )
    assert [str(f.kind) for f in check_against_schema(decode(half), s)] == ["missing_feature"]

    recs = [*positives, negative_image()]
    t = CheckTarget(
        "f",
        lambda n: recs[n],
        np.arange(10, dtype=np.uint64) * 100,
        np.full(10, 84, dtype=np.uint64),
        np.arange(10),
    )
    assert list(run_checks([t])) == []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "neg.tfrecord"
    write_records(path, recs)
    a = analyze([str(path)], deep=True, jobs=1, use_cache=False)
    assert [str(p.kind) for p in a.problems(0)] == []


def test_class_names_fall_back_once_text_then_label_map_then_id():
    f = read_features(
        decode(od_record([0.1] * 3, [0.1] * 3, [0.2] * 3, [0.2] * 3, ids=[1, 2, 7])).features,
        ReadingContext({1: "cat", 2: "dog"}),
    )
    assert [f.box_name(i) for i in range(3)] == ["cat", "dog", "id 7"]
    assert f.class_counts == {"cat": 1, "dog": 1, "id 7": 1}
    assert reading.class_name(7) == "id 7" and reading.class_name(1, {1: "cat"}) == "cat"
    ov = compute_overlay(f.features, 10, 10)
    assert [b.label for b in ov.boxes] == ["id 1", "id 2", "id 7"]
