"""A loaded schema in the window (issue 12): the table's summaries and the tree by field name,
numbers as numbers."""

from __future__ import annotations

from tests.cli.test_schema import _descriptor_set
from tfrview.core.output.writer import write_records


def test_the_table_summarises_custom_records_by_field_name(qtbot, open_window, tmp_path):
    from tfrview.core.records.protoschema import load_schema

    desc = _descriptor_set(tmp_path / "frame.desc")
    Frame = load_schema(desc, "acme.Frame").cls
    data = tmp_path / "frames.tfrecord"
    write_records(
        data, [Frame(name=f"frame {i}", timestamp_micros=7 + i).SerializeToString() for i in range(3)]
    )
    w = open_window([data])
    assert w.set_schema(desc, "acme.Frame")
    col = w.model.columns.index("summary")
    qtbot.waitUntil(
        lambda: w.model.data(w.model.index(1, col)) == "Frame: name='frame 1', timestamp_micros=8",
        timeout=10000,
    )
    w.select_record(1)

    def field(name: str):
        top = w.tree.topLevelItem(0) if w.tree.topLevelItemCount() else None
        if top is None or top.text(0) != "acme.Frame":
            return None
        return next((top.child(i) for i in range(top.childCount()) if top.child(i).text(0) == name), None)

    # record 0 (selected first as the window opened) reads acme.Frame too: wait for record 1's tree
    qtbot.waitUntil(lambda: field("name") is not None and field("name").text(3) == "frame 1", timeout=10000)
    ts = field("timestamp_micros")
    assert (ts.text(1), ts.text(3)) == ("int", "8")
