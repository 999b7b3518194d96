from tests.core.test_payload import make_example
from tfrview.core.output.writer import write_records
from tfrview.core.records.overlays import BoxSpec
from tfrview.core.records.payload import decode


def test_box_keys_dialog_choice_is_remembered_per_layout(qtbot, open_window, tmp_path):
    import io

    from PIL import Image

    from tfrview.gui.dialogs import BoxSpecDialog, remember_spec, remembered_spec

    buf = io.BytesIO()
    Image.new("RGB", (100, 50), (10, 200, 10)).save(buf, "PNG")
    rec = make_example(img=[buf.getvalue()], a=[10.0], b=[5.0], c=[60.0], d=[40.0], who=[b"thing"])
    p = tmp_path / "odd.tfrecord"
    write_records(p, [rec, rec])
    feats = decode(rec).features
    dlg = BoxSpecDialog(feats, None)
    dlg.conv.setCurrentIndex(dlg.conv.findData("pixel_corners"))
    for cb, key in zip(dlg.keys, "abcd", strict=True):
        cb.setCurrentText(key)
    dlg.text.setCurrentText("who")
    spec = dlg.spec()
    assert spec == BoxSpec("pixel_corners", ("a", "b", "c", "d"), "who", None)
    remember_spec(feats, spec)
    assert remembered_spec(feats) == spec
    w = open_window([p])
    w.select_record(1)
    qtbot.waitUntil(
        lambda: bool(
            w.image_panel.current and w.image_panel.current.overlay and w.image_panel.current.overlay.boxes
        ),
        timeout=10000,
    )
    (box,) = w.image_panel.current.overlay.boxes
    assert (box.x0, box.y0, box.x1, box.y1, box.label) == (10, 5, 60, 40, "thing")
    remember_spec(feats, None)
    assert remembered_spec(feats) is None


def test_loading_a_label_map_names_the_classes(qtbot, open_window, tmp_path):
    rec = make_example(label=[2])
    p = tmp_path / "labels.tfrecord"
    write_records(p, [rec])
    lm = tmp_path / "elsewhere" / "map.pbtxt"
    lm.parent.mkdir()
    lm.write_text("item { id: 2 name: 'dog' }\n")
    w = open_window([p])
    assert w.label_map is None
    assert w.set_label_map(lm)
    m = w.model
    c = m.columns.index("summary")
    m.data(m.index(0, c))
    qtbot.waitUntil(lambda: m.data(m.index(0, c)) != "…", timeout=10000)
    assert m.data(m.index(0, c)) == "label: 2 (dog)"
    assert "labels: map.pbtxt" in w.status_label.text()
