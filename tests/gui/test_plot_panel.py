"""The Plot panel (issue 12): a TensorBoard event file opens with its scalars plotted over steps,
from the analysis (no second pass); another feature can be chosen; the plot saves as PNG."""

from __future__ import annotations

import pytest

from tests.core.test_events import _events
from tests.gui.driver import Driver
from tests.helpers import payloads_of
from tfrview.core.output.writer import write_records


@pytest.mark.slow  # make test-slow (the suite stays under 5 min on 2 cores; tests/core/test_events.py reads the scalars)
def test_an_event_file_shows_its_scalars_over_steps(qtbot, open_window, tmp_path):
    path = tmp_path / "events.out.tfevents.1763900000.host"
    write_records(path, _events(500))
    w = open_window([path])
    Driver(qtbot, w).wait_checks()
    panel = w.plots.panel
    qtbot.waitUntil(lambda: panel.plot is not None and panel._x.size == 500, timeout=20000)
    assert w.plot_dock.isVisible()
    keys = [panel.keys.itemText(i) for i in range(panel.keys.count())]
    assert {"loss", "accuracy", "step"} <= set(keys) and "wall_time" not in keys
    assert panel.plot.getPlotItem().getAxis("bottom").labelText == "step"
    panel.keys.setCurrentText("loss")
    qtbot.waitUntil(lambda: panel.plot.getPlotItem().getAxis("left").labelText == "loss", timeout=20000)
    ys = panel.plot.getPlotItem().listDataItems()[0].getData()[1]
    assert abs(ys[0] - 1.0) < 1e-6 and abs(ys[1] - 0.5) < 1e-6  # loss = 1 / (step + 1)
    assert panel.record_at(10.2) == 11  # step 10 is record 11 (record 0 is the file version)
    panel.record_clicked.emit(panel.record_at(10.2))  # what a click there does
    qtbot.waitUntil(lambda: w._selected == 11, timeout=5000)
    out = tmp_path / "plot.png"
    w.plots.write_png(out)
    assert out.read_bytes()[:4] == b"\x89PNG"
    # a histogram of the values; a click on a bar filters the table to that bar's records
    panel.mode.setCurrentIndex(1)
    qtbot.waitUntil(lambda: panel._edges is not None and panel._hist_key == "loss", timeout=20000)
    lo, hi, closed = panel.bar_at(0.99)
    assert closed and hi == 1.0 and lo > 0.9
    panel.range_clicked.emit("loss", lo, hi, closed)  # what a click on that bar does
    d = Driver(qtbot, w)
    d.wait_filter()
    qtbot.waitUntil(lambda: d.shown_records() == [1], timeout=20000)  # loss 1.0: step 0, record 1
    assert w.filter_edit.text().startswith('"loss" >= ')


def _box_centres(path) -> dict[int, list[tuple[float, float]]]:
    """Every record's box centres, decoded here (not from the analysis) to check the plot's click."""
    from tfrview.core.records.payload import decode

    out = {}
    for n, raw in enumerate(payloads_of(path)):
        f = decode(raw).features
        if "image/object/bbox/xmin" in f:
            x0, x1, y0, y1 = (f[f"image/object/bbox/{c}"].values for c in ("xmin", "xmax", "ymin", "ymax"))
            out[n] = [((a + b) / 2, (c + d) / 2) for a, b, c, d in zip(x0, x1, y0, y1, strict=True)]
    return out


@pytest.mark.slow  # make test-slow (the suite stays under 5 min on 2 cores)
def test_detection_plots_filter_the_table_to_what_was_clicked(qtbot, open_window):
    from tfrview.demo import build_demo

    paths = build_demo()
    w = open_window(paths, demo=True)
    d = Driver(qtbot, w)
    d.wait_checks()
    w.plot_dock.show()
    w.plot_dock.raise_()  # a tab among the bottom docks: seen once raised
    panel = w.plots.panel
    qtbot.waitUntil(lambda: panel.keys.count() > 0, timeout=20000)  # filled once the summary is whole
    keys = [panel.keys.itemText(i) for i in range(panel.keys.count())]
    assert {
        "box centres (heat map)",
        "image sizes (scatter)",
        "class balance",
        "records per shard",
        "problems per shard",
        "box width",
    } <= set(keys)
    # the heat map: a click on the cell of record 0's first box shows the records with a box there
    panel.keys.setCurrentText("box centres (heat map)")
    qtbot.waitUntil(lambda: panel._heat is not None, timeout=20000)
    centres = _box_centres(paths[0])
    lo, hi = panel.cell_at(*centres[0][0])
    want = sorted(
        n for n, cs in centres.items() if any(lo[0] <= x <= hi[0] and lo[1] <= y <= hi[1] for x, y in cs)
    )
    panel.area_clicked.emit("box centres (heat map)", lo, hi)
    d.wait_filter()
    qtbot.waitUntil(lambda: d.shown_records() == want, timeout=20000)
    assert 0 in want and d.filter_text.startswith(f"plot selection: {len(want):,} record")
    assert "(a box centred in x " in d.filter_text  # the box says what filters the table (issue 18)
    # class balance: a bar is the filter on the class text
    panel.keys.setCurrentText("class balance")
    qtbot.waitUntil(lambda: panel._cats is not None and panel._cats["key"] == "class balance", timeout=20000)
    i = panel._cats["names"].index("circle")
    panel.category_clicked.emit("class balance", i)
    d.wait_filter()
    assert w.filter_edit.text() == '"image/object/class/text" == "circle"'
    # records per shard: a bar is the shard's records
    panel.keys.setCurrentText("records per shard")
    qtbot.waitUntil(
        lambda: panel._cats is not None and panel._cats["key"] == "records per shard", timeout=20000
    )
    starts = [int(x) for x in w.session.ds.starts()]
    assert panel._cats["names"] == ["00000", "00001"]
    assert panel._cats["counts"] == [starts[1] - starts[0], starts[2] - starts[1]]
    panel.category_clicked.emit("records per shard", 1)
    qtbot.waitUntil(lambda: d.shown_records() == list(range(starts[1], starts[2])), timeout=20000)
    assert w.filter_edit.text() == 'file == "demo-00001-of-00002.tfrecord"'


def test_a_class_bar_filters_by_the_id_carried_with_it(qtbot, open_window, tmp_path):
    """COCO boxes with class ids and no names: the bars are "id N" and a click filters by the id
    and key that came with the chart's data (the reading's), not by parsing the bar's title."""
    from tests.core.test_payload import make_example

    path = tmp_path / "coco.tfrecord"
    recs = [
        make_example(
            bbox=[1.0, 2.0, 30.0, 40.0] * (1 + n % 2),
            category_id=[7] + [9] * (n % 2),
            width=[64],
            height=[48],
        )
        for n in range(6)
    ]
    write_records(path, recs)
    w = open_window([path])
    d = Driver(qtbot, w)
    d.wait_checks()
    w.plot_dock.show()
    w.plot_dock.raise_()
    panel = w.plots.panel
    qtbot.waitUntil(lambda: panel.keys.count() > 0, timeout=20000)
    keys = {panel.keys.itemText(i) for i in range(panel.keys.count())}
    # COCO boxes get the box plots too: the panel asks what the readings found, not for OD API keys
    assert {"box width", "box centres (heat map)"} <= keys
    panel.keys.setCurrentText("class balance")
    qtbot.waitUntil(lambda: panel._cats is not None and panel._cats["key"] == "class balance", timeout=20000)
    assert sorted(panel._cats["names"]) == ["id 7", "id 9"]
    assert panel._cats["y_name"] == "objects"  # what a bar counts came as data, not from the title
    panel.category_clicked.emit("class balance", panel._cats["names"].index("id 9"))
    d.wait_filter()
    assert w.filter_edit.text() == '"category_id" == 9'
    qtbot.waitUntil(lambda: d.shown_records() == [1, 3, 5], timeout=20000)
