"""A record of a million boxes (issue 26.6): the overlay builds the first MAX_BOXES_DRAWN boxes and
says the rest; checks, summaries and class counts see every box by array operations."""

from __future__ import annotations

import tracemalloc

import numpy as np

from tfrview.core.analysis.checks import check_boxes, check_labels
from tfrview.core.analysis.datasummary import DatasetSummary
from tfrview.core.limits import MAX_BOXES_DRAWN
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST, Feature
from tfrview.core.records.labelmap import LabelMap, class_ids
from tfrview.core.records.overlays import compute_overlay
from tfrview.core.records.payload import Payload
from tfrview.core.records.reading import read_features
from tfrview.core.records.rowtext import payload_row_text
from tfrview.core.records.thumbs import scale_overlay

N = 1_000_000


def _features(n: int = N) -> dict[str, Feature]:
    """n boxes of 0.05 x 0.05 at random places, class 1 or 2; box 7 is inverted, box 9 of zero area,
    box 11 runs past the right edge; box 13's class text disagrees with the label map."""
    rng = np.random.default_rng(1)
    x0 = (rng.random(n) * 0.9).astype(np.float32)
    y0 = (rng.random(n) * 0.9).astype(np.float32)
    x1, y1 = x0 + np.float32(0.05), y0 + np.float32(0.05)
    x0[7], x1[7] = 0.5, 0.4
    x1[9] = x0[9]
    x1[11] = 1.5
    ids = (np.arange(n) % 2 + 1).astype(np.int64)
    texts = [b"cat", b"dog"] * (n // 2)
    texts[13] = b"Dog "
    p = "image/object/"
    return {
        p + "bbox/xmin": Feature(FLOAT_LIST, x0),
        p + "bbox/ymin": Feature(FLOAT_LIST, y0),
        p + "bbox/xmax": Feature(FLOAT_LIST, x1),
        p + "bbox/ymax": Feature(FLOAT_LIST, y1),
        p + "class/label": Feature(INT64_LIST, ids),
        p + "class/text": Feature(BYTES_LIST, texts),
    }


def test_the_overlay_builds_the_first_boxes_and_says_the_rest():
    feats = _features()
    tracemalloc.start()
    ov = compute_overlay(feats, 640, 480, {1: "cat", 2: "dog"})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(ov.boxes) == MAX_BOXES_DRAWN and ov.count == N and ov.total == N
    assert ov.limit == (
        f"{N:,} boxes, over the limit of {MAX_BOXES_DRAWN:,}; the first {MAX_BOXES_DRAWN:,} are drawn "
        "(limits.MAX_BOXES_DRAWN)"
    )
    assert ov.limit in ov.notes
    b = ov.boxes[3]
    xs = feats["image/object/bbox/xmin"].values
    assert (b.index, b.class_id, b.name) == (3, 2, "dog") and b.x0 == float(xs[3]) * 640
    # a Box and four floats a box cost ~200 MB for a million; the arrays of the corners cost ~40 MB
    assert peak < 100 << 20, f"compute_overlay peaked at {peak / 2**20:.0f} MB of Python allocations"
    small = scale_overlay(ov, 0.25)  # the gallery's thumbnail keeps the count and the limit
    assert small.count == N and small.limit == ov.limit and small.boxes[3].x0 == b.x0 * 0.25


def test_checks_and_summaries_count_every_box_without_an_object_a_box():
    feats = _features()
    r = read_features(feats)
    found = {f.kind: f.message for f in check_boxes(r, (640, 480))}
    assert found["box_inverted"].startswith("1 box(es) with xmin > xmax or ymin > ymax, e.g. box 7:")
    assert found["box_zero_area"] == "1 box(es) of zero area, e.g. box 9"
    assert found["box_out_of_bounds"].startswith("1 box(es) outside [0, 1], e.g. box 11:")
    labels = {f.kind: (f.message, f.detail) for f in check_labels(r, LabelMap({1: "cat", 2: "dog"}), True)}
    assert labels == {
        "label_text_case": (  # the message groups; the detail quotes the data (issue 18.5)
            "image/object/class/text differs from the label map's name (only case or spacing differ)",
            "class text 'Dog ' for id 2, which the label map names 'dog'",
        )
    }
    labels = {f.kind: (f.message, f.detail) for f in check_labels(r, LabelMap({1: "cat"}), True)}
    assert labels["label_not_in_map"] == ("image/object/class/label ids not in the label map", "[2]")
    assert sorted(class_ids(feats)) == [1, 2]
    p = Payload("example", feats)
    assert "1000000 boxes  ·  cat×500000, dog×499999, Dog " in payload_row_text(p)
    s = DatasetSummary()
    s.add(p)
    assert s.box_classes == {"cat": N // 2, "dog": N // 2 - 1, "Dog ": 1}
    assert s.class_keys == {"cat": "1", "dog": "2", "Dog ": "2"}
