"""The feature tree: key, type, count and values of one record. Long lists are elided and grow on
demand; bytes show as text when they are UTF-8, else as hex; image bytes get a thumbnail."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QIcon, QPixmap
from PySide6.QtWidgets import QMenu, QTreeWidget, QTreeWidgetItem

from tfrview.core.images import ImageError, ImageRef, decode_encoded, sniff_image_format
from tfrview.core.payload import BYTES_LIST, FLOAT_LIST, Feature, Payload, WireField, feature_json, wire_json
from tfrview.core.textfmt import format_bytes, format_number, format_values
from tfrview.gui.painting import to_qimage

PAGE = 200  # list values shown at first, and added per "more" click
_MORE = Qt.ItemDataRole.UserRole + 1  # (feature, shown) on a "… N more" item
_COPY = Qt.ItemDataRole.UserRole + 2  # the text "Copy value" puts on the clipboard
_JSON = Qt.ItemDataRole.UserRole + 3  # the JSON "Copy as JSON" puts on the clipboard

TYPE_SHORT = {"bytes_list": "bytes", "float_list": "float", "int64_list": "int64"}


def _value_text(f: Feature, i: int) -> str:
    v = f.values[i]
    if f.type == BYTES_LIST:
        return format_bytes(v, 200)
    return format_number(v, f.type == FLOAT_LIST)


def _copy_text(f: Feature, i: int) -> str:
    v = f.values[i]
    if f.type == BYTES_LIST:
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v.hex()
    return repr(float(v)) if f.type == FLOAT_LIST else str(int(v))


class FeatureTree(QTreeWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setColumnCount(4)
        self.setHeaderLabels(["key", "type", "count", "value"])
        self.setUniformRowHeights(False)
        self.setAlternatingRowColors(True)
        self.setIconSize(QPixmap(48, 48).size())
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.itemActivated.connect(self._activated)
        self.itemExpanded.connect(self._expanded)
        header = self.header()
        header.resizeSection(0, 220)
        header.resizeSection(1, 60)
        header.resizeSection(2, 60)

    def show_payload(self, p: Payload | None, note: str = "") -> None:
        self.clear()
        if p is None:
            return
        if note:
            QTreeWidgetItem(self, ["⚠", "", "", note])
        if p.kind == "example":
            for k, f in p.features.items():
                self._feature_item(self, k, f)
        elif p.kind == "sequence_example":
            ctx = QTreeWidgetItem(self, ["context", "", str(len(p.features)), ""])
            for k, f in p.features.items():
                self._feature_item(ctx, k, f)
            lists = QTreeWidgetItem(self, ["feature lists", "", str(len(p.feature_lists)), ""])
            for k, fl in p.feature_lists.items():
                t = TYPE_SHORT.get(fl[0].type, "") if fl else ""
                item = QTreeWidgetItem(lists, [k, t, f"{len(fl)} steps", ""])
                item.setData(0, _JSON, json.dumps([feature_json(f) for f in fl]))
                for i, f in enumerate(fl[:PAGE]):
                    self._feature_item(item, f"step {i}", f)
                if len(fl) > PAGE:
                    QTreeWidgetItem(item, [f"… {len(fl) - PAGE} more steps", "", "", ""])
            ctx.setExpanded(True)
            lists.setExpanded(True)
        elif p.kind == "protobuf":
            root = QTreeWidgetItem(
                self, ["protobuf", "", str(len(p.fields)), "no schema: field numbers and values"]
            )
            self._wire(root, p.fields)
            root.setExpanded(True)
        else:
            item = QTreeWidgetItem(self, ["(bytes)", "bytes", f"{len(p.raw):,}", format_bytes(p.raw, 400)])
            item.setData(0, _COPY, p.raw.hex())
        self.resizeColumnToContents(0)

    def _feature_item(self, parent, key: str, f: Feature) -> QTreeWidgetItem:
        n = len(f.values)
        item = QTreeWidgetItem(
            parent, [key, TYPE_SHORT[f.type], str(n), format_values(f, 8) if n != 1 else _value_text(f, 0)]
        )
        item.setData(0, _JSON, json.dumps({key: feature_json(f)}))
        item.setToolTip(3, item.text(3)[:2000])
        if n == 1:
            item.setData(0, _COPY, _copy_text(f, 0))
            self._maybe_thumbnail(item, f, 0)
        elif n > 1:
            item.setData(0, _COPY, "\n".join(_copy_text(f, i) for i in range(min(n, 100_000))))
            item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
            item.setData(0, _MORE, (f, 0))  # children are made when first expanded
        return item

    def _add_values(self, item: QTreeWidgetItem, f: Feature, start: int) -> None:
        n = len(f.values)
        stop = min(n, start + PAGE)
        for i in range(start, stop):
            child = QTreeWidgetItem(item, [f"[{i}]", "", "", _value_text(f, i)])
            child.setData(0, _COPY, _copy_text(f, i))
            self._maybe_thumbnail(child, f, i)
        if stop < n:
            more = QTreeWidgetItem(item, [f"… {n - stop:,} more", "", "", "double-click to show more"])
            more.setData(0, _MORE, (f, stop))

    def _expanded(self, item: QTreeWidgetItem) -> None:
        pending = item.data(0, _MORE)
        if pending is not None and item.childCount() == 0:
            item.setData(0, _MORE, None)
            f, start = pending
            self._add_values(item, f, start)

    def _activated(self, item: QTreeWidgetItem, column: int) -> None:
        pending = item.data(0, _MORE)
        if pending is not None and item.childCount() == 0 and item.text(0).startswith("…"):
            parent = item.parent()
            f, start = pending
            (parent or self.invisibleRootItem()).removeChild(item)
            self._add_values(parent, f, start)

    def _maybe_thumbnail(self, item: QTreeWidgetItem, f: Feature, i: int) -> None:
        if f.type != BYTES_LIST:
            return
        b = f.values[i]
        fmt = sniff_image_format(b)
        if not fmt:
            return
        try:
            img = decode_encoded(b, ImageRef("", i, "encoded", fmt), max_side=48)
        except ImageError as exc:
            item.setText(3, f"{item.text(3)}  ⚠ does not decode")
            item.setToolTip(3, str(exc))
            return
        item.setIcon(3, QIcon(QPixmap.fromImage(to_qimage(img.pixels))))

    def _wire(self, parent, fields: list[WireField]) -> None:
        for fl in fields[: PAGE * 5]:
            wt = {0: "varint", 1: "fixed64", 2: "bytes", 5: "fixed32"}.get(fl.wire_type, "?")
            if isinstance(fl.value, list):
                item = QTreeWidgetItem(parent, [f"field {fl.number}", "message", str(len(fl.value)), ""])
                self._wire(item, fl.value)
            elif isinstance(fl.value, bytes):
                item = QTreeWidgetItem(
                    parent, [f"field {fl.number}", wt, f"{len(fl.value):,}", format_bytes(fl.value, 200)]
                )
            else:
                item = QTreeWidgetItem(parent, [f"field {fl.number}", wt, "", str(fl.value)])
            item.setData(0, _JSON, json.dumps(wire_json([fl])))

    def _menu(self, pos) -> None:
        item = self.itemAt(pos)
        if item is None:
            return
        m = QMenu(self)
        value = item.data(0, _COPY)
        as_json = item.data(0, _JSON)
        a1 = m.addAction("Copy value")
        a1.setEnabled(value is not None)
        a2 = m.addAction("Copy as JSON")
        a2.setEnabled(as_json is not None)
        chosen = m.exec(self.viewport().mapToGlobal(pos))
        if chosen is a1:
            QGuiApplication.clipboard().setText(value)
        elif chosen is a2:
            QGuiApplication.clipboard().setText(as_json)
