"""The window on one record of a million boxes (issue 26.6): the record shows within a bound, the
first MAX_BOXES_DRAWN boxes are drawn and the limit is said in the image panel and the tree."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.core.test_payload import make_example
from tests.gui.driver import Driver
from tfrview.core.limits import MAX_BOX_LABELS_DRAWN, MAX_BOXES_DRAWN
from tfrview.core.output.writer import write_records

N = 1_000_000


def _record() -> bytes:
    """A 64x48 PNG and N OD API boxes (a ~17 MB Example), class 1 or 2."""
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 30)).save(buf, "PNG")
    rng = np.random.default_rng(2)
    x0, y0 = (rng.random(N) * 0.9).astype(np.float32), (rng.random(N) * 0.9).astype(np.float32)
    return make_example(
        **{
            "image/encoded": [buf.getvalue()],
            "image/format": [b"png"],
            "image/object/bbox/xmin": x0.tolist(),
            "image/object/bbox/ymin": y0.tolist(),
            "image/object/bbox/xmax": (x0 + 0.05).tolist(),
            "image/object/bbox/ymax": (y0 + 0.05).tolist(),
            "image/object/class/label": (np.arange(N) % 2 + 1).tolist(),
        }
    )


def test_a_record_of_a_million_boxes_shows_its_first_boxes_and_says_the_limit(qtbot, open_window, tmp_path):
    path = tmp_path / "boxes.tfrecord"
    write_records(path, [_record()])
    w = open_window([path])
    d = Driver(qtbot, w)
    w.select_record(0)
    qtbot.waitUntil(
        lambda: w.image_panel.current is not None and w.image_panel.current.number == 0, timeout=30000
    )
    ov = w.image_panel.current.overlay
    assert len(ov.boxes) == MAX_BOXES_DRAWN and ov.count == N
    limit = f"{N:,} boxes, over the limit of {MAX_BOXES_DRAWN:,}; the first {MAX_BOXES_DRAWN:,} are drawn"
    facts = w.image_panel.facts.text()
    assert f"{N:,} boxes: normalized xmin/ymin/xmax/ymax" in facts and f"⚠ {limit}" in facts
    assert f"labels on the first {MAX_BOX_LABELS_DRAWN} (limits.MAX_BOX_LABELS_DRAWN)" in facts
    tree = w.tree
    top = [
        (tree.topLevelItem(i).text(0), tree.topLevelItem(i).text(3)) for i in range(tree.topLevelItemCount())
    ]
    assert ("⚠ limit", f"boxes: {limit} (limits.MAX_BOXES_DRAWN)") in top
    c = w.model.columns.index("summary")
    qtbot.waitUntil(lambda: f"{N} boxes" in str(w.model.data(w.model.index(0, c))), timeout=30000)
    assert d.wait_analysed(120000).phase.name == "DONE"
