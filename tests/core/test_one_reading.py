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
