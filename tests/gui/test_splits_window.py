"""Issue 21.1/21.4: splits in the window. Each file's split from its path in the Shards panel
(sortable, narrowed by the split chooser, a double-click on it filters to that split's records),
shards put in a split by the person (the next analysis merges with it), and the Dataset Summary of
each split."""

import pytest
from PySide6.QtCore import Qt

from tests.gui.driver import Driver
from tfrview.core.output.writer import write_records
from tfrview.core.procs.requests import AnalyzeRequest
from tfrview.demo import _example


def _tfds_like(tmp_path, counts=(("train", 3, 6), ("validation", 1, 4), ("test", 1, 2))):
    """TFDS's names: mnist-train.tfrecord-00000-of-00003 ..."""
    for split, shards, n in counts:
        recs = [_example(label=k % 3, text=f"{split}{k}").SerializeToString() for k in range(n)]
        for i in range(shards):
            write_records(tmp_path / f"mnist-{split}.tfrecord-{i:05d}-of-{shards:05d}", recs)
    return tmp_path


def test_shards_panel_shows_sorts_and_narrows_by_split(qtbot, open_window, tmp_path):
    w = open_window([_tfds_like(tmp_path)])
    d = Driver(qtbot, w)
    ctl = w.shards_panel
    rows = d.shard_rows()
    assert sorted((r["file"], r["split"]) for r in rows) == sorted(
        [(f"mnist-train.tfrecord-{i:05d}-of-00003", "train") for i in range(3)]
        + [
            ("mnist-validation.tfrecord-00000-of-00001", "validation"),
            ("mnist-test.tfrecord-00000-of-00001", "test"),
        ]
    )
    col = ctl.model.columns.index("split")
    w.shards_view.sortByColumn(col, Qt.SortOrder.AscendingOrder)
    assert [r["split"] for r in d.shard_rows()] == ["test", "train", "train", "train", "validation"]
    assert [ctl.chooser.itemText(i) for i in range(ctl.chooser.count())] == [
        "All",
        "test",
        "train",
        "validation",
    ]
    ctl.choose_split("train")
    assert [r["split"] for r in d.shard_rows()] == ["train"] * 3
    assert ctl.dock.windowTitle() == "Shards (3 of 5)"
    ctl.choose_split(None)
    assert len(d.shard_rows()) == 5 and ctl.dock.windowTitle() == "Shards (5)"


@pytest.mark.slow  # a filter job's process: ~3 s
def test_a_double_click_on_a_split_shows_its_records(qtbot, open_window, tmp_path):
    w = open_window([_tfds_like(tmp_path)])
    d = Driver(qtbot, w)
    ctl = w.shards_panel
    d.shard_rows()
    col = ctl.model.columns.index("split")
    m = ctl.model
    row = next(r for r in range(m.rowCount()) if m.split_of(m.file_at(r)) == "validation")
    w.shards_view.doubleClicked.emit(m.index(row, col))
    assert w.filter_edit.text() == 'split == "validation"'
    d.wait_filter()
    qtbot.waitUntil(lambda: w.model.match_count == 4, timeout=20000)
    starts = w.ds.starts()
    fi = m.file_at(row)
    assert [w.model.record_number(r) for r in range(4)] == list(range(int(starts[fi]), int(starts[fi]) + 4))


@pytest.mark.slow  # two analyses: ~5 s
def test_shards_put_in_a_split_are_analysed_with_it_and_each_split_has_a_summary(
    qtbot, open_window, tmp_path
):
    w = open_window([_tfds_like(tmp_path)])
    d = Driver(qtbot, w)
    d.wait_analysed()
    s = w.session
    qtbot.waitUntil(lambda: set(s.split_summaries) == {"train", "validation", "test"}, timeout=20000)
    assert {k: v["records"] for k, v in s.split_summaries.items()} == {
        "train": 18,
        "validation": 4,
        "test": 2,
    }
    panel = w.summary_panel
    assert panel.split_box.isVisibleTo(w) or not w.summary_dock.isVisible()
    panel.split_box.setCurrentIndex(panel.split_box.findData("validation"))
    assert panel.status.text().startswith("split validation: 4 intact records")
    panel.split_box.setCurrentIndex(0)
    assert panel.status.text().startswith("24 intact records")
    # the person puts the test shard in validation: the splits change and the analysis runs again
    ctl = w.shards_panel
    test_file = next(fi for fi, x in enumerate(s.splits) if x == "test")
    ctl.assign_split([test_file], "validation")
    assert s.splits[test_file] == "validation"
    assert [ctl.chooser.itemText(i) for i in range(ctl.chooser.count())] == ["All"] + s.split_names()
    assert "test" not in s.split_names()
    assert s.request(AnalyzeRequest).splits[test_file] == "validation"  # the job merges with it
    d.wait_analysed()
    qtbot.waitUntil(lambda: set(s.split_summaries) == {"train", "validation"}, timeout=20000)
    assert s.split_summaries["validation"]["records"] == 6
    assert panel.split_box.findData("test") == -1


def test_the_plot_panel_offers_each_split_and_the_splits_overlaid(qtbot, open_window, tmp_path):
    w = open_window([_tfds_like(tmp_path)])
    p = w.plots.panel
    assert [p.split_box.itemText(i) for i in range(p.split_box.count())] == [
        "all records",
        "splits overlaid",
        "split test",
        "split train",
        "split validation",
    ]
    assert p.split_choice == (None, False)
    p.choose_split("validation")
    assert p.split_choice == ("validation", False)
    p.choose_split(None, overlaid=True)
    assert p.split_choice == (None, True)
    w.shards_panel.assign_split(list(range(len(w.ds.files))), "all")  # one split: nothing to overlay
    assert [p.split_box.itemText(i) for i in range(p.split_box.count())] == ["all records", "split all"]
    assert p.split_choice == (None, False)
