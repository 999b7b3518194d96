"""Box labels never overlap (issue 18, 8.8): `drawing.place_labels`, the one placement the window
and the exports draw labels by."""

from __future__ import annotations

import numpy as np

from tfrview.core.records.drawing import place_labels


def _overlaps(places: np.ndarray, widths, h: float) -> list[tuple[int, int]]:
    out = []
    shown = [i for i in range(len(places)) if not np.isnan(places[i, 0])]
    for a in shown:
        for b in shown:
            if a < b:
                (ax, ay), (bx, by) = places[a], places[b]
                if ax < bx + widths[b] and bx < ax + widths[a] and ay < by + h and by < ay + h:
                    out.append((a, b))
    return out


def test_a_label_goes_above_its_box_and_inside_its_top_edge_when_that_slot_is_taken():
    boxes = np.array([[10, 50, 110, 150], [12, 52, 100, 90]], dtype=float)  # two boxes, nearly one corner
    places = place_labels(boxes, np.array([60.0, 60.0]), 14.0)
    assert places[0].tolist() == [10.0, 36.0]  # above the first box
    assert places[1].tolist() == [12.0, 52.0]  # the slot above is taken: inside the top edge
    assert _overlaps(places, [60, 60], 14.0) == []


def test_a_box_at_the_top_of_the_image_has_its_label_inside():
    places = place_labels(np.array([[5, 3, 80, 60]], dtype=float), np.array([40.0]), 14.0)
    assert places[0].tolist() == [5.0, 3.0]


def test_labels_with_no_free_slot_are_left_out_and_none_overlap():
    rng = np.random.default_rng(7)
    xy = rng.uniform(0, 200, size=(150, 2))
    boxes = np.hstack([xy, xy + rng.uniform(10, 40, size=(150, 2))])
    widths = rng.uniform(30, 70, size=150)
    places = place_labels(boxes, widths, 14.0)
    assert _overlaps(places, widths, 14.0) == []
    left_out = np.isnan(places[:, 0])
    assert 0 < left_out.sum() < 150  # crowded: some go, many stay
    shown = ~left_out  # each label shown touches its box: x at its left edge, y at one of its edges
    assert np.all(places[shown, 0] == np.minimum(boxes[shown, 0], boxes[shown, 2]))
    y0, y1 = boxes[shown, 1], boxes[shown, 3]
    y = places[shown, 1]
    assert np.all(np.isclose(y, y0 - 14) | np.isclose(y, y0) | np.isclose(y, y1) | np.isclose(y, y1 - 14))


def test_no_boxes_no_labels():
    assert place_labels(np.empty((0, 4)), np.empty(0), 14.0).shape == (0, 2)
