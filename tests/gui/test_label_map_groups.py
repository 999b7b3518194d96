"""Issue 18.2 in the window: raccoon opened beside another dataset keeps the label map found beside
it (judged by raccoon's class ids only), and the label checks use it for raccoon's records only."""

from __future__ import annotations

import shutil

from tests.gui.driver import Driver
from tests.helpers import DATA, RACCOON
from tfrview.core.output.writer import write_records
from tfrview.demo import _example


def _boxes(cls: int) -> bytes:
    return _example(
        **{
            "image/object/bbox/xmin": [0.1],
            "image/object/bbox/ymin": [0.1],
            "image/object/bbox/xmax": [0.5],
            "image/object/bbox/ymax": [0.5],
            "image/object/class/label": [cls],
            "image/object/class/text": [f"c{cls}"],
        }
    ).SerializeToString()


def test_a_label_map_beside_one_dataset_is_kept_and_used_for_it_alone(qtbot, open_window, tmp_path):
    (tmp_path / "raccoon").mkdir()
    (tmp_path / "other").mkdir()
    raccoon = tmp_path / "raccoon" / RACCOON.name
    shutil.copy(RACCOON, raccoon)
    shutil.copy(DATA / "raccoon_label_map.pbtxt", tmp_path / "raccoon" / "label_map.pbtxt")
    other = tmp_path / "other" / "other.record"
    write_records(other, [_boxes(k) for k in range(2, 40)])  # 38 class ids the raccoon map does not name
    w = open_window([raccoon, other])
    d = Driver(qtbot, w)
    d.wait_checks()
    assert w.label_map == {1: "raccoon"}
    w.problems.flush()
    kinds = {(r.file_no, str(r.problem.kind)) for r in w.problems.rows}
    assert not any(k.startswith("label_") for _, k in kinds), kinds  # no label finding on the other file
