"""A record read through a loaded schema in the window (issue 25.5): a packed list past the limit
keeps its first values and the limit is a row at the top of the tree, as an Example's is."""

from __future__ import annotations

from tests.cli.test_schema_limits import _field, _points_schema
from tfrview.core.limits import MAX_LIST_VALUES
from tfrview.core.output.writer import write_records


def test_a_cut_list_of_a_custom_record_is_a_limit_row(qtbot, open_window, tmp_path):
    desc = _points_schema(tmp_path / "cloud.desc")
    n = MAX_LIST_VALUES + 250_000
    data = tmp_path / "cloud.tfrecord"
    write_records(data, [_field(1, b"cloud") + _field(2, b"\x05" * n)])
    w = open_window([data])
    assert w.set_schema(desc, "acme.Cloud")
    w.select_record(0)
    tree = w.tree
    qtbot.waitUntil(
        lambda: tree.topLevelItemCount() > 1 and tree.topLevelItem(1).text(0) == "acme.Cloud", timeout=30000
    )
    limit = tree.topLevelItem(0)
    assert (limit.text(0), limit.text(3)) == (
        "⚠ limit",
        f"points: {n:,} values, over the limit of {MAX_LIST_VALUES:,}; the first {MAX_LIST_VALUES:,} are decoded (limits.MAX_LIST_VALUES)",
    )
    root = tree.topLevelItem(1)
    points = next(root.child(i) for i in range(root.childCount()) if root.child(i).text(0) == "points")
    assert (points.text(1), points.text(2)) == ("list", str(MAX_LIST_VALUES))
