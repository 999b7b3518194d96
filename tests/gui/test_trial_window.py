"""Issue 18, item 8: what a hands-on trial found wrong or hidden in the window (the points that
are not about the filter)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.gui.driver import Driver


def test_view_plot_comes_to_the_front_of_the_tabs_it_shares(qtbot, open_window, damaged_file):
    w = open_window([damaged_file])
    d = Driver(qtbot, w)
    qtbot.waitUntil(lambda: d.panel_in_front("Problems"), timeout=5000)  # the damage shows them
    d.view_menu("Plot")
    assert d.panel_in_front("Plot") and not d.panel_in_front("Problems")
    d.view_menu("Problems")  # turned off: the Plot stays
    assert d.panel_in_front("Plot")


def test_plot_axes_show_values_as_they_are(qtbot):
    from tfrview.gui.widgets.plot_panel import PlotPanel

    panel = PlotPanel()
    qtbot.addWidget(panel)
    panel.resize(800, 400)
    panel.show()
    y = 0.7770 + np.arange(4) * 0.0001  # an accuracy; pyqtgraph's own axis said "(x0.001)" 777.0–777.3
    panel.show_series(
        {
            "x": [0, 1, 2, 3],
            "y": list(y),
            "records": [0, 1, 2, 3],
            "x_name": "step",
            "key": "accuracy",
            "stride": 1,
            "points": 4,
        }
    )
    left = panel.plot.getPlotItem().getAxis("left")
    panel.plot.getPlotItem().vb.autoRange()
    qtbot.wait(50)  # the axis takes the view's range
    assert left.autoSIPrefixScale == 1.0
    assert left.labelString() == left.labelString().replace("x0.001", "") and "accuracy" in left.labelString()
    ticks = [t for _, ts in left.tickValues(0.7769, 0.7774, 400) for t in ts]
    assert ticks and all(0.7769 <= t <= 0.7774 for t in ticks)
    shown = left.tickStrings(ticks, left.autoSIPrefixScale, 0.0001)
    assert all(t.startswith("0.77") for t in shown), shown  # the values' own units


def test_one_wheel_notch_scrolls_the_gallery_one_row(qtbot, open_window, tmp_path):
    from tfrview.core.output.writer import write_records

    path = tmp_path / "many.tfrecord"
    write_records(path, (b"r%05d" % i for i in range(3000)))
    w = open_window([path])
    w.tabs.setCurrentWidget(w.gallery)
    d = Driver(qtbot, w)
    qtbot.waitUntil(
        lambda: w.gallery.verticalScrollBar().maximum() > 10 * d.gallery_row_height(), timeout=10000
    )
    moved = d.gallery_wheel(1)
    assert moved == d.gallery_row_height() and moved < w.gallery.viewport().height()
    assert d.gallery_wheel(-1) == -moved  # and back
    assert d.gallery_wheel(3) == 3 * moved


def test_number_columns_fit_their_largest_value(qtbot, open_window, tmp_path):
    from tfrview.core.output.writer import write_records

    path = tmp_path / "big.tfrecord"
    write_records(path, [b"x" * 12_000_000] * 2 + [b"y"] * 30)  # offsets and sizes in the 24 millions
    w = open_window([path])
    d = Driver(qtbot, w)
    assert w.model.widest_numbers() == {"#": 31, "offset": 24_000_032 + 17 * 29, "size": 12_000_000}
    assert d.column_cut("offset") == [] and d.column_cut("size") == [] and d.column_cut("#") == []


def test_dialogs_for_writing_open_where_the_person_last_wrote_never_beside_the_data(
    qtbot, open_window, damaged_file, tmp_path
):
    from PySide6.QtCore import QSettings

    QSettings().remove("last_write_dir")
    w = open_window([damaged_file])
    d = Driver(qtbot, w)
    qtbot.waitUntil(lambda: d.index_phase == "done", timeout=20000)
    data = str(damaged_file.parent)
    first = d.folder_offered("salvage")
    assert first != data and first in (str(Path.home()), str(Path.home() / "Documents"))
    out = tmp_path / "elsewhere"
    out.mkdir()
    assert d.folder_offered("salvage", choose=str(out / "intact.tfrecord")) == first
    said = d.close_message()
    written = [p for p in out.iterdir()]  # the dialog's suggested name, in the folder chosen
    assert str(out) in said and len(written) == 1 and written[0].name.endswith("intact.tfrecord")
    assert d.folder_offered("repair") == str(out)  # where the person last wrote
    w.table.selectRow(0)
    assert d.folder_offered("export_jsonl") == str(out)


def _png(w: int = 64, h: int = 48) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (w, h), (200, 40, 40)).save(buf, "PNG")
    return buf.getvalue()


def test_a_record_without_image_gives_its_room_to_the_features(qtbot, open_window, tmp_path):
    from tests.core.test_payload import make_example
    from tfrview.core.output.writer import write_records

    path = tmp_path / "tabular.tfrecord"
    rows = [make_example(label=[8], age=[39], income=[52000.5], city=[b"Lyon"]) for _ in range(3)]
    write_records(path, [*rows, make_example(**{"image/encoded": [_png()], "label": [1]})])
    w = open_window([path])
    d = Driver(qtbot, w)
    before = d.tree_share()
    d.show_record(1)
    assert d.tree_share() > 0.8 > before
    assert w.image_panel.is_folded and "No image" in w.image_panel.facts.text()
    assert d.summary_text(1) == "label: 8  ·  age=39, city='Lyon', income=52000.5"
    d.show_record(3)  # an image again: the split as it was
    assert not w.image_panel.is_folded and abs(d.tree_share() - before) < 0.02


def test_the_status_bar_fits_the_window_and_its_tooltip_says_it_all(qtbot, open_window, tmp_path):
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    d = Driver(qtbot, w)
    d.wait_checks()
    w.resize(1280, 800)
    assert not d.status_bar_overflows()
    narrow = max(w.minimumSizeHint().width(), 700)  # narrower than the line: cut in the middle,
    w.resize(narrow, 800)  # said whole in the tooltip
    qtbot.waitUntil(lambda: w.width() <= narrow, timeout=5000)
    shown, whole, tip = d.status_line()
    assert not d.status_bar_overflows()
    assert "…" in shown and shown != whole and shown.startswith(whole[:8]) and shown.endswith(whole[-5:])
    assert whole in tip and "QA checks done" in whole and "39 records in 2 files" in whole


def test_crowded_box_labels_never_overlap_and_a_hidden_one_shows_on_hover(qtbot, open_window, tmp_path):
    from tests.core.test_payload import make_example
    from tfrview.core.output.writer import write_records

    # six boxes on one another (a crowd annotated twice): six labels would be drawn over each other
    names = [b"cat", b"dog", b"bird", b"cow", b"eel", b"ant"]
    bb = {
        "image/object/bbox/xmin": [0.10] * 6 + [0.70],
        "image/object/bbox/ymin": [0.30] * 6 + [0.70],
        "image/object/bbox/xmax": [0.50] * 6 + [0.90],
        "image/object/bbox/ymax": [0.70] * 6 + [0.90],
        "image/object/class/text": [*names, b"fish"],
    }
    path = tmp_path / "crowd.tfrecord"
    write_records(path, [make_example(**{"image/encoded": [_png(400, 300)], **bb})])
    w = open_window([path])
    d = Driver(qtbot, w)
    d.show_record(0)
    w.image_panel.view.fit()
    # above, inside the top edge, below the bottom edge, inside above it: four slots, two left out
    assert d.labels_left_out() == 2
    assert d.labels_on_hover(0.3 * 400, 0.5 * 300) == ["eel", "ant"]  # said on hover in their box
    assert d.labels_on_hover(0.8 * 400, 0.8 * 300) == []  # fish's label is drawn


def test_the_record_table_sorts_by_its_columns_and_keeps_the_selection(qtbot, open_window, tmp_path):
    from tfrview.core.output.writer import write_records

    sizes = [5, 300, 40, 40, 7, 1000, 2, 40]
    path = tmp_path / "sizes.tfrecord"
    write_records(path, [bytes([65 + i]) * n for i, n in enumerate(sizes)])
    raw = bytearray(path.read_bytes())
    raw[16 + 5 + 16 + 300 + 12 + 3] ^= 1  # a flipped bit in record 2's data: a bad data CRC
    path.write_bytes(bytes(raw))
    w = open_window([path])
    d = Driver(qtbot, w)
    qtbot.waitUntil(lambda: d.index_phase == "done", timeout=20000)
    d.show_record(3)
    d.sort_by("size")
    assert d.shown_records() == [6, 0, 4, 2, 3, 7, 1, 5]  # ties (40) in record order
    assert w.model.row_of(3) == w.table.currentIndex().row() == 4  # the selection follows its record
    d.sort_by("size", descending=True)
    assert d.shown_records() == [5, 1, 2, 3, 7, 4, 0, 6]
    d.sort_by("status", descending=True)
    assert d.shown_records()[0] == 2 and d.table_records()[0][2] == "damaged"
    d.sort_by("summary")  # read lazily: refused, said, and the order stays
    assert d.shown_records()[0] == 2 and d.sorted_column() == "status"
    assert "cannot be sorted" in w.statusBar().currentMessage()
    d.sort_by("#")
    assert d.shown_records() == list(range(8))


def test_the_gallery_follows_the_tables_sort(qtbot, open_window, tmp_path, qtmodeltester):
    from tfrview.core.output.writer import write_records

    path = tmp_path / "sizes.tfrecord"
    write_records(path, [b"x" * n for n in (30, 10, 20)])
    w = open_window([path])
    d = Driver(qtbot, w)
    d.show_record(0)
    d.sort_by("size")
    g = w.gallery_model
    assert [g.record_number(r) for r in range(g.rowCount())] == [1, 2, 0]
    assert w.gallery.currentIndex().row() == 2  # record 0, where it is now
    qtmodeltester.check(w.model, force_py=True)
