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
