"""Small dialogs: choosing which keys hold the boxes when detection fails."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel

from tfrview.core.records.feature import BYTES_LIST, INT64_LIST, Feature

if TYPE_CHECKING:  # (the records' reading modules load with the first box spec, not the window)
    from tfrview.core.records.overlays import BoxSpec

_NONE = "(none)"


def layout_key(features: dict[str, Feature]) -> str:
    """Identifies a feature layout (the sorted keys and types), to remember a choice per layout."""
    sig = "\n".join(f"{k}:{f.type}" for k, f in sorted(features.items()))
    return hashlib.sha1(sig.encode()).hexdigest()[:16]


def remembered_spec(features: dict[str, Feature]) -> BoxSpec | None:
    raw = QSettings().value(f"boxspec/{layout_key(features)}")
    if not raw:
        return None
    try:
        d = json.loads(raw)
        return _spec(d)
    except (ValueError, KeyError, TypeError):
        return None


def remembered_specs() -> tuple[BoxSpec, ...]:
    """Every box spec the person chose (for thumbnails and exports: `reading.chosen_spec`)."""
    st = QSettings()
    st.beginGroup("boxspec")
    try:
        raws = [st.value(k) for k in st.childKeys()]
    finally:
        st.endGroup()
    out = []
    for raw in raws:
        try:
            d = json.loads(raw)
            out.append(_spec(d))
        except (ValueError, KeyError, TypeError):
            continue
    return tuple(out)


def _spec(d: dict) -> BoxSpec:
    from tfrview.core.records.overlays import BoxSpec

    return BoxSpec(d["convention"], tuple(d["keys"]), d.get("class_text"), d.get("class_id"))


def remember_spec(features: dict[str, Feature], spec: BoxSpec | None) -> None:
    key = f"boxspec/{layout_key(features)}"
    if spec is None:
        QSettings().remove(key)
    else:
        QSettings().setValue(
            key,
            json.dumps(
                {
                    "convention": spec.convention,
                    "keys": list(spec.keys),
                    "class_text": spec.class_text,
                    "class_id": spec.class_id,
                }
            ),
        )


class BoxSpecDialog(QDialog):
    """Pick the convention and keys of the boxes; remembered for records with the same layout."""

    def __init__(self, features: dict[str, Feature], current: BoxSpec | None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Box keys")
        numeric = [k for k, f in features.items() if f.type != BYTES_LIST]
        texts = [k for k, f in features.items() if f.type == BYTES_LIST]
        ints = [k for k, f in features.items() if f.type == INT64_LIST]
        form = QFormLayout(self)
        form.addRow(QLabel("Which features hold the boxes, and how are they written?"))
        self.conv = QComboBox(self)
        from tfrview.core.records.overlays import CONVENTIONS

        for key, text in CONVENTIONS.items():
            self.conv.addItem(text, key)
        form.addRow("Convention", self.conv)
        self.keys = []
        for name in ("xmin (or the list)", "ymin", "xmax", "ymax"):
            cb = QComboBox(self)
            cb.addItems([_NONE, *numeric])
            form.addRow(name, cb)
            self.keys.append(cb)
        self.text = QComboBox(self)
        self.text.addItems([_NONE, *texts])
        form.addRow("Class names", self.text)
        self.ids = QComboBox(self)
        self.ids.addItems([_NONE, *ints])
        form.addRow("Class ids", self.ids)
        if current is not None:
            self.conv.setCurrentIndex(max(0, self.conv.findData(current.convention)))
            for cb, k in zip(self.keys, current.keys, strict=False):
                cb.setCurrentText(k)
            self.text.setCurrentText(current.class_text or _NONE)
            self.ids.setCurrentText(current.class_id or _NONE)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def spec(self) -> BoxSpec | None:
        conv = self.conv.currentData()
        keys = [cb.currentText() for cb in self.keys]
        from tfrview.core.records.overlays import BoxSpec
        from tfrview.core.records.reading import BoxConvention

        if conv in (BoxConvention.COCO_XYWH, BoxConvention.TFDS_YXYX):
            chosen: tuple[str, ...] = (keys[0],) if keys[0] != _NONE else ()
        else:
            chosen = tuple(keys) if _NONE not in keys else ()
        if not chosen:
            return None
        t = self.text.currentText()
        i = self.ids.currentText()
        return BoxSpec(conv, chosen, None if t == _NONE else t, None if i == _NONE else i)
