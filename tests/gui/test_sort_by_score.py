"""The gallery's Sort by an image quality score (issue 21, item 3): the scores come from the
analysis's stored facts by a job, the record table sorts by them as array operations and the
gallery follows; records with no image come last."""

from __future__ import annotations

import pytest

from tests.gui.driver import Driver
from tests.helpers import copies_split
from tfrview.core.analysis import analyze


@pytest.mark.slow  # an analysis and two scores jobs' processes: ~5 s on 2 busy cores
def test_the_gallery_sorts_by_blur_both_ways(qtbot, open_window, tmp_path):
    paths = copies_split(tmp_path / "split")
    blur = analyze(paths, deep=True, jobs=1).facts().column("blur").to_pylist()
    w = open_window(paths)
    d = Driver(qtbot, w)
    d.wait_analysed()
    assert [w.sort_box.itemText(i) for i in range(w.sort_box.count())][:4] == [
        "record order",
        "file",
        "split",
        "offset",
    ]
    up = d.sort_by_choice("blur")
    assert [blur[n] for n in up] == sorted(blur) and d.table_records()[0][0] == up[0]
    g = w.gallery_model
    assert g.data(g.index(0, 0)).startswith(f"#{up[0]} · blur {blur[up[0]]:.3g}")  # why it stands first
    down = d.sort_by_choice("blur", descending=True)
    assert [blur[n] for n in down] == sorted(blur, reverse=True)
    assert w.table.horizontalHeader().sortIndicatorSection() == -1  # no column says this order
    d.sort_by("size")  # a click on the header: the box says it
    assert w.sorting.chosen == "size"
    assert d.sort_by_choice("#") == list(range(7))
    assert g.data(g.index(0, 0)).startswith("#0") and "blur" not in g.data(g.index(0, 0))


@pytest.mark.slow  # an analysis and a scores job's process: ~3 s on 2 busy cores
def test_a_dataset_without_images_keeps_its_order_and_says_why(qtbot, open_window, tmp_path):
    from tfrview.core.output.writer import write_records
    from tfrview.demo import _example

    path = tmp_path / "plain.tfrecord"
    write_records(path, [_example(label=k).SerializeToString() for k in range(5)])
    w = open_window([path])
    d = Driver(qtbot, w)
    d.wait_analysed()
    said: list[str] = []
    w.sorting.said.connect(said.append)
    w.sorting.sort_by("blur")
    qtbot.waitUntil(lambda: not w.sorting.running, timeout=60000)
    assert said[-1] == "no record has a blur score: no image was decoded"
    assert w.sorting.chosen == "#" and w.model.sort_key is None and d.shown_records() == list(range(5))
