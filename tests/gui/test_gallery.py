import pytest

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
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    rows = run_filter(qtbot, w, "digit == 3 or digit == 7")
    assert rows == [31, 32]
    assert w.gallery_model.rowCount() == 2 and w.gallery_model.record_number(1) == 32


def test_thumbnail_of_broken_image_says_why():
    from tests.core.test_payload import make_example
    from tfrview.core.records.thumbs import make_thumbnail

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

    from tfrview.core.output.writer import write_records

    blobs = []
    for color in ("red", "green", "blue"):
        buf = io.BytesIO()
        Image.new("RGB", (64, 48), color).save(buf, "JPEG")
        blobs.append(buf.getvalue())
    path = tmp_path / "jpegs.tfrecord"
    write_records(path, blobs)
    w = open_window([path])
    w.select_record(1)
    qtbot.waitUntil(
        lambda: w.image_panel.current is not None and w.image_panel.current.number == 1, timeout=10000
    )
    assert w.image_panel.current.decoded is not None and w.image_panel.current.decoded.width == 64


@pytest.mark.slow  # make test-slow (the suite stays under 5 min on 2 cores)
def test_thumbnails_of_records_with_problems_carry_a_badge(qtbot, open_window, tmp_path):
    """Errors and warnings get a badge in their colour; notes get none (issue 9)."""
    from tests.gui.test_problems_panel import wait_checks
    from tfrview.demo import build_demo
    from tfrview.gui.models.gallery import BADGE_ROLE
    from tfrview.gui.painting import SEVERITY_COLOURS

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    wait_checks(qtbot, w)
    g = w.gallery_model
    w.problems.flush()
    by_record = {}
    for r in w.problems.rows:
        if r.record is not None:
            by_record.setdefault(r.record, set()).add(r.problem.kind.severity)
    crc = next(r.record for r in w.problems.rows if r.problem.kind == "bad_data_crc")
    warned = next(n for n, s in by_record.items() if s == {"warning"} or s == {"warning", "info"})
    clean = next(n for n in range(g.rowCount()) if n not in by_record and n != crc + 1)
    assert g.data(g.index(crc, 0), BADGE_ROLE) == "error"
    assert g.data(g.index(warned, 0), BADGE_ROLE) == "warning"
    assert g.data(g.index(clean, 0), BADGE_ROLE) is None
    assert "bad_data_crc" in g.data(g.index(crc, 0), 3)  # the tooltip says what is wrong
    # the delegate paints it: the badge colour is on the thumbnail's top-right corner
    w.tabs.setCurrentWidget(w.gallery)
    w.gallery.scrollTo(g.index(warned, 0))
    qtbot.wait(300)
    shot = w.gallery.viewport().grab().toImage()
    rect = w.gallery.visualRect(g.index(warned, 0))
    want = SEVERITY_COLOURS["warning"]

    def near(c):
        return abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 40

    corner = [
        shot.pixelColor(x, y)
        for x in range(rect.center().x(), rect.right())
        for y in range(rect.top(), rect.top() + 30)
    ]
    assert any(near(c) for c in corner)
