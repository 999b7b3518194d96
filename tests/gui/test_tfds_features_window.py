"""A TFDS dataset's features.json in the window (issue 22): boxes of its BBoxFeature drawn with their ClassLabel's
names, the record label and the row summary named, the feature tree saying what features.json
declares of each key (a Tensor decoded), and a class outside the allow-list shown as unknown."""

from __future__ import annotations

import sys

from tests import tfdsdata as td
from tests.core.test_tfds_features import _plant
from tests.gui.test_main_window import column, wait_view


def _tops(w) -> dict:
    return {w.tree.topLevelItem(i).text(0): w.tree.topLevelItem(i) for i in range(w.tree.topLevelItemCount())}


def test_a_tfds_dataset_is_shown_by_its_features(qtbot, open_window, tmp_path):
    d = td.detection(tmp_path / "v")
    w = open_window([next(d.glob("*.tfrecord-*"))])
    assert column(qtbot, w, "summary")[1] == "JPEG  ·  label: 1 (dog)  ·  2 boxes  ·  person, car"
    w.select_record(1)
    v = wait_view(qtbot, w, 1)
    assert v.overlay.caption == "label: 1 (dog)"
    assert [b.label for b in v.overlay.boxes] == ["car", "person"]
    tops = _tops(w)
    assert tops["TFDS features"].text(3) == "8 keys declared by features.json (read as data)"
    assert tops["label"].text(3) == "1 (dog)"
    depth = tops["depth"]
    assert [depth.child(i).text(3) for i in range(2)] == [
        "Tensor float32 [2x3] zlib",
        "float32[2, 3] 1, 1.25, 1.5, 1.75, 2, 2.25",
    ]
    bbox = tops["objects/bbox"]
    bbox.setExpanded(True)  # its values follow its TFDS row
    assert bbox.child(0).text(0) == "TFDS" and bbox.childCount() == 9


def test_an_unknown_class_is_shown_and_never_imported(qtbot, open_window, tmp_path, monkeypatch):
    d, evil_dir, marker = _plant(tmp_path)
    monkeypatch.syspath_prepend(str(evil_dir))
    w = open_window([next(d.glob("*.tfrecord-*"))])
    w.select_record(0)
    wait_view(qtbot, w, 0)
    root = _tops(w)["TFDS features"]
    assert root.text(3).endswith("; 1 of an unknown class, never imported")
    assert root.child(0).text(0) == "payload"
    assert "unknown feature class evil_module.Evil" in root.child(0).text(3)
    assert not marker.exists() and "evil_module" not in sys.modules


def test_rlds_steps_are_a_filmstrip(qtbot, open_window, tmp_path):
    d = td.rlds(tmp_path / "r", steps=5)
    w = open_window([next(d.glob("*.tfrecord-*"))])
    w.select_record(0)
    v = wait_view(qtbot, w, 0)
    assert [f[0] for f in v.frames] == [0, 1, 2, 3, 4]
    assert all(f[1] is not None and f[1].shape[:2] == (64, 64) for f in v.frames)
    assert _tops(w)["steps/action"].child(1).text(3).startswith("float32[5, 7] 0, 0.1, 0.2")
