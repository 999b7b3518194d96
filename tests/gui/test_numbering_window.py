"""Issue 18 in the window: a missing shard is a row of the Problems and the Shards panels."""

from __future__ import annotations

from tests.gui.driver import Driver
from tests.helpers import framed, payloads


def test_a_missing_shard_is_a_problem_and_a_shard_row(qtbot, open_window, tmp_path):
    data, _ = framed(payloads(3))
    for i in (0, 1, 3):
        (tmp_path / f"train-{i:05d}-of-00004").write_bytes(data)
    w = open_window([tmp_path])
    d = Driver(qtbot, w)
    shown = d.problems_shown()
    assert [k for k, _, _ in shown] == ["missing_shard"]
    assert shown[0][2].startswith("train-00002-of-00004 is not there") and shown[0][1] == "00002"
    rows = d.shard_rows()
    assert [r["file"] for r in rows] == [f"train-{i:05d}-of-00004" for i in range(4)]
    assert [r["records"] for r in rows] == ["3", "3", "missing", "3"]
    assert rows[2]["errors"] == "" and w.model.total() == 9
