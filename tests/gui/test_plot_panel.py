"""The Plot panel (issue 12): a TensorBoard event file opens with its scalars plotted over steps,
from the analysis (no second pass); another feature can be chosen; the plot saves as PNG."""

from __future__ import annotations

from tests.core.test_events import _events
from tests.gui.driver import Driver
from tfrview.core.output.writer import write_records


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

