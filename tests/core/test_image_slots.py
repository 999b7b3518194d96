"""An image key that holds no image (issue 12): planted cases found, clean records left alone."""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image

from tfrview.core.analysis.checks import check_record
from tfrview.core.problems import ProblemKind
from tfrview.core.records.payload import decode
from tfrview.demo import _example


def _jpeg(w=64, h=48) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((h, w, 3), 128, np.uint8)).save(buf, "JPEG")
    return buf.getvalue()


def _png(w=64, h=48) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.zeros((h, w), np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def _od(encoded: bytes, fmt: str = "jpeg", **more) -> bytes:
    feats = {
        "image/encoded": encoded,
        "image/format": fmt,
        "image/height": 48,
        "image/width": 64,
        "image/object/bbox/xmin": [0.1],
        "image/object/bbox/xmax": [0.5],
        "image/object/bbox/ymin": [0.1],
        "image/object/bbox/ymax": [0.5],
        "image/object/class/label": [1],
        **more,
    }
    return _example(**feats).SerializeToString()


def _kinds(data: bytes) -> list[tuple[str, str]]:
    found = check_record(decode(data), (0, 0), None, None, None)
    return [
        (str(f.kind), f"{f.message}: {f.detail}" if f.detail else f.message)
        for f in found
        if f.kind in (ProblemKind.IMAGE_NOT_IMAGE, ProblemKind.IMAGE_FORMAT_MISMATCH)
    ]


PLANTED = {
    "empty": (_od(b""), "image_not_an_image", "is empty (0 bytes)"),
    "file name": (
        _od(b"img_001.jpg"),
        "image_not_an_image",
        "holds a text (a file name?), not an image: the text 'img_001.jpg'",
    ),
    "random bytes": (
        _od(random.Random(1).randbytes(2000)),
        "image_not_an_image",
        "no image format starts with, not an image: 2,000 bytes",
    ),
    "png said jpeg": (_od(_png()), "image_format_mismatch", "holds PNG bytes but image/format says jpeg"),
}


def test_every_planted_image_that_is_not_one_is_found_and_said_plainly():
    for name, (data, kind, words) in PLANTED.items():
        got = _kinds(data)
        assert len(got) == 1 and got[0][0] == kind and words in got[0][1], (name, got)
        assert "object at 0x" not in got[0][1]


def test_no_false_alarm_on_images_and_on_keys_that_hold_pixels():
    assert _kinds(_od(_jpeg())) == []
    assert _kinds(_od(_png(), fmt="png")) == []
    assert _kinds(_od(_jpeg(), fmt="JPG")) == []
    raw = np.zeros((48, 64, 3), np.uint8).tobytes()  # raw pixels, said so or sized so
    assert _kinds(_od(raw, fmt="raw")) == []
    assert _kinds(_od(raw, fmt="")) == []
    # keys that merely end in "encoded", outside any image convention: not judged
    assert _kinds(_example(**{"text/encoded": b"hello", "label": 1}).SerializeToString()) == []


def test_the_demo_and_the_raccoon_file_raise_no_such_finding():
    import tempfile
    from pathlib import Path

    from tests.helpers import RACCOON
    from tfrview.core.analysis import analyze
    from tfrview.demo import build_demo

    with tempfile.TemporaryDirectory() as d:
        paths = [str(p) for p in build_demo(Path(d) / "demo")] + [str(RACCOON)]
        a = analyze(paths, deep=True, jobs=1)
        kinds = {str(p.kind) for fi in range(len(paths)) for p in a.problems(fi)}
    assert "image_not_an_image" not in kinds and "image_format_mismatch" not in kinds


def _mask_png(w: int, h: int, values) -> bytes:
    arr = np.zeros((h, w), np.uint8)
    for i, v in enumerate(values):
        arr[i % h, (i * 3) % w] = v
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, "PNG")
    return buf.getvalue()


def _mask_kinds(data: bytes, label_map=None) -> list[tuple[str, str]]:
    found = check_record(decode(data), (0, 0), None, label_map, None)
    return [(str(f.kind), f.message) for f in found if str(f.kind).startswith("mask_")]


def test_planted_mask_problems_are_found_and_clean_masks_pass():
    seg = {"image/segmentation/class/format": "png"}
    # DeepLab: a mask of the image's size with known classes is clean
    clean = _od(_jpeg(), **seg, **{"image/segmentation/class/encoded": _mask_png(64, 48, [1, 1, 255])})
    assert _mask_kinds(clean, {1: "cat"}) == []
    small = _od(_jpeg(), **seg, **{"image/segmentation/class/encoded": _mask_png(32, 24, [1])})
    assert _mask_kinds(small) == [
        ("mask_size_mismatch", "image/segmentation/class/encoded is 32×24 but the image is 64×48")
    ]
    unknown = _od(_jpeg(), **seg, **{"image/segmentation/class/encoded": _mask_png(64, 48, [1, 7, 9])})
    assert _mask_kinds(unknown, {1: "cat"}) == [
        (
            "mask_class_not_in_map",
            "image/segmentation/class/encoded holds class ids the label map does not name: [7, 9]",
        )
    ]
    # OD API instance masks: one PNG per box
    one = _mask_png(64, 48, [1, 1, 1])
    assert _mask_kinds(_od(_jpeg(), **{"image/object/mask": [one]})) == []
    kinds = dict(_mask_kinds(_od(_jpeg(), **{"image/object/mask": [one, _mask_png(64, 48, []), one]})))
    assert kinds == {
        "mask_count_mismatch": "image/object/mask has 3 masks for 1 boxes",
        "mask_empty": "1 instance mask(s) with no pixel set, e.g. mask 1",
    }


def test_a_segmentation_mask_is_coloured_with_the_class_palette():
    from tfrview.core.records.masks import mask_overlay
    from tfrview.core.records.palette import palette_rgb

    arr = np.zeros((48, 64), np.uint8)
    arr[:10, :10] = 1
    arr[20:30, :] = 7
    arr[40:, :] = 255  # ignored, like background
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, "PNG")
    p = decode(
        _od(
            _jpeg(),
            **{"image/segmentation/class/encoded": buf.getvalue(), "image/segmentation/class/format": "png"},
        )
    )
    m = mask_overlay(p.features, 64, 48)
    assert m.key == "image/segmentation/class/encoded" and m.classes == ((7, 640), (1, 100))
    assert (
        tuple(m.rgba[0, 0]) == (*palette_rgb("1"), 255) and m.rgba[45, 5, 3] == 0 and m.rgba[15, 40, 3] == 0
    )
    assert mask_overlay(p.features, 32, 24) is None  # a mask of another size is not drawn (the checks say so)


def test_keypoints_are_placed_per_box_in_pixels_and_unplaced_ones_left_out():
    from tfrview.core.records.overlays import compute_overlay

    feats = decode(
        _od(
            _jpeg(),
            **{
                "image/object/bbox/xmin": [0.1, 0.5],
                "image/object/bbox/xmax": [0.4, 0.9],
                "image/object/bbox/ymin": [0.1, 0.5],
                "image/object/bbox/ymax": [0.4, 0.9],
                "image/object/class/label": [1, 2],
                "image/object/keypoint/x": [0.2, 0.3, 0.6, -1.0],
                "image/object/keypoint/y": [0.2, 0.25, 0.7, -1.0],
            },
        )
    ).features
    ov = compute_overlay(feats, 64, 48)
    assert len(ov.boxes) == 2
    got = [(round(x, 3), round(y, 3), b) for x, y, b in ov.keypoints]
    assert got == [(12.8, 9.6, 0), (19.2, 12.0, 0), (38.4, 33.6, 1)]  # the last was never placed (-1)


def test_a_key_that_holds_images_in_most_records_is_an_image_key(tmp_path):
    """No convention names `photo` an image key; the data does: 30 records hold a PNG there, so the
    record holding a file name, the empty one and the noise are flagged; a text key is not."""
    import io
    import random

    from PIL import Image

    from tfrview.core.analysis import analyze
    from tfrview.core.output.writer import write_records
    from tfrview.demo import _example

    buf = io.BytesIO()
    Image.new("RGB", (4, 3), "red").save(buf, "PNG")
    png = buf.getvalue()
    bad = {31: b"img_031.png", 32: b"", 33: random.Random(1).randbytes(2000)}
    recs = [_example(photo=bad.get(i, png), caption=f"caption {i}").SerializeToString() for i in range(34)]
    path = tmp_path / "photos.tfrecord"
    write_records(path, recs)
    a = analyze([str(path)], deep=True, jobs=1)
    found = {p.record: p.text for p in a.problems(0) if p.kind == "image_not_an_image"}
    assert sorted(found) == [31, 32, 33]
    assert "holds a text (a file name?)" in found[31] and found[31].endswith(": the text 'img_031.png'")
    assert "is empty" in found[32]
    assert "holds an image in 91% of the 34 records" in found[33]
    again = analyze([str(path)], deep=True, jobs=1)  # from the cache: the same findings
    assert {p.record for p in again.problems(0) if p.kind == "image_not_an_image"} == {31, 32, 33}


def test_instance_masks_take_their_boxs_class_colour_and_exports_draw_masks_and_keypoints(tmp_path):
    from tfrview.core.output.export import export_images
    from tfrview.core.records.drawing import MASK_OPACITY
    from tfrview.core.records.masks import instance_colours, mask_overlay
    from tfrview.core.records.overlays import compute_overlay
    from tfrview.core.records.palette import palette_rgb

    def block(y0, y1, x0, x1) -> bytes:
        a = np.zeros((48, 64), np.uint8)
        a[y0:y1, x0:x1] = 255
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, "PNG")
        return buf.getvalue()

    data = _od(
        _jpeg(),
        **{
            "image/object/bbox/xmin": [0.0, 0.5],
            "image/object/bbox/xmax": [0.4, 0.9],
            "image/object/bbox/ymin": [0.0, 0.5],
            "image/object/bbox/ymax": [0.4, 0.9],
            "image/object/class/label": [3, 3],  # two instances of one class: one colour
            "image/object/mask": [block(0, 10, 0, 10), block(30, 40, 40, 50)],
            "image/object/keypoint/x": [0.95, 0.95],
            "image/object/keypoint/y": [0.05, 0.95],
        },
    )
    feats = decode(data).features
    ov = compute_overlay(feats, 64, 48)
    assert instance_colours(ov) == ["3", "3"]
    m = mask_overlay(feats, 64, 48, instance_colours(ov))
    assert tuple(m.rgba[5, 5]) == tuple(m.rgba[35, 45]) == (*palette_rgb("3"), 255)
    res = export_images([(0, data)], tmp_path / "out")
    assert res.written == 3  # the image and its two instance masks (drawn as they are: no mask over a mask)
    im = np.asarray(Image.open(tmp_path / "out" / "record-0-0.png").convert("RGB"), dtype=np.int64)
    want = (1 - MASK_OPACITY) * 128 + MASK_OPACITY * np.array(palette_rgb("3"))
    assert np.abs(im[35, 45] - want).max() <= 6  # the instance mask blended over the grey image
    assert np.abs(im[20, 30] - 128).max() <= 6  # no mask, no box there: the image as it was
    assert np.abs(im[2, 61] - np.array(palette_rgb("3"))).max() <= 40  # a keypoint of box 0 (x 0.95, y 0.05)


def test_dense_float_instance_masks_are_drawn_too():
    from tfrview.core.records.masks import mask_overlay
    from tfrview.core.records.palette import palette_rgb

    dense = np.zeros((2, 48, 64), np.float32)
    dense[0, :5, :5] = 1.0
    dense[1, 40:, 60:] = 1.0
    feats = decode(_od(_jpeg(), **{"image/object/mask": dense.ravel().tolist()})).features
    m = mask_overlay(feats, 64, 48, ["5", "6"])
    assert m.classes == ((2, 32), (1, 25))  # most pixels first
    assert tuple(m.rgba[1, 1]) == (*palette_rgb("5"), 255) and tuple(m.rgba[45, 62]) == (
        *palette_rgb("6"),
        255,
    )
    assert m.rgba[20, 20, 3] == 0
