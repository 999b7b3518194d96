"""The dialog that asks which config and version of a TFDS folder to open, when the folder holds
several configs (or datasets): each config/version with its splits and their counts from its own
`dataset_info.json` (`tfds.layout.choices`), the newest version of the first config chosen."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tfrview.core.termtext import printable
from tfrview.core.tfds.layout import TfdsChoice, TfdsChoiceError


class TfdsChoiceDialog(QDialog):
    """One row a config/version; OK (or a double click) opens the row chosen (`chosen`)."""

    def __init__(self, error: TfdsChoiceError, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("tfrview: which TFDS config?")
        self.choices: tuple[TfdsChoice, ...] = error.choices
        configs = len({c.config for c in self.choices})
        lay = QVBoxLayout(self)
        lay.addWidget(
            QLabel(
                f"{printable(os.path.basename(str(error.folder)) or str(error.folder))} holds "
                f"{configs} TFDS configs or datasets. Open which?"
            )
        )
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["config / version", "splits (records, by dataset_info.json)"])
        self.tree.setRootIsDecorated(False)
        for c in self.choices:
            item = QTreeWidgetItem([printable(c.label), printable(c.splits_text())])
            item.setToolTip(0, printable(str(c.folder)))
            if c.problem:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)  # cannot be read: not offered
            self.tree.addTopLevelItem(item)
        self.tree.resizeColumnToContents(0)
        self.tree.itemDoubleClicked.connect(lambda *_: self.accept())
        lay.addWidget(self.tree)
        first = self._default()
        if first is not None:
            self.tree.setCurrentItem(self.tree.topLevelItem(first))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.resize(640, min(120 + 24 * len(self.choices), 520))

    def _default(self) -> int | None:
        """The newest readable version of the first config (choices come in version order)."""
        readable = [i for i, c in enumerate(self.choices) if not c.problem]
        if not readable:
            return None
        first = self.choices[readable[0]].config
        return [i for i in readable if self.choices[i].config == first][-1]

    def rows(self) -> list[tuple[str, str]]:
        """(config/version, splits) of each row, as shown."""
        return [
            (self.tree.topLevelItem(i).text(0), self.tree.topLevelItem(i).text(1))
            for i in range(self.tree.topLevelItemCount())
        ]

    def choose(self, label: str) -> None:
        """Select the row of `label` (`default/1.0.0`)."""
        at = [c.label for c in self.choices].index(label)
        self.tree.setCurrentItem(self.tree.topLevelItem(at))

    def chosen(self) -> TfdsChoice | None:
        row = self.tree.indexOfTopLevelItem(self.tree.currentItem()) if self.tree.currentItem() else -1
        if row < 0 or self.choices[row].problem:
            return None
        return self.choices[row]
