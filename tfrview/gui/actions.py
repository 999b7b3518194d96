"""The window's actions, in typed groups (as labelme keeps its actions): one frozen dataclass of
QActions per menu's concern, built by one function, so a misspelt action is an AttributeError at
start-up, not a KeyError on the day someone opens that menu."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from tfrview.gui.main_window import MainWindow


@dataclass(frozen=True, slots=True)
class FileActions:
    open: QAction
    open_dir: QAction
    reload: QAction
    label_map: QAction
    schema: QAction
    rewrite: QAction
    predictions: QAction
    close: QAction
    quit: QAction


@dataclass(frozen=True, slots=True)
class ExportActions:
    """What writes a new file: the image, the intact or repaired records, a selection."""

    save_image: QAction
    salvage: QAction
    repair: QAction
    export_records: QAction
    export_images: QAction
    export_images_boxes: QAction
    export_jsonl: QAction
    formats: tuple[QAction, ...]  # a separator, then the training formats (`output.formats.ExportFormat`)

    @property
    def selection(self) -> tuple[QAction, ...]:
        """The File › Export Selection submenu."""
        return (
            self.export_records,
            self.export_images,
            self.export_images_boxes,
            self.export_jsonl,
            *self.formats,
        )


@dataclass(frozen=True, slots=True)
class ViewActions:
    fit: QAction
    actual: QAction
    boxes: QAction  # checkable
    labels: QAction  # checkable
    box_keys: QAction
    summary: QAction

    @property
    def image_tools(self) -> tuple[QAction, ...]:
        """The image panel's tool buttons (with Save Image from the export group)."""
        return (self.fit, self.actual, self.boxes, self.labels, self.box_keys)


@dataclass(frozen=True, slots=True)
class NavigateActions:
    goto: QAction
    filter: QAction
    next_problem: QAction
    prev_problem: QAction


@dataclass(frozen=True, slots=True)
class AnalysisActions:
    """The scan and the analysis pass: stop (Esc: what the focused part started; the status bar's
    button: the scan), resume, run the checks again, and how many worker processes."""

    cancel: QAction
    stop_scan: QAction
    resume: QAction
    rerun_checks: QAction
    worker_processes: QAction


@dataclass(frozen=True, slots=True)
class TagActions:
    """The person's tags (controllers/tags.py): on what the focused part of the window means, on
    the filter result, and undo/redo."""

    tag_drop: QAction
    tag_keep: QAction
    tag_review: QAction
    tag_note: QAction
    tag_clear: QAction
    tag_undo: QAction
    tag_redo: QAction
    filter_drop: QAction
    filter_keep: QAction
    filter_review: QAction
    filter_clear: QAction

    @property
    def on_selection(self) -> tuple[QAction, ...]:
        """Edit › Tag."""
        return (self.tag_drop, self.tag_keep, self.tag_review, self.tag_note, self.tag_clear)

    @property
    def on_filter(self) -> tuple[QAction, ...]:
        """Edit › Tag › Filter Result."""
        return (self.filter_drop, self.filter_keep, self.filter_review, self.filter_clear)


@dataclass(frozen=True, slots=True)
class WindowActions:
    file: FileActions
    export: ExportActions
    view: ViewActions
    navigate: NavigateActions
    analysis: AnalysisActions
    tags: TagActions
    about: QAction

    def by_name(self) -> dict[str, QAction]:
        """Every action by its field name (for the tests' page object, which triggers by name)."""
        out: dict[str, QAction] = {"about": self.about}
        for f in fields(self):
            group = getattr(self, f.name)
            if not isinstance(group, QAction):
                for g in fields(group):
                    value = getattr(group, g.name)
                    if isinstance(value, tuple):  # the training formats: export_coco, export_yolo, ...
                        out.update({f"export_{a.data()}": a for a in value if not a.isSeparator()})
                    else:
                        out[g.name] = value
        return out


def _action(
    w: MainWindow, text: str, slot: Callable, shortcut=None, checkable: bool = False, tip: str = ""
) -> QAction:
    """A QAction of the window; a checkable one starts checked and calls `slot` on toggles."""
    a = QAction(text, w)
    if shortcut is not None:
        a.setShortcut(QKeySequence(shortcut))
    a.setCheckable(checkable)
    if checkable:
        a.setChecked(True)
        a.toggled.connect(slot)
    else:
        a.triggered.connect(slot)
    if tip:
        a.setToolTip(tip)
    return a


def _format_actions(w: MainWindow, act) -> tuple[QAction, ...]:
    """A separator and one action a training format (COCO, YOLO, VOC, HF Parquet, WebDataset)."""
    from tfrview.core.output.words import ExportFormat

    sep = QAction(w)
    sep.setSeparator(True)
    out = [sep]
    for f in ExportFormat:
        a = act(f"{f.words}…", lambda _=False, f=f: w.exporting.export_format(f), tip=f.tip)
        a.setData(f.value)
        out.append(a)
    return tuple(out)


def build_actions(w: MainWindow) -> WindowActions:
    """Every action of the window, wired to its slots (the export ones reach `w.exporting`, made
    later, when they are triggered)."""
    K = QKeySequence.StandardKey
    act = lambda *args, **kw: _action(w, *args, **kw)  # noqa: E731
    return WindowActions(
        file=FileActions(
            open=act("&Open…", w.open_files, K.Open),
            open_dir=act("Open &Folder…", w.open_folder, "Ctrl+Shift+O"),
            reload=act("&Reload", w.reload, "F5"),
            label_map=act("Load &Label Map…", w.choose_label_map),
            schema=act(
                "Load &Schema…",
                w.choose_schema,
                tip="A descriptor set or .proto file: custom protobuf records shown with field names",
            ),
            rewrite=act(
                "Re&write Dataset…",
                lambda: w.rewriting.ask(),
                tip="A new dataset: records kept or dropped, classes mapped, re-sharded, split; damaged records left out",
            ),
            predictions=act(
                "Load &Predictions…",
                lambda: w.evaluating.choose_file(),
                tip="A COCO results JSON or a TFRecord of predictions, joined to these records",
            ),
            close=act("&Close Window", w.close, K.Close),
            quit=act("&Quit", w._quit, K.Quit),
        ),
        export=ExportActions(
            save_image=act(
                "Save Image…",
                lambda: w.exporting.save_image(),
                "Ctrl+S",
                tip="Save the image, with or without boxes",
            ),
            salvage=act(
                "Save &Intact Records As…",
                lambda: w.exporting.save_intact(),
                "Ctrl+Shift+S",
                tip="Every intact record, in order, into a new file",
            ),
            repair=act(
                "&Repair Into a New File…",
                lambda: w.exporting.save_repaired(),
                tip="Every intact record, and every damaged record that can be proven whole again (one flipped bit)",
            ),
            export_records=act("Records as TFRecord…", lambda: w.exporting.export("records")),
            export_images=act("Images…", lambda: w.exporting.export("images")),
            export_images_boxes=act(
                "Images with Boxes and Labels…", lambda: w.exporting.export("images_boxes")
            ),
            export_jsonl=act("Features as JSON Lines…", lambda: w.exporting.export("jsonl")),
            formats=_format_actions(w, act),
        ),
        view=ViewActions(
            fit=act("Fit", w._fit, "Ctrl+0", tip="Fit the image to the panel"),
            actual=act("1:1", w._actual, "Ctrl+1", tip="Show the image at its actual size"),
            boxes=act("Boxes", w._toggle_boxes, "B", checkable=True, tip="Show boxes (B)"),
            labels=act("Labels", w._toggle_labels, "L", checkable=True, tip="Show box labels (L)"),
            box_keys=act("Box keys…", w.choose_box_keys, tip="Choose which features hold the boxes"),
            summary=act("Show Dataset &Summary", w.show_summary, "Ctrl+I"),
        ),
        navigate=NavigateActions(
            goto=act("&Go to Record…", w.go_to_record, "Ctrl+G"),
            filter=_filter_action(w, act),
            next_problem=act("Next Problem", lambda: w.step_problem(False), "F8"),
            prev_problem=act("Previous Problem", lambda: w.step_problem(True), "Shift+F8"),
        ),
        analysis=AnalysisActions(
            cancel=act("Stop", w._on_escape, "Esc", tip="Esc stops what the focused part started"),
            stop_scan=act("Stop", w.cancel_indexing, tip="Stop indexing, verifying and checking"),
            resume=act("Resume", w.resume_indexing, tip="Go on reading the dataset where it stopped"),
            rerun_checks=act("Run QA Checks Again", lambda: w.session.start_analysis()),
            worker_processes=act("Worker Processes…", w.choose_jobs),
        ),
        tags=_tag_actions(w, act),
        about=act("&About tfrview", w.about),
    )


def _filter_action(w: MainWindow, act) -> QAction:
    """Ctrl+F, or / (as in a pager or a browser: the letters D, K and R tag, so the record table
    has no type-to-find), puts the focus in the filter box. In the filter box / types, as Qt gives
    a line edit its keys."""
    f = act("&Filter…", lambda: (w.filter_edit.setFocus(), w.filter_edit.selectAll()), "Ctrl+F")
    f.setShortcuts([QKeySequence("Ctrl+F"), QKeySequence("/")])
    return f


def _tag_actions(w: MainWindow, act) -> TagActions:
    """D, K, R, N and Backspace tag what the focused part of the window means (the record table's
    selection, the gallery's record, a problem group, a group of copies); they reach `w.tagging`,
    made later, when triggered. In the filter box the keys type, as Qt gives a line edit its keys."""
    from tfrview.core.tags.words import TagWord

    t = lambda: w.tagging  # noqa: E731
    clear = act("&Clear Tag", lambda: t().tag(None), "Backspace", tip="Remove the tag and note (Backspace)")
    clear.setShortcuts([QKeySequence("Backspace"), QKeySequence("Delete")])
    return TagActions(
        tag_drop=act("&Drop", lambda: t().tag(TagWord.DROP, "D"), "D", tip="Tag: drop from the dataset (D)"),
        tag_keep=act(
            "&Keep", lambda: t().tag(TagWord.KEEP, "K"), "K", tip="Tag: keep, looked at and fine (K)"
        ),
        tag_review=act("&Review", lambda: t().tag(TagWord.REVIEW, "R"), "R", tip="Tag: look again (R)"),
        tag_note=act("&Note…", lambda: t().note(), "N", tip="A note on the records (N)"),
        tag_clear=clear,
        tag_undo=act("&Undo Tagging", lambda: t().undo(), QKeySequence.StandardKey.Undo),
        tag_redo=act("&Redo Tagging", lambda: t().redo(), "Ctrl+Shift+Z"),
        filter_drop=act("Drop All Matches", lambda: t().tag_filter(TagWord.DROP)),
        filter_keep=act("Keep All Matches", lambda: t().tag_filter(TagWord.KEEP)),
        filter_review=act("Review All Matches", lambda: t().tag_filter(TagWord.REVIEW)),
        filter_clear=act("Clear the Tags of All Matches", lambda: t().tag_filter(None)),
    )
