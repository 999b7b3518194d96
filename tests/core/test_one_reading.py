"""Issue 20 item 1: nothing but records/reading.py decides what a record means, so the drawing,
the row text and the fact table give one answer for one record."""

from __future__ import annotations

import numpy as np

from tfrview.core.analysis.checks import look_and_check
from tfrview.core.records.feature import FLOAT_LIST, Feature
from tfrview.core.records.overlays import compute_overlay
from tfrview.core.records.payload import Payload
from tfrview.core.records.reading import read_features
from tfrview.core.records.summary import summarize_payload


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
    text = summarize_payload(Payload("example", feats))
    assert "2 boxes" in text and "3 boxes" not in text
    _, look = look_and_check(Payload("example", feats), (0, 0), None, None, None)
    assert look.boxes == 2  # what the filter's `boxes` reads: the count that is drawn
