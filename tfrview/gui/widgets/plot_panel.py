"""The Plot panel: one numeric feature over the dataset (over `step` for TensorBoard events and
training logs, else over the record number) or its histogram, the boxes' measures and centres
(a heat map), image sizes (a scatter), class balance and records or problems per shard, drawn by
pyqtgraph. A click on a point of a series selects its record; a click on a bar, a cell or a
point of the others filters the table to the records behind it. A dataset with splits plots
every record, one split's, or each split's overlaid (a histogram as each split's share of its
values, so splits of different sizes compare). Save PNG… writes the plot. pyqtgraph is imported when the first plot is drawn, not at
start-up (it costs a few hundred milliseconds)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

_ALL, _OVERLAY, _ONE = "all", "overlay", "split:"  # the split chooser's item data (Qt compares strings)


class PlotPanel(QWidget):
    key_chosen = Signal(str)
    record_clicked = Signal(int)
    range_clicked = Signal(str, float, float, bool)  # key, low, high, high included: a bar's records
    area_clicked = Signal(str, list, list)  # key, low corner, high corner: a heat-map cell or a scatter point
    category_clicked = Signal(str, int)  # key, bar number: a class or a shard
    save_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.keys = QComboBox(self)
        self.keys.setMinimumContentsLength(24)
        self.keys.currentTextChanged.connect(self._on_key)
        self.mode = QComboBox(self)
        self.mode.addItems(["over step or record", "histogram"])
        self.mode.currentTextChanged.connect(lambda _t: self._on_key(self.keys.currentText()))
        self.split_box = QComboBox(self)  # every record, one split, or the splits overlaid
        self.split_box.setObjectName("plot_split")
        self.split_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.split_box.setVisible(False)
        self.split_box.currentIndexChanged.connect(lambda _i: self._on_key(self.keys.currentText()))
        self.status = QLabel("the plot comes from the analysis", self)
        self.save_button = QPushButton("Save PNG…", self)
        self.save_button.clicked.connect(self.save_requested)
        bar.addWidget(QLabel("feature:", self))
        bar.addWidget(self.keys)
        bar.addWidget(self.mode)
        bar.addWidget(self.split_box)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.save_button)
        lay.addLayout(bar)
        self._lay = lay
        self.plot = None  # pyqtgraph.PlotWidget, made with the first series
        self._x = np.empty(0)
        self._records = np.empty(0, dtype=np.int64)
        self._edges: np.ndarray | None = None  # a histogram's bar edges, when one is shown
        self._hist_key = ""
        self._heat: dict | None = None  # the heat map shown, if one is
        self._scatter: dict | None = None
        self._cats: dict | None = None  # bars with names (classes, shards)

    def set_keys(self, keys: list[str], prefer: str | None = None) -> None:
        current = self.keys.currentText()
        self.keys.blockSignals(True)
        self.keys.clear()
        self.keys.addItems(keys)
        self.keys.blockSignals(False)
        want = current if current in keys else (prefer if prefer in keys else (keys[0] if keys else ""))
        if want:
            self.keys.setCurrentText(want)
            if want != current:
                self.key_chosen.emit(want)

    def set_splits(self, names: list[str]) -> None:
        """The splits to choose from (none: the chooser hides), keeping the choice if it is there."""
        keep = self.split_box.currentData()
        self.split_box.blockSignals(True)
        self.split_box.clear()
        self.split_box.addItem("all records", _ALL)
        if len(names) > 1:
            self.split_box.addItem("splits overlaid", _OVERLAY)
        for name in names:
            self.split_box.addItem(f"split {name}", _ONE + name)
        at = self.split_box.findData(keep) if keep is not None else 0
        self.split_box.setCurrentIndex(max(at, 0))
        self.split_box.blockSignals(False)
        self.split_box.setVisible(bool(names))

    @property
    def split_choice(self) -> tuple[str | None, bool]:
        """(the one split plotted or None, whether the splits are overlaid)."""
        data = self.split_box.currentData() or _ALL
        return (data[len(_ONE) :] if data.startswith(_ONE) else None), data == _OVERLAY

    def choose_split(self, split: str | None, overlaid: bool = False) -> None:
        """Plot one split's records (None: all), or the splits overlaid."""
        data = _OVERLAY if overlaid else (_ALL if split is None else _ONE + split)
        self.split_box.setCurrentIndex(max(self.split_box.findData(data), 0))

    def show_overlay(self, parts: list[dict]) -> None:
        """Each split's series or histogram (as its share of the split's values) in its own
        colour, with a legend; clicks select nothing (a bar is no one split's range)."""
        from tfrview.gui.painting import split_colour

        pg = self._ensure_plot()
        self._reset()
        legend = self.plot.addLegend(offset=(-10, 10))
        legend.clear()
        key, said = "", []
        named: dict[float, str] = {}  # every split's named bars (a TFDS ClassLabel's)
        for i, part in enumerate(parts):
            colour = split_colour(i)
            width = max(4.0 - 1.0 * i, 1.5)  # the first drawn widest: a split equal to it still shows
            name = part["split"] or "(none)"
            if "histogram" in part:
                h = part["histogram"]
                key = h["key"]
                self.plot.plot(
                    np.asarray(h["edges"], dtype=np.float64),
                    np.asarray(h["share"], dtype=np.float64),
                    stepMode="center",
                    pen=pg.mkPen(colour, width=width),
                    name=name,
                )
                said.append(f"{name} {h['values']:,}")
                named.update(_bar_names(h))
            elif "series" in part:
                s = part["series"]
                key = s["key"]
                self.plot.plot(
                    np.asarray(s["x"], dtype=np.float64),
                    np.asarray(s["y"], dtype=np.float64),
                    pen=pg.mkPen(colour, width=width),
                    name=name,
                )
                self.plot.setLabel("bottom", s["x_name"])
                said.append(f"{name} {s['points']:,}")
        hist = any("histogram" in p for p in parts)
        if named:
            self._set_names(named)
        self.plot.setLabel("left", "share of the split's values" if hist else key)
        if hist:
            self.plot.setLabel("bottom", key)
        self.status.setText("splits overlaid: " + " · ".join(said) + " values")

    @Slot(str)
    def _on_key(self, key: str) -> None:
        if key:
            self.status.setText(f"reading {key}…")
            self.key_chosen.emit(key)

    @property
    def histogram(self) -> bool:
        return self.mode.currentIndex() == 1

    def _ensure_plot(self):
        import pyqtgraph as pg  # heavy: PySide6 on first use only

        if self.plot is None:
            pg.setConfigOptions(antialias=True, background="w", foreground="k")
            self.plot = pg.PlotWidget(self)
            self.plot.showGrid(x=True, y=True, alpha=0.3)
            for side in ("left", "bottom"):  # values as they are: no "accuracy (x0.001)" 777.0–777.3
                self.plot.getAxis(side).enableAutoSIPrefix(False)
            self.plot.scene().sigMouseClicked.connect(self._on_click)
            self._lay.addWidget(self.plot, 1)
        return pg

    def _reset(self) -> None:
        """The plot emptied for another kind of plot: axes as pyqtgraph makes them."""
        self.plot.clear()
        self._edges = self._heat = self._scatter = self._cats = None
        self._x = np.empty(0)
        self.plot.invertY(False)
        self.plot.enableAutoRange()
        self.plot.getAxis("bottom").setTicks(None)

    def show_series(self, s: dict) -> None:
        pg = self._ensure_plot()
        self._reset()
        self._x = np.asarray(s["x"], dtype=np.float64)
        self._records = np.asarray(s["records"], dtype=np.int64)
        self.plot.clear()
        self.plot.plot(
            self._x,
            np.asarray(s["y"], dtype=np.float64),
            pen=pg.mkPen("#1f77b4", width=1.5),
            symbol="o" if len(self._x) <= 200 else None,
            symbolSize=4,
        )
        self.plot.setLabel("bottom", s["x_name"])
        self.plot.setLabel("left", s["key"])
        every = f", every {s['stride']}th shown" if s["stride"] > 1 else ""
        self.status.setText(f"{s['points']:,} values{every} · click a point to show its record")

    def show_histogram(self, h: dict) -> None:
        """Bars of a feature's values; a click on a bar filters the table to its records."""
        pg = self._ensure_plot()
        self._reset()
        self._edges = np.asarray(h["edges"], dtype=np.float64)
        self._hist_key = h["key"]
        counts = np.asarray(h["counts"], dtype=np.float64)
        self.plot.addItem(
            pg.BarGraphItem(x0=self._edges[:-1], x1=self._edges[1:], height=counts, brush="#1f77b4", pen="w")
        )
        self._name_bars(h)
        self.plot.setLabel("bottom", h["key"])
        self.plot.setLabel("left", "values")
        click = " · click a bar to filter the table to it"
        self.status.setText(f"{h['values']:,} values in {len(counts)} bars{click}")

    def _name_bars(self, h: dict) -> None:
        """A class id's bars named under them (`names`: a TFDS ClassLabel's, `plots.bars`)."""
        named = _bar_names(h)
        if named:
            self._set_names(named)

    def _set_names(self, named: dict[float, str]) -> None:
        at = sorted(named)
        step = max(1, len(at) // 30)  # names that fit under the bars
        self.plot.getAxis("bottom").setTicks([[(x, named[x][:24]) for x in at[::step]]])

    def show_heatmap(self, h: dict) -> None:
        """Where the boxes' centres lie, as in the image (y downwards); a click on a cell filters
        the table to the records with a box centred in it."""
        pg = self._ensure_plot()
        self._reset()
        self._heat = h
        counts = np.asarray(h["counts"], dtype=np.float64)
        xe, ye = np.asarray(h["x_edges"]), np.asarray(h["y_edges"])
        img = pg.ImageItem(np.log1p(counts))  # log: a few crowded cells would hide the rest
        img.setColorMap(pg.colormap.get("viridis"))
        img.setRect(float(xe[0]), float(ye[0]), float(xe[-1] - xe[0]), float(ye[-1] - ye[0]))
        self.plot.addItem(img)
        self.plot.invertY(True)
        self.plot.setRange(xRange=(xe[0], xe[-1]), yRange=(ye[0], ye[-1]), padding=0.02)
        units = "normalised" if h.get("normalised") else "pixels"
        self.plot.setLabel("bottom", f"box centre x ({units})")
        self.plot.setLabel("left", f"box centre y ({units})")
        self.status.setText(
            f"{h['boxes']:,} box centres, brighter where more lie (log scale) · click a cell to "
            "filter the table to its records"
        )

    def show_scatter(self, s: dict) -> None:
        """Each distinct image size, its dot growing with the number of images of that size."""
        pg = self._ensure_plot()
        self._reset()
        self._scatter = s
        counts = np.asarray(s["count"], dtype=np.float64)
        sizes = 6 + 18 * np.sqrt(counts / counts.max())
        self.plot.addItem(
            pg.ScatterPlotItem(
                x=np.asarray(s["width"], dtype=np.float64),
                y=np.asarray(s["height"], dtype=np.float64),
                size=sizes,
                brush=pg.mkBrush(31, 119, 180, 160),
                pen=pg.mkPen("w"),
            )
        )
        self.plot.setLabel("bottom", "image width (pixels)")
        self.plot.setLabel("left", "image height (pixels)")
        self.status.setText(
            f"{s['images']:,} decoded images in {len(counts):,} sizes (a bigger dot: more images) "
            "· click a dot to filter the table to them"
        )

    def show_categories(self, c: dict) -> None:
        """Named bars (classes, shards): `names`, `counts`, a title; a click filters the table to
        the bar's records when `filterable`."""
        pg = self._ensure_plot()
        self._reset()
        self._cats = c
        counts = np.asarray(c["counts"], dtype=np.float64)
        x = np.arange(len(counts))
        colours = c.get("colours")  # a bar each (classes, in the colours their boxes have), else one
        fill = (
            {"brushes": [pg.mkBrush(h) for h in colours]}
            if colours
            else {"brush": c.get("colour", "#1f77b4")}
        )
        self.plot.addItem(pg.BarGraphItem(x=x, height=counts, width=0.8, pen="w", **fill))
        step = max(1, len(counts) // 30)  # names that fit under the bars
        self.plot.getAxis("bottom").setTicks([[(int(i), c["names"][i][:24]) for i in x[::step]]])
        self.plot.setLabel("bottom", c["x_name"])
        self.plot.setLabel("left", c["y_name"])
        click = " · click a bar to filter the table to it" if c.get("filterable", True) else ""
        self.status.setText(f"{c['title']}{click}")

    def show_curves(self, c: dict) -> None:
        """Curves with a legend, none clickable: the evaluation's precision-recall curve of each
        class (`c`: title, x_name, y_name, and curves: name, x, y, each in a class colour)."""
        from tfrview.core.records.palette import palette_hex

        pg = self._ensure_plot()
        self._reset()
        legend = self.plot.addLegend(offset=(-10, 10))
        legend.clear()
        for curve in c["curves"]:
            self.plot.plot(
                np.asarray(curve["x"], dtype=np.float64),
                np.asarray(curve["y"], dtype=np.float64),
                pen=pg.mkPen(palette_hex(curve.get("colour_key", curve["name"])), width=2),
                name=curve["name"],
            )
        self.plot.setXRange(0, 1)
        self.plot.setYRange(0, 1.02)
        self.plot.setLabel("bottom", c["x_name"])
        self.plot.setLabel("left", c["y_name"])
        self.status.setText(c["title"])

    def show_error(self, text: str) -> None:
        self.status.setText(f"⚠ {text}")

    def _on_click(self, ev) -> None:
        if self.plot is None:
            return
        at = self.plot.getPlotItem().vb.mapSceneToView(ev.scenePos())
        if self._heat is not None:
            cell = self.cell_at(at.x(), at.y())
            if cell is not None:
                self.area_clicked.emit(self._heat["key"], *cell)
            return
        if self._scatter is not None:
            i = self.dot_at(at.x(), at.y())
            if i is not None:
                w, h = self._scatter["width"][i], self._scatter["height"][i]
                self.area_clicked.emit(self._scatter["key"], [w, h], [w, h])
            return
        if self._cats is not None:
            i = round(at.x())
            if (
                0 <= i < len(self._cats["names"])
                and abs(at.x() - i) <= 0.4
                and self._cats.get("filterable", True)
            ):
                self.category_clicked.emit(self._cats["key"], i)
            return
        if not len(self._x) and self._edges is None:
            return
        if self._edges is not None:
            hit = self.bar_at(at.x())
            if hit is not None:
                self.range_clicked.emit(self._hist_key, *hit)
            return
        self.record_clicked.emit(self.record_at(at.x()))

    def bar_at(self, x: float) -> tuple[float, float, bool] | None:
        """The bar under x: (low, high, whether high is included: the last bar's is)."""
        e = self._edges
        if e is None or not len(e) or x < e[0] or x > e[-1]:
            return None
        i = min(int(np.searchsorted(e, x, side="right")) - 1, len(e) - 2)
        return float(e[i]), float(e[i + 1]), i == len(e) - 2

    def cell_at(self, x: float, y: float) -> tuple[list[float], list[float]] | None:
        """The heat-map cell under (x, y): its low and high corners."""
        xe, ye = np.asarray(self._heat["x_edges"]), np.asarray(self._heat["y_edges"])
        if not (xe[0] <= x <= xe[-1] and ye[0] <= y <= ye[-1]):
            return None
        i = min(int(np.searchsorted(xe, x, side="right")) - 1, len(xe) - 2)
        j = min(int(np.searchsorted(ye, y, side="right")) - 1, len(ye) - 2)
        return [float(xe[i]), float(ye[j])], [float(xe[i + 1]), float(ye[j + 1])]

    def dot_at(self, x: float, y: float) -> int | None:
        """The scatter dot nearest to (x, y), measured in the visible range (so both axes count alike)."""
        (x0, x1), (y0, y1) = self.plot.getPlotItem().vb.viewRange()
        w, h = np.asarray(self._scatter["width"], float), np.asarray(self._scatter["height"], float)
        d = ((w - x) / max(x1 - x0, 1e-9)) ** 2 + ((h - y) / max(y1 - y0, 1e-9)) ** 2
        i = int(np.argmin(d))
        return i if d[i] < 0.03**2 else None

    def record_at(self, x: float) -> int:
        """The record of the point nearest to x on the plot's x axis."""
        return int(self._records[int(np.argmin(np.abs(self._x - x)))])


def _bar_names(h: dict) -> dict[float, str]:
    """A histogram's bar centres -> their names, when its bars are named (else {})."""
    names = h.get("names") or []
    e = np.asarray(h["edges"], dtype=np.float64)
    mid = (e[:-1] + e[1:]) / 2
    return {float(mid[i]): names[i] for i in range(min(len(names), len(mid)))}
