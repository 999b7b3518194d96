"""File > Load Schema (issue 12): records of a custom protobuf shown in the tree with field names."""

from __future__ import annotations

from tests.cli.test_schema import _descriptor_set
from tfrview.core.output.writer import write_records


def test_the_tree_shows_a_custom_message_with_field_names(qtbot, open_window, tmp_path):
    from tfrview.core.records.schema import load_schema

    desc = _descriptor_set(tmp_path / "frame.desc")
    Frame = load_schema(desc, "acme.Frame").cls
    path = tmp_path / "frames.tfrecord"
    write_records(path, [Frame(name=f"frame {i}", cameras=[Frame.Camera(id="FRONT")]).SerializeToString()
                         for i in range(3)])  # fmt: skip
    w = open_window([path])
    assert w.set_schema(desc, "acme.Frame")
    w.select_record(1)

    def top():
        item = w.tree.topLevelItem(0)
        return item.text(0) if item is not None else ""

    qtbot.waitUntil(lambda: top() == "acme.Frame", timeout=10000)
    root = w.tree.topLevelItem(0)
    fields = {root.child(i).text(0): root.child(i) for i in range(root.childCount())}
    assert fields["name"].text(3) == "frame 1"
    assert fields["cameras"].child(0).child(0).text(0) == "id" and fields["cameras"].child(0).child(0).text(3) == "FRONT"
