"""Each QA check on a record built to trip it, and on one built not to."""

import io
import math

import numpy as np
from PIL import Image

from tests.core.test_payload import make_example
from tfrview.core.analysis.checks import (
    CheckTarget,
    DuplicateImages,
    Schema,
    check_against_schema,
    check_boxes,
    check_images,
    check_labels,
    check_values,
    run_checks,
)
from tfrview.core.records.payload import decode
from tfrview.core.records.reading import read_features


def feats(**kw):
    return decode(make_example(**kw)).features


def kinds(findings):
    return [str(f.kind) for f in findings]


def jpeg(w=40, h=30, orientation=None) -> bytes:
    buf = io.BytesIO()
    kw = {}
    if orientation:
        ex = Image.Exif()
        ex[0x0112] = orientation
        kw["exif"] = ex.tobytes()
    Image.new("RGB", (w, h), (200, 30, 30)).save(buf, "JPEG", **kw)
    return buf.getvalue()


def od(xmin, ymin, xmax, ymax, **extra):
    d = {
        "image/object/bbox/xmin": xmin,
        "image/object/bbox/ymin": ymin,
        "image/object/bbox/xmax": xmax,
        "image/object/bbox/ymax": ymax,
    }
    d.update(extra)
    return feats(**d)


def boxes(f, size=None):
    return kinds(check_boxes(read_features(f), size))


def test_good_boxes_have_no_findings():
    assert boxes(od([0.1], [0.1], [0.5], [0.5])) == []


def test_normalized_box_outside_unit_square():
    f = od([0.6], [0.5], [1.3], [0.9])
    assert boxes(f) == ["box_out_of_bounds"]


def test_pixel_box_outside_the_image():
    f = feats(xmin=[10.0], ymin=[10.0], xmax=[250.0], ymax=[50.0])
    assert boxes(f, (200, 100)) == ["box_out_of_bounds"]
    assert boxes(f, (300, 100)) == []


def test_inverted_and_zero_area_boxes():
    assert boxes(od([0.5], [0.1], [0.2], [0.4])) == ["box_inverted"]
    assert boxes(od([0.2], [0.1], [0.2], [0.4])) == ["box_zero_area"]


def test_box_lists_of_different_lengths_and_class_lists():
    f = od([0.1, 0.2], [0.1, 0.2], [0.3, 0.4], [0.3], **{"image/object/class/text": [b"a", b"b", b"c"]})
    got = boxes(f)
    assert "box_list_lengths" in got and "class_list_length" in got


def test_coco_boxes_checked_against_image():
    f = feats(bbox=[150.0, 10.0, 100.0, 20.0])
    assert boxes(f, (200, 100)) == ["box_out_of_bounds"]


def test_undecodable_image():
    f = feats(**{"image/encoded": [jpeg()[:200]]})
    found, _ = check_images(f)
    assert kinds(found) == ["image_undecodable"]


def test_stated_size_differs_from_image():
    f = feats(**{"image/encoded": [jpeg(40, 30)], "image/width": [40], "image/height": [31]})
    found, size = check_images(f)
    assert kinds(found) == ["image_size_mismatch"] and size == (40, 30)
    f = feats(
        **{"image/encoded": [jpeg(40, 30)], "image/width": [40], "image/height": [30], "image/channels": [3]}
    )
    assert check_images(f)[0] == []


def test_exif_rotation_that_swaps_width_and_height():
    f = feats(**{"image/encoded": [jpeg(40, 30, orientation=6)]})
    assert kinds(check_images(f)[0]) == ["image_exif_rotation"]
    f = feats(**{"image/encoded": [jpeg(40, 30, orientation=3)]})  # 180°: no swap
    assert check_images(f)[0] == []


def test_duplicate_images():
    d = DuplicateImages()
    img = jpeg()
    assert d.check(feats(image=[img]), (0, 0)) == []
    dup = d.check(feats(image=[img]), (0, 7))
    assert kinds(dup) == ["duplicate_image"] and "record 0" in dup[0].message
    assert d.check(feats(image=[jpeg(41, 30)]), (0, 8)) == []


def test_labels_against_label_map():
    lm = {1: "cat", 2: "dog"}
    f = od(
        [0.1, 0.1],
        [0.1, 0.1],
        [0.2, 0.2],
        [0.2, 0.2],
        **{"image/object/class/label": [2, 5], "image/object/class/text": [b"cat", b"x"]},
    )
    got = kinds(check_labels(read_features(f), lm, od_dataset=True))
    assert got == ["label_not_in_map", "label_text_mismatch"]
    f0 = od([0.1], [0.1], [0.2], [0.2], **{"image/object/class/label": [0]})
    assert kinds(check_labels(read_features(f0), None, od_dataset=True)) == ["label_zero"]
    ok = od(
        [0.1], [0.1], [0.2], [0.2], **{"image/object/class/label": [1], "image/object/class/text": [b"cat"]}
    )
    assert check_labels(read_features(ok), lm, od_dataset=True) == []


def test_nan_and_inf_values():
    assert kinds(check_values(feats(x=[1.0, math.nan, math.inf]))) == ["nan_or_inf"]
    assert check_values(feats(x=[1.0, 2.0])) == []


def test_schema_missing_feature_type_mismatch_unexpected_payload():
    s = Schema()
    for i in range(10):
        s.add(decode(make_example(label=[i], name=[b"n"])))
    assert kinds(check_against_schema(decode(make_example(label=[1])), s)) == ["missing_feature"]
    assert kinds(check_against_schema(decode(make_example(label=[1.5], name=[b"n"])), s)) == [
        "feature_type_mismatch"
    ]
    assert kinds(check_against_schema(decode(b"some text"), s)) == ["unexpected_payload"]
    assert check_against_schema(decode(make_example(label=[3], name=[b"x"])), s) == []


def test_run_checks_yields_problems_with_record_numbers():
    pls = [make_example(label=[i], v=[0.5]) for i in range(10)]
    pls[4] = make_example(label=[4], v=[math.nan])
    t = CheckTarget(
        "f",
        lambda n: pls[n],
        np.arange(10, dtype=np.uint64) * 100,
        np.full(10, 84, dtype=np.uint64),
        np.arange(10),
    )
    got = [(ti, p.record, str(p.kind)) for ti, p in run_checks([t])]
    assert got == [(0, 4, "nan_or_inf")]


def test_class_text_equal_to_name_or_display_name_is_no_mismatch():
    """A label map with display_name: the record's text may be either name (issue 9)."""
    from tfrview.core.records.labelmap import LabelMap, parse_label_map

    lm = parse_label_map('item { id: 1 name: "person" display_name: "Person" } item { id: 2 name: "car" }')
    assert isinstance(lm, LabelMap) and lm[1] == "Person"

    def labels(text: bytes, i: int = 1):
        f = od(
            [0.1], [0.1], [0.2], [0.2], **{"image/object/class/label": [i], "image/object/class/text": [text]}
        )
        return check_labels(read_features(f), lm, od_dataset=True)

    assert labels(b"person") == [] and labels(b"Person") == []
    assert kinds(labels(b"PERSON ")) == ["label_text_case"] and labels(b"PERSON ")[0].kind.severity == "info"
    assert kinds(labels(b"truck", 2)) == ["label_text_mismatch"]
    # a job gets the map as JSON and keeps every name
    assert LabelMap.from_json(lm.to_json()).accepts(1, "person")


def test_empty_lists_are_missing_values_not_type_mismatches():
    """TFX writes a missing value as an empty bytes_list (issue 9)."""
    s = Schema()
    for i in range(20):
        s.add(decode(make_example(label=[i], score=[0.5])))
    s.add(decode(make_example(label=[1], score=[])))  # an empty int64 list where floats live
    got = kinds(check_against_schema(decode(make_example(label=[1], score=[])), s))
    assert got == ["missing_feature"]  # a missing value (a note), not a type mismatch


def test_image_size_stored_as_floats_is_a_schema_error():
    from tfrview.core.analysis.checks import check_size_types

    got = check_size_types(feats(**{"image/height": [480.0], "image/width": [640.0], "image/channels": [3]}))
    assert kinds(got) == ["image_size_type", "image_size_type"] and got[0].kind.severity == "error"
    assert check_size_types(feats(**{"image/height": [480], "image/width": [640]})) == []
