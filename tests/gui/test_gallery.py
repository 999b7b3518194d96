from tests.helpers import RACCOON


def test_gallery_mirrors_the_table_and_selects_records(qtbot, open_window, qtmodeltester):
    w = open_window([RACCOON])
    g = w.gallery_model
    assert g.rowCount() == w.model.rowCount() == 12
    w.tabs.setCurrentWidget(w.gallery)
    for r in range(6):
        g.data(g.index(r, 0), 1)  # DecorationRole asks the pool
    qtbot.waitUntil(lambda: all(g.record_number(r) in g._pixmaps for r in range(6)), timeout=20000)
    pm = g._pixmaps[0]
    assert 0 < pm.width() <= 160 and 0 < pm.height() <= 120
    assert g.data(g.index(11, 0)) in ("#11", "#11  2 boxes · raccoon")
    w.gallery.setCurrentIndex(g.index(11, 0))
    assert w._selected == 11
    qtmodeltester.check(g, force_py=True)


def test_gallery_follows_the_filter(qtbot, open_window, tmp_path):
    from tests.gui.test_filter import run_filter
    from tfrview.core.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    rows = run_filter(qtbot, w, "digit == 3 or digit == 7")
    assert rows == [31, 32]
    assert w.gallery_model.rowCount() == 2 and w.gallery_model.record_number(1) == 32


def test_thumbnail_of_broken_image_says_why():
    from tests.core.test_payload import make_example
    from tfrview.core.thumbs import make_thumbnail

    t = make_thumbnail(make_example(**{"image/encoded": [b"\xff\xd8\xff\xe0" + bytes(50)]}))
    assert t.pixels is None and t.error and "decode" in t.caption
    t = make_thumbnail(make_example(label=[1]))
    assert t.pixels is None and not t.error and "no image" in t.caption


def test_the_first_switch_to_the_gallery_keeps_the_selected_record(qtbot, open_window):
    w = open_window([RACCOON])
    w.select_record(7)
    qtbot.waitUntil(lambda: w._selected == 7, timeout=5000)
    w.tabs.setCurrentWidget(w.gallery)
    qtbot.wait(200)
    assert w._selected == 7 and w.gallery_model.record_number(w.gallery.currentIndex().row()) == 7


def test_records_that_are_bare_jpegs_show_as_images(qtbot, open_window, tmp_path):
    import io

    from PIL import Image

    from tfrview.core.writer import write_records

    blobs = []
    for color in ("red", "green", "blue"):
        buf = io.BytesIO()
        Image.new("RGB", (64, 48), color).save(buf, "JPEG")
        blobs.append(buf.getvalue())
    path = tmp_path / "jpegs.tfrecord"
    write_records(path, blobs)
    w = open_window([path])
    w.select_record(1)
    qtbot.waitUntil(lambda: w.image_panel.current is not None and w.image_panel.current.number == 1, timeout=10000)
    assert w.image_panel.current.decoded is not None and w.image_panel.current.decoded.width == 64
