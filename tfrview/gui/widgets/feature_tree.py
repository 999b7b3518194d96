"""The feature tree: key, type, count and values of one record. Long lists are elided and grow on
demand; bytes show as text when they are UTF-8, else as hex; image bytes get a thumbnail."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QIcon, QPixmap
from PySide6.QtWidgets import QMenu, QTreeWidget, QTreeWidgetItem

from tfrview.core.records import msgpacks
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, TYPE_SHORT, Feature
from tfrview.core.records.images import sniff_image_format
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.records.payload import Payload, WireField, feature_json, fixed_as_float, wire_json
from tfrview.core.records.textfmt import count_text, format_bytes, format_number, format_values
from tfrview.core.termtext import printable
from tfrview.gui.painting import to_qimage

PAGE = 200  # list values shown at first, and added per "more" click
_MORE = Qt.ItemDataRole.UserRole + 1  # (feature, shown) on a "… N more" item
_COPY = Qt.ItemDataRole.UserRole + 2  # the text "Copy value" puts on the clipboard
_JSON = Qt.ItemDataRole.UserRole + 3  # the JSON "Copy as JSON" puts on the clipboard


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


def copy_text(what: tuple) -> str:
    """What "Copy value" puts on the clipboard, built only when asked."""
    kind = what[0]
    if kind == "value":
        return _copy_text(what[1], what[2])
    if kind == "values":
        f = what[1]
        return "\n".join(_copy_text(f, i) for i in range(min(len(f.values), 100_000)))
    return what[1].hex()  # raw bytes


def copy_json(what: tuple) -> str:
    kind = what[0]
    if kind == "feature":
        return json.dumps({what[1]: feature_json(what[2])})
    if kind == "steps":
        return json.dumps([feature_json(f) for f in what[1]])
    return json.dumps(wire_json([what[1]]))


class FeatureTree(QTreeWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setColumnCount(4)
        self.setHeaderLabels(["key", "type", "count", "value"])
        self.setUniformRowHeights(False)
        self.setAlternatingRowColors(True)
        self.setIconSize(QPixmap(48, 48).size())
        self._image_items: dict[tuple[str, int], QTreeWidgetItem] = {}
        self._declared: dict = {}  # key -> records.tfdsvalues.Declared of the record shown
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.itemActivated.connect(self._activated)
        self.itemExpanded.connect(self._expanded)
        header = self.header()
        header.resizeSection(0, 220)
        header.resizeSection(1, 60)
        header.resizeSection(2, 60)

    def show_named(self, type_name: str, message: dict, note: str = "", limits: tuple[str, ...] = ()) -> None:
        """A record as the person's schema reads it: field names, nested messages, lists; a list
        the decode cut is a limit row, as it is for an Example."""
        self.clear()
        self._image_items = {}
        if note:
            QTreeWidgetItem(self, ["⚠", "", "", note])
        for text in limits:
            item = QTreeWidgetItem(self, ["⚠ limit", "", "", text])
            item.setToolTip(3, text)
        root = QTreeWidgetItem(
            self, [type_name, "message", str(len(message)), "decoded with the loaded schema"]
        )
        self._named(root, message)
        root.setExpanded(True)

    def _named(self, parent, value) -> None:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for i, (k, v) in enumerate(items):
            if i >= PAGE * 5:
                QTreeWidgetItem(parent, [f"… {len(value) - i} more", "", "", ""])
                break
            label = printable(str(k)) if isinstance(value, dict) else f"[{k}]"
            if isinstance(v, dict | list):
                item = QTreeWidgetItem(
                    parent, [label, "message" if isinstance(v, dict) else "list", str(len(v)), ""]
                )
                self._named(item, v)
            else:
                QTreeWidgetItem(parent, [label, type(v).__name__, "", printable(str(v))[:500]])

    def show_payload(
        self,
        p: Payload | None,
        note: str = "",
        tfds=None,
        declared: dict | None = None,
        file_info: tuple[str, ...] = (),
    ) -> None:
        """A record's features; `tfds` (a TFDS dataset's features.json, read as data) and `declared`
        (records.tfdsvalues: what it says of each key) add a row under each key it declares."""
        self.clear()
        self._image_items: dict[tuple[str, int], QTreeWidgetItem] = {}
        self._declared = declared or {}
        if p is None:
            return
        if note:
            QTreeWidgetItem(self, ["⚠", "", "", note])
        for text in p.limits:  # what a resource limit left out: said where the person looks
            item = QTreeWidgetItem(self, ["⚠ limit", "", "", text])
            item.setToolTip(3, text)
        if tfds is not None:
            self._tfds_rows(tfds)
        if p.kind in (PayloadKind.EXAMPLE, PayloadKind.EVENT):
            for k, f in p.features.items():
                self._feature_item(self, k, f)
        elif p.kind == PayloadKind.SEQUENCE_EXAMPLE:
            ctx = QTreeWidgetItem(self, ["context", "", str(len(p.features)), ""])
            for k, f in p.features.items():
                self._feature_item(ctx, k, f)
            lists = QTreeWidgetItem(self, ["feature lists", "", str(len(p.feature_lists)), ""])
            for k, fl in p.feature_lists.items():
                t = TYPE_SHORT.get(fl[0].type, "") if fl else ""
                item = QTreeWidgetItem(lists, [printable(k), t, f"{len(fl)} steps", ""])
                item.setData(0, _JSON, ("steps", fl))
                for i, f in enumerate(fl[:PAGE]):
                    self._feature_item(item, f"step {i}", f)
                if len(fl) > PAGE:
                    QTreeWidgetItem(item, [f"… {len(fl) - PAGE} more steps", "", "", ""])
            ctx.setExpanded(True)
            lists.setExpanded(True)
        elif p.kind == PayloadKind.EXAMPLE_LIST:  # TF-Ranking: a context and a list of Examples
            ctx = QTreeWidgetItem(self, ["context", "", str(len(p.features)), ""])
            for k, f in p.features.items():
                self._feature_item(ctx, k, f)
            exs = QTreeWidgetItem(self, ["examples", "", str(len(p.examples)), ""])
            for i, ex in enumerate(p.examples[:PAGE]):
                item = QTreeWidgetItem(exs, [f"example {i}", "", str(len(ex)), ""])
                for k, f in ex.items():
                    self._feature_item(item, k, f)
            if len(p.examples) > PAGE:
                QTreeWidgetItem(exs, [f"… {len(p.examples) - PAGE} more examples", "", "", ""])
            ctx.setExpanded(True)
            exs.setExpanded(True)
        elif p.kind == PayloadKind.PROTOBUF:
            root = QTreeWidgetItem(
                self, ["protobuf", "", str(len(p.fields)), "no schema: field numbers and values"]
            )
            self._wire(root, p.fields)
            root.setExpanded(True)
        elif p.kind == PayloadKind.MSGPACK:  # decoded strictly, without hooks: a tree of its values
            root, _ = msgpacks.tree(p.value)  # what a limit cut is in p.limits, shown above
            item = QTreeWidgetItem(self, [root.label, root.type, root.count, f"{p.size:,} bytes of msgpack"])
            self._msgpack(item, root.children)
            item.setData(0, _COPY, ("raw", p.raw))
            item.setExpanded(True)
        elif p.kind == PayloadKind.PICKLE:  # never unpickled: its opcodes, one a row
            lines = p.text.splitlines()
            root = QTreeWidgetItem(
                self, ["pickle", "", f"{p.size:,}", "never unpickled: pickletools disassembly"]
            )
            for line in lines[:PAGE]:
                QTreeWidgetItem(root, ["", "", "", line if line.isprintable() else printable(line)])
            if len(lines) > PAGE:
                QTreeWidgetItem(root, [f"… {len(lines) - PAGE} more lines", "", "", ""])
            root.setData(0, _COPY, ("raw", p.raw))
            root.setExpanded(True)
        else:
            item = QTreeWidgetItem(self, ["(bytes)", "bytes", f"{p.size:,}", format_bytes(p.raw, 400)])
            item.setData(0, _COPY, ("raw", p.raw))
        if file_info:  # below the record: its ArrayRecord/Riegeli file's chunks, options, metadata chunk
            root = QTreeWidgetItem(self, ["ArrayRecord file", "", "", file_info[0]])
            for line in file_info[1:]:
                item = QTreeWidgetItem(root, ["", "", "", line])
                item.setToolTip(3, line)
            root.setExpanded(True)
        self.resizeColumnToContents(0)

    def _msgpack(self, parent: QTreeWidgetItem, nodes, depth: int = 1) -> None:
        """A msgpack map's or array's values under it (already bounded by `msgpacks.tree`); the
        first levels open, so the key column is sized to what shows."""
        for n in nodes:
            item = QTreeWidgetItem(parent, [n.label, n.type, n.count, n.text])
            if n.text:
                item.setToolTip(3, n.text)
            self._msgpack(item, n.children, depth + 1)
            if n.children and depth < 3:
                item.setExpanded(True)

    def _tfds_rows(self, tfds) -> None:
        """The TFDS features row: where they come from, what could not be read, unknown classes."""
        import os

        if tfds.error:
            item = QTreeWidgetItem(self, ["⚠ TFDS", "", "", printable(tfds.error)])
            item.setToolTip(3, printable(tfds.error))
            return
        unknown = tfds.unknown
        words = f"{len(tfds.flat):,} keys declared by {os.path.basename(tfds.path)} (read as data)"
        if unknown:
            words += f"; {len(unknown):,} of an unknown class, never imported"
        root = QTreeWidgetItem(self, ["TFDS features", "", str(len(tfds.flat)), words])
        for line in tfds.notes:
            QTreeWidgetItem(root, ["⚠ note", "", "", printable(line)])
        for f in unknown:
            item = QTreeWidgetItem(root, [printable(f.key), "unknown", "", printable(f.text)])
            item.setToolTip(3, printable(f.text))
        root.setExpanded(bool(tfds.notes or unknown))

    def _feature_item(self, parent, key: str, f: Feature) -> QTreeWidgetItem:
        n = len(f.values)
        shown = printable(key)  # keys come from the data: one line, control characters escaped
        d = self._declared.get(key) if parent is self else None
        value = format_values(f, 8) if n != 1 else _value_text(f, 0)
        if d is not None and d.value is not None and d.array is None:
            value = d.value  # class ids with their ClassLabel's names
        item = QTreeWidgetItem(
            parent,
            [shown, TYPE_SHORT[f.type], count_text(f), value],
        )
        if d is not None:
            item.setToolTip(0, printable(d.text))
            spec = QTreeWidgetItem(item, ["TFDS", "", "", printable(d.text)])
            spec.setToolTip(3, printable(d.text))
            if d.array is not None or d.error:
                QTreeWidgetItem(item, ["decoded", "", "", printable(d.error or d.value or "")])
        item.setData(0, _JSON, ("feature", key, f))
        item.setToolTip(3, item.text(3)[:2000])
        item.setData(0, _COPY, ("values", f))
        if n == 1:
            self._mark_image(item, key, f, 0)
        elif n > 1:
            item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
            item.setData(0, _MORE, (f, 0))  # children are made when first expanded
        return item

    def _add_values(self, item: QTreeWidgetItem, f: Feature, start: int) -> None:
        n = len(f.values)
        stop = min(n, start + PAGE)
        for i in range(start, stop):
            child = QTreeWidgetItem(item, [f"[{i}]", "", "", _value_text(f, i)])
            child.setData(0, _COPY, ("value", f, i))
            self._mark_image(child, item.data(0, _JSON)[1], f, i)
        if stop < n:
            more = QTreeWidgetItem(item, [f"… {n - stop:,} more", "", "", "double-click to show more"])
            more.setData(0, _MORE, (f, stop))

    def _expanded(self, item: QTreeWidgetItem) -> None:
        pending = item.data(0, _MORE)
        if pending is not None:  # (a declared key's TFDS rows come first: its values follow them)
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

    def _mark_image(self, item: QTreeWidgetItem, key: str, f: Feature, i: int) -> None:
        """Remember which items hold image bytes; their thumbnails come from the decode worker."""
        if f.type == BYTES_LIST and sniff_image_format(f.values[i]):
            self._image_items[(key, i)] = item

    def set_thumbnails(self, thumbs: dict) -> None:
        for where, px in thumbs.items():
            item = self._image_items.get(where)
            if item is None:
                continue
            if isinstance(px, str):
                item.setText(3, f"{item.text(3)}  ⚠ does not decode")
                item.setToolTip(3, px)
            else:
                item.setIcon(3, QIcon(QPixmap.fromImage(to_qimage(px))))

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
                as_float = fixed_as_float(fl.wire_type, fl.value)
                shown = str(fl.value) + (
                    f"  (as {'double' if fl.wire_type == 1 else 'float'}: {as_float:.10g})"
                    if as_float is not None
                    else ""
                )
                item = QTreeWidgetItem(parent, [f"field {fl.number}", wt, "", shown])
            item.setData(0, _JSON, ("wire", fl))

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
            QGuiApplication.clipboard().setText(copy_text(value))
        elif chosen is a2:
            QGuiApplication.clipboard().setText(copy_json(as_json))
