"""Issue 18.6: what the window decides or leaves out is said where a person looks: a label map
beside the data that is not used, in the Problems panel with its reason; a mask of another size
than its image, in the image panel."""

from __future__ import annotations

from tests import segdata
from tests.gui.driver import Driver


def test_a_label_map_not_used_is_said_in_the_problems_panel(qtbot, open_window, tmp_path):
    path = segdata.build(tmp_path / "d", labels=[5, 6, 7, 1])
    w = open_window([path])
    d = Driver(qtbot, w)
    qtbot.waitUntil(lambda: d.problems_notice != "", timeout=20000)
    assert "Not using labels.pbtxt found beside the data" in d.problems_notice
    assert "it names 1 of the 4 class ids the data holds" in d.problems_notice
    assert "(not 5, 6, 7)" in d.problems_notice and "Load Label Map" in d.problems_notice
    assert w.problems_dock.isVisible()
    d.wait_analysed()
    assert not [p for p in d.problems_shown() if p[0] == "mask_class_not_in_map"]  # no map, no such finding
    assert w.set_label_map(tmp_path / "d" / "labels.pbtxt")  # the person's choice: used, and the note goes
    assert d.problems_notice == ""


def test_a_mask_of_another_size_says_it_is_not_drawn(qtbot, open_window, tmp_path):
    w = open_window([segdata.build(tmp_path / "d")])
    panel = w.image_panel
    w.select_record(segdata.SMALL)
    qtbot.waitUntil(
        lambda: panel.current is not None and panel.current.number == segdata.SMALL, timeout=10000
    )
    assert panel.view.mask is None
    assert "mask 100×80 differs from the image 200×160: not drawn" in panel.facts.text()
    w.select_record(0)  # a mask of the image's size: drawn, nothing said
    qtbot.waitUntil(lambda: panel.current is not None and panel.current.number == 0, timeout=10000)
    assert panel.view.mask is not None and "not drawn" not in panel.facts.text()
