"""Issue 20 item 1: nothing but records/reading.py decides what a record means, so the drawing,
the row text and the fact table give one answer for one record."""

from __future__ import annotations

import json

import numpy as np

from tfrview.core.analysis.checks import look_and_check
from tfrview.core.records.feature import FLOAT_LIST, Feature
from tfrview.core.records.overlays import compute_overlay
from tfrview.core.records.payload import Payload
from tfrview.core.records.reading import read_features
from tfrview.core.records.rowtext import payload_row_text


def _uneven_boxes() -> dict[str, Feature]:
    """An OD record whose xmin lists 3 values and ymin/xmax/ymax 2: two whole boxes."""
    p = "image/object/bbox/"

    def f(*v: float) -> Feature:
        return Feature(FLOAT_LIST, np.array(v, dtype=np.float32))

    return {
        p + "xmin": f(0.1, 0.2, 0.3),
        p + "ymin": f(0.1, 0.2),
        p + "xmax": f(0.5, 0.6),
        p + "ymax": f(0.5, 0.6),
    }


def test_one_box_count_for_drawing_row_text_and_fact_table():
    feats = _uneven_boxes()
    assert read_features(feats).box_count == 2
    assert compute_overlay(feats, 100, 100).count == 2
    text = payload_row_text(Payload("example", feats))
    assert "2 boxes" in text and "3 boxes" not in text
    _, look = look_and_check(Payload("example", feats), (0, 0), None, None, None)
    assert look.boxes == 2  # what the filter's `boxes` reads: the count that is drawn


def test_the_summary_says_which_box_keys_the_readings_found():
    """The Plot panel offers box plots from this, for any convention (here TFDS's flat list)."""
    from tfrview.core.analysis.datasummary import DatasetSummary
    from tfrview.core.records.feature import INT64_LIST

    flat = Feature(FLOAT_LIST, np.array([0.1, 0.1, 0.5, 0.5], dtype=np.float32))
    s = DatasetSummary()
    s.add(Payload("example", {"label": Feature(INT64_LIST, np.array([3]))}))
    assert s.to_json()["boxes"] is None and s.to_json()["classes"]["counted"] == "records"
    s.add(Payload("example", {"objects/bbox": flat, "objects/label": Feature(INT64_LIST, np.array([1]))}))
    out = s.to_json()
    assert out["boxes"] == {"keys": ["objects/bbox"]} and out["classes"]["counted"] == "objects"


def _corners(x0: float, y0: float, x1: float, y1: float) -> dict[str, Feature]:
    """One box under keys that say nothing of units (the convention comes from the values)."""
    return {
        f"box/{c}": Feature(FLOAT_LIST, np.array([v], dtype=np.float32))
        for c, v in zip(("xmin", "ymin", "xmax", "ymax"), (x0, y0, x1, y1), strict=True)
    }


def test_a_context_keeps_the_spec_its_first_records_agreed_on():
    from tfrview.core.records.reading import AGREEING_RECORDS, BoxConvention, ReadingContext, read_record

    ctx = ReadingContext()
    for _ in range(AGREEING_RECORDS):  # pixel boxes
        assert read_record(Payload("example", _corners(10, 20, 300, 400)), ctx).convention == "pixel_corners"
    assert ctx.agreed is not None and ctx.agreed.convention == BoxConvention.PIXEL_CORNERS
    # a tiny box near the corner fits pixels as well as [0, 1]: read by the dataset's pixels
    r = read_record(Payload("example", _corners(0.0, 0.0, 1.0, 1.0)), ctx)
    assert r.convention == "pixel_corners" and r.spec_note is None
    assert compute_overlay(r.features, 640, 480, spec=r.spec).boxes[0].x1 == 1.0  # one pixel, not the width


def test_a_record_that_contradicts_the_agreed_spec_is_read_by_its_own_values_and_says_so():
    from tfrview.core.records.reading import AGREEING_RECORDS, ReadingContext, read_record

    ctx = ReadingContext()
    for _ in range(AGREEING_RECORDS):
        read_record(Payload("example", _corners(0.1, 0.2, 0.5, 0.6)), ctx)
    assert ctx.agreed is not None and ctx.agreed.convention == "od_normalized"
    r = read_record(Payload("example", _corners(10, 20, 300, 400)), ctx)
    assert r.convention == "pixel_corners"
    assert r.notes[0].startswith(
        "boxes read as pixel xmin/ymin/xmax/ymax by their values, not as the first 16"
    )


def test_first_records_that_disagree_leave_every_record_to_its_own_values():
    from tfrview.core.records.reading import AGREEING_RECORDS, ReadingContext, read_record

    ctx = ReadingContext()
    for i in range(AGREEING_RECORDS):
        box = _corners(10, 20, 300, 400) if i % 2 else _corners(0.1, 0.2, 0.5, 0.6)
        read_record(Payload("example", box), ctx)
    assert ctx.agreed is None
    assert read_record(Payload("example", _corners(0.0, 0.0, 1.0, 1.0)), ctx).convention == "od_normalized"


def _black_png_with_a_box() -> bytes:
    """A 100 x 100 black PNG with one box at 0..1 under keys that say nothing of units: read as
    normalized (the whole image) by its values, as one pixel when the person chose pixel corners."""
    import io

    from PIL import Image

    from tests.core.test_payload import make_example

    buf = io.BytesIO()
    Image.new("RGB", (100, 100)).save(buf, "PNG")
    boxes = {
        f"box_{c}": [v] for c, v in zip(("xmin", "ymin", "xmax", "ymax"), (0.0, 0.0, 1.0, 1.0), strict=True)
    }
    return make_example(**{"image/encoded": [buf.getvalue()]}, **boxes)


def _pixel_spec():
    from tfrview.core.records.reading import BoxConvention, BoxSpec

    return BoxSpec(BoxConvention.PIXEL_CORNERS, ("box_xmin", "box_ymin", "box_xmax", "box_ymax"))


def test_thumbnails_and_exports_draw_the_spec_the_person_chose(tmp_path):
    from PIL import Image

    from tfrview.core.output.export import export_images
    from tfrview.core.records.thumbs import make_thumbnail

    data = _black_png_with_a_box()
    edge = (slice(0, 3), 50)  # the top edge's middle: drawn only by a box of the whole image
    assert make_thumbnail(data, 100).pixels[edge].any()
    assert not make_thumbnail(data, 100, specs=(_pixel_spec(),)).pixels[edge].any()
    for name, specs in (("own", ()), ("chosen", (_pixel_spec(),))):
        export_images([(0, data)], tmp_path / name, True, specs=specs)
    own = np.asarray(Image.open(tmp_path / "own" / "record-0.png").convert("RGB"))
    chosen = np.asarray(Image.open(tmp_path / "chosen" / "record-0.png").convert("RGB"))
    assert own[edge].any() and not chosen[edge].any()


def test_one_rule_says_which_image_keys_are_masks():
    from tfrview.core.records.feature import BYTES_LIST
    from tfrview.core.records.masks import is_mask_key

    png = Feature(BYTES_LIST, [b"\x89PNG"])
    feats = {"image/encoded": png, "image/segmentation/class/encoded": png, "image/object/mask": png}
    assert [k for k in feats if is_mask_key(k, feats)] == [
        "image/segmentation/class/encoded",
        "image/object/mask",
    ]


def test_the_deep_pass_reads_boxes_by_the_spec_the_person_chose(tmp_path):
    from tfrview.core.analysis.results import ShardTask
    from tfrview.core.analysis.shard import analyze_shard
    from tfrview.core.output.writer import write_records

    path = tmp_path / "boxes.tfrecord"
    write_records(path, [_black_png_with_a_box()] * 3)

    def box_meta(specs: tuple[str, ...]) -> str:
        """The convention the fact table says its boxes were read with (facts.BOX_META)."""
        from tfrview.core.analysis.facts import BOX_META

        task = ShardTask(str(path), 0, deep=True, read_cache=False, write_cache=False, box_specs=specs)
        return json.loads(analyze_shard(task).deep.facts.schema.metadata[BOX_META])["convention"]

    assert box_meta(()) == "od_normalized"  # by its values in [0, 1]
    assert box_meta((_pixel_spec().to_json(),)) == "pixel_corners"


def test_key_conventions_are_spelled_once_in_the_reading():
    """The checks' per-object prefixes are the reading's own; the reading parses the keypoints the
    overlay draws, and says when their lists do not pair up."""
    from tfrview.core.analysis import checks
    from tfrview.core.records import reading

    assert checks._OBJECT_PREFIXES is reading.OBJECT_PREFIXES == ("image/object/", "objects/")
    x, y = reading.KEYPOINT_KEYS[:2]
    feats = {
        **_uneven_boxes(),
        x: Feature(FLOAT_LIST, np.array([0.5, 0.25])),
        y: Feature(FLOAT_LIST, np.array([0.5, 0.5])),
    }
    xs, ys, visible = read_features(feats).keypoints
    assert xs.tolist() == [0.5, 0.25] and visible.tolist() == [1, 1]
    assert [k[:2] for k in compute_overlay(feats, 100, 100).keypoints] == [(50.0, 50.0), (25.0, 50.0)]
    feats[y] = Feature(FLOAT_LIST, np.array([0.5]))
    r = read_features(feats)
    assert r.keypoints is None and "keypoint lists differ in length (2 x, 1 y): not drawn" in r.notes


def test_the_overlay_names_and_scales_boxes_as_the_reading_does():
    from tfrview.core.records.feature import INT64_LIST

    feats = dict(_uneven_boxes())
    feats["image/object/class/label"] = Feature(INT64_LIST, np.array([1, 2]))
    r = read_features(feats, kind="example")
    ov = compute_overlay(feats, 200, 100, {1: "cat"})
    assert [b.label for b in ov.boxes] == ["cat", "id 2"]
    assert [r.box_name(i) for i in range(2)] == ["id 1", "id 2"]  # this reading had no label map
    assert [(b.x0, b.y1) for b in ov.boxes] == [
        (float(np.float32(0.1)) * 200, float(np.float32(0.5)) * 100),
        (float(np.float32(0.2)) * 200, float(np.float32(0.6)) * 100),
    ]
    plain = compute_overlay(_uneven_boxes(), 200, 100)  # neither id nor text: "box i", one colour
    assert [(b.name, b.label, b.color_key) for b in plain.boxes] == [(None, "box 0", ""), (None, "box 1", "")]
