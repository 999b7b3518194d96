"""The Compare view (issue 21, item 5): two splits of the opened dataset compared in a job process,
drifted features first, the selected feature's two distributions charted, and a click on a bar
of side B shows that side's records behind it in the table."""

from __future__ import annotations

import pytest

from tests.core.test_compare import N, _train, _val
from tests.gui.driver import Driver
from tfrview.core.output.writer import write_records


@pytest.mark.slow  # three job processes (analysis, compare, a bar's records): 11 s on 2 busy cores
def test_compare_two_splits_and_click_a_shifted_bar(qtbot, open_window, tmp_path):
    train = tmp_path / "train-00000-of-00001.tfrecord"
    val = tmp_path / "validation-00000-of-00001.tfrecord"
    write_records(train, [_train(i) for i in range(N)])
    write_records(val, [_val(i) for i in range(N)])
    w = open_window([train, val])
    d = Driver(qtbot, w)
    d.wait_checks()
    rows = d.compare("train", "validation")
    drifted = [k for k, _, shifted in rows if shifted]
    assert set(drifted) == {"only_train", "id", "colour", "score", "weight"}
    assert rows[: len(drifted)] == [r for r in rows if r[2]]  # drifted first
    assert dict((k, words) for k, words, _ in rows)["only_train"] == "only in A"
    assert d.compare_bars("colour") == ["red", "blue"]
    shown = d.click_compare_bar("b", "blue")  # validation's blue records: every fifth
    assert shown == [N + i for i in range(0, N, 5)]
    assert "blue" in d.filter_text and "validation" in d.filter_text
