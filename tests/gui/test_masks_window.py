"""Segmentation masks drawn over their image (issue 12): colours from the class palette, an opacity
slider, and a legend of the classes in the mask."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tfrview.core.output.writer import write_records
from tfrview.demo import _example


def _png(arr) -> bytes:
    b = io.BytesIO()
    Image.fromarray(arr).save(b, "PNG")
    return b.getvalue()


def test_the_mask_is_drawn_over_the_image_with_an_opacity_slider_and_a_legend(qtbot, open_window, tmp_path):
    mask = np.zeros((48, 64), np.uint8)
    mask[5:20, 5:30] = 3
    img = np.full((48, 64, 3), 120, np.uint8)
    path = tmp_path / "seg.tfrecord"
    write_records(
        path,
        [
            _example(
                **{
                    "image/encoded": _png(img),
                    "image/format": "png",
                    "image/segmentation/class/encoded": _png(mask),
                    "image/segmentation/class/format": "png",
                }
            ).SerializeToString()
        ],
    )
    w = open_window([path])
    lm = tmp_path / "labels.pbtxt"
    lm.write_text("item { id: 3 name: 'road' }\n")
    assert w.set_label_map(lm)
    w.select_record(0)
    panel = w.image_panel
    qtbot.waitUntil(lambda: panel.current is not None and panel.view.mask is not None, timeout=10000)
    assert panel.opacity.isVisibleTo(w) and "image/segmentation/class/encoded:" in panel.facts.text()
    qtbot.waitUntil(lambda: "road (100%)" in panel.facts.text(), timeout=10000)  # the label map's name
    panel.opacity.setValue(80)
    assert panel.view.mask_opacity == 0.8
    from tfrview.core.records.palette import palette_rgb

    # class 3's colour
    assert panel.view.mask.pixel(10, 10) & 0xFFFFFF == int("{:02x}{:02x}{:02x}".format(*palette_rgb("3")), 16)
    assert panel.view.mask.pixel(40, 40) >> 24 == 0  # background: transparent
    panel.image_chosen.emit(1)  # showing the mask image itself: no mask drawn over it
    qtbot.waitUntil(lambda: panel.current is not None and panel.current.image_index == 1, timeout=10000)
    assert panel.view.mask is None and not panel.opacity.isVisibleTo(w)
