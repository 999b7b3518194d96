"""File › Rewrite…: the job writes a verified new dataset, "Open the result" asks for the new
folder, a failure is one line with nothing left behind, and a mistake is said in the dialog."""

from __future__ import annotations

import pytest

from tests.gui.driver import Driver
from tests.helpers import payloads_of
from tfrview.core.procs.messages import Failed, Rewrote
from tfrview.core.procs.requests import RewriteRequest
from tfrview.core.rewrite.outdir import PARTIAL
from tfrview.gui.controllers.rewrite import RewriteDialog, rewrote_text


@pytest.mark.slow  # a job process, a verification and a read-back: ~5-8 s on 2 loaded cores
def test_rewrite_from_the_window_and_open_the_result(qtbot, open_window, damaged_file, tmp_path):
    w = open_window([damaged_file])
    d = Driver(qtbot, w)
    out = tmp_path / "new"
    end = d.rewrite(RewriteRequest(paths=(str(damaged_file),), out=str(out), shards=2, index=True))
    assert isinstance(end, Rewrote) and (end.records_in, end.kept, end.dropped["damaged"]) == (30, 29, 1)
    assert sum(len(payloads_of(out / name)) for name, *_ in end.shards) == 29
    assert "Wrote 29 of 30 records" in rewrote_text(end) and "1 damaged" in rewrote_text(end)
    asked = []
    w.open_requested.connect(asked.append)
    d.open_rewritten()
    assert asked == [[str(out)]]


@pytest.mark.slow  # a job process: ~5 s on 2 loaded cores
def test_a_failure_is_one_line_and_leaves_nothing(qtbot, open_window, damaged_file, tmp_path):
    w = open_window([damaged_file])
    out = tmp_path / "x"
    end = Driver(qtbot, w).rewrite(
        RewriteRequest(paths=(str(damaged_file),), out=str(out), map_classes="3=1")
    )
    assert isinstance(end, Failed) and "hold no class keys" in end.message and "\n" not in end.message
    assert not out.exists() and not list(tmp_path.glob(f".*{PARTIAL}"))


def test_a_mistake_is_said_in_the_dialog(qtbot, tmp_path):
    dlg = RewriteDialog(None, str(tmp_path))
    qtbot.addWidget(dlg)
    assert dlg.mistake() == "Name an output folder."
    dlg.out.setText(str(tmp_path / "o"))
    dlg.split.setText("train=0.5,val=0.2")
    assert "add up to 0.7" in dlg.mistake()
    dlg.split.setText("train=0.5,val=0.5")
    dlg.map_classes.setText("3")
    assert "is not OLD=NEW" in dlg.mistake()
    dlg.map_classes.setText("")
    assert dlg.mistake() == ""
    req = dlg.request(("a.tfrecord",), None)
    assert req.split == "train=0.5,val=0.5" and req.out == str(tmp_path / "o") and req.shard_size == "256MB"
    assert (req.drop_tags, req.keep_tags) == (("drop",), ())  # what D marked is left out unless unticked
    dlg.keep_tagged.setChecked(True)
    assert dlg.request(("a.tfrecord",), None).keep_tags == ("keep",)
    dlg.split.setText("")
    dlg.group_by.setCurrentText("source_id")
    assert "needs a split" in dlg.mistake()
