"""File › Export Selection's training formats: the menu lists them, and an export runs as a job
process (never a thread of the window's process) writing what the CLI writes."""

import json

import numpy as np
import pytest

from tests.exportdata import boxes_of, write_od
from tests.gui.test_salvage_export import run_and_wait
from tfrview.core.output.formats import ExportFormat
from tfrview.core.procs.messages import Failed


def test_the_menu_lists_every_format(qtbot, open_window, tmp_path):
    w = open_window([write_od(tmp_path / "d.tfrecord", 3)])
    texts = [a.text() for a in w.action_groups.export.selection if not a.isSeparator()]
    assert [t for t in texts if "…" in t][-5:] == [f"{f.words}…" for f in ExportFormat]
    assert set(w.action_groups.by_name()) >= {f"export_{f.value}" for f in ExportFormat}


@pytest.mark.slow  # a job process's start: ~4 s on the loaded 2-core machine
def test_a_selection_exported_as_coco_in_a_job(qtbot, open_window, tmp_path):
    src = write_od(tmp_path / "train-00000-of-00001.tfrecord", 6)
    w = open_window([src])
    out = tmp_path / "coco"
    res = run_and_wait(qtbot, lambda cb: w.exporting.write_export("coco", [1, 3, 5], out, on_done=cb))
    assert not isinstance(res, Failed) and res.written == 3
    doc = json.loads((out / "annotations" / "instances_train.json").read_text())
    assert [i["id"] for i in doc["images"]] == [1, 3, 5]
    got = np.array([a["bbox"] for a in doc["annotations"] if a["image_id"] == 3])
    b, _ = boxes_of(3)
    px = b * [64, 48, 64, 48]
    assert np.allclose(
        got, np.stack([px[:, 0], px[:, 1], px[:, 2] - px[:, 0], px[:, 3] - px[:, 1]], 1), atol=1e-6
    )
