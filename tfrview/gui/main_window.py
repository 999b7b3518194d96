"""The main window: the record table, the image panel and the feature tree, with menus and a
status bar. It composes the parts and wires them: the dataset's state lives in the session
(`session.DatasetSession`), each concern in a controller (`controllers/`), the work in workers and
the core."""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSettings, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QListView,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tfrview import __version__
from tfrview.core.errors import TfrviewError
from tfrview.core.logs import window_log_path
from tfrview.core.problems import FRAMING_KINDS, QA_KINDS, Problem, ProblemKind
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.framing import Compression
from tfrview.core.tfrecord.order import SORTABLE
from tfrview.core.tfrecord.status import RecordStatus
from tfrview.gui.actions import WindowActions, build_actions
from tfrview.gui.controllers.compare import CompareController
from tfrview.gui.controllers.evaluation import EvaluationController
from tfrview.gui.controllers.export import ExportController
from tfrview.gui.controllers.filter import FilterController
from tfrview.gui.controllers.plots import PlotController
from tfrview.gui.controllers.rewrite import RewriteController
from tfrview.gui.controllers.shards import ShardsController
from tfrview.gui.controllers.sorting import SortController
from tfrview.gui.controllers.tags import TagsController
from tfrview.gui.dialogs import BoxSpecDialog, remember_spec, remembered_spec, remembered_specs
from tfrview.gui.job_state import JobState, Phase
from tfrview.gui.models.duplicates import DuplicatesModel
from tfrview.gui.models.gallery import THUMB, THUMB_H, GalleryModel
from tfrview.gui.models.problems import ProblemRow, ProblemsModel
from tfrview.gui.models.record_table import RecordTableModel, number_text, problem_line
from tfrview.gui.scan_phase import ScanPhase
from tfrview.gui.session import DatasetSession, analysis_jobs
from tfrview.gui.settings import last_dir, write_dir
from tfrview.gui.status_line import StatusFacts, missing_tip, problems_text, problems_tip, status_text
from tfrview.gui.widgets.duplicates_view import DuplicatesView
from tfrview.gui.widgets.elided_label import ElidedLabel
from tfrview.gui.widgets.feature_tree import FeatureTree
from tfrview.gui.widgets.filter_edit import FilterEdit
from tfrview.gui.widgets.gallery_delegate import GalleryDelegate
from tfrview.gui.widgets.image_panel import ImagePanel
from tfrview.gui.widgets.problems_panel import ProblemsPanel
from tfrview.gui.widgets.record_table_view import GalleryView, RecordTableView
from tfrview.gui.widgets.summary_panel import SummaryPanel
from tfrview.gui.workers.decode import DecodeRequest, DecodeWorker, RecordView
from tfrview.gui.workers.rowtext import RowTextWorker
from tfrview.gui.workers.scan import IndexProgress
from tfrview.gui.workers.thumbnails import ThumbnailPool

ROW_TIMER_MS = 150
MAX_RECENT = 10

if TYPE_CHECKING:  # (the sample's reading loads with the sample, not the window)
    from tfrview.core.analysis.sample import SampleFacts


class MainWindow(QMainWindow):
    open_requested = Signal(list)  # paths the person asked to open (the app makes a new window)

    def __init__(self, dataset: Dataset, demo: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ds = dataset
        self.demo = demo
        self.session = s = DatasetSession(dataset, parent=self)
        s.load_nearby_label_map()
        self.setAcceptDrops(True)
        self.setWindowTitle(f"{dataset.name}{' (demo)' if demo else ''} — tfrview")
        self._build_actions()
        self._build_ui()
        self._build_menus()
        self._restore()
        s.index_progressed.connect(self._on_progress)
        s.problem_found.connect(self._on_problem)
        s.file_reframed.connect(self._on_reframed)
        s.cause_found.connect(self.problems.set_cause)
        s.file_cause_found.connect(self._on_file_cause)
        s.file_failed.connect(self._on_file_error)
        s.child_failed.connect(self._on_child_failed)
        s.sample_ready.connect(self._on_sample)
        s.scan_ended.connect(self._on_index_finished)
        s.analysis_started.connect(self._on_analysis_started)
        s.checks_changed.connect(self._update_status)
        s.summary_ready.connect(self._on_summary)
        s.duplicates_ready.connect(self._on_duplicates)
        s.split_summary_ready.connect(self._on_split_summary)
        s.label_map_changed.connect(self._on_label_map_changed)
        self.model.set_label_map(s.label_map)
        self.thumbs.label_map = s.label_map
        self.thumbs.specs = remembered_specs()  # the gallery draws the boxes as the image panel does
        self.thumbs.start()
        self.summarizer = RowTextWorker(dataset, self)
        self.summarizer.label_map = s.label_map
        self.summarizer.result.connect(self.model.on_summaries)
        self.model.summaries = self.summarizer
        self.summarizer.start()
        self.decoder = DecodeWorker(self, read=dataset.read)
        self.decoder.result.connect(self._on_view)
        self.decoder.start()
        self.rows_timer = QTimer(self)
        self.rows_timer.setInterval(ROW_TIMER_MS)
        self.rows_timer.timeout.connect(self._grow_rows)
        self._selected: int | None = None
        self._image_choice = 0
        self._tree_for: tuple | None = None
        self._specs: dict[int, object] = {}  # box keys chosen by the person, per record shown
        self.schema = None  # records.schema.MessageSchema, for records of a custom protobuf
        QTimer.singleShot(0, self.start_indexing)

    @property
    def label_map(self) -> dict[int, str] | None:
        return self.session.label_map

    @property
    def label_map_path(self) -> Path | None:
        return self.session.label_map_path

    # construction -------------------------------------------------------------------------------------

    def _build_actions(self) -> None:
        self.action_groups: WindowActions = build_actions(self)

    @property
    def actions_by_name(self) -> dict[str, QAction]:
        """Every action by name, for the tests' page object (the window uses `action_groups`)."""
        return self.action_groups.by_name()

    def _build_ui(self) -> None:
        self.model = RecordTableModel(self.ds, self, splits=self.session.splits)
        self.session.splits_changed.connect(lambda: self.model.set_splits(self.session.splits))
        self.table = RecordTableView(self)
        self.table.go_to_typed.connect(self._on_number_typed)
        self.table.text_typed.connect(self._on_text_typed)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setShowGrid(False)
        vh = self.table.verticalHeader()
        vh.setVisible(False)
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform rows: no per-row measuring
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # never ResizeToContents
        hh.setStretchLastSection(True)
        widths = {
            "#": 56,
            "file": 64 if self.model._file_labels[0].isdigit() else 140,
            "split": 84,
            "offset": 84,
            "size": 64,
            "status": 84,
            "tag": 84,
            "kind": 84,
        }
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        for i, name in enumerate(self.model.columns):
            if name in widths:
                hh.resizeSection(i, widths[name])
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)
        # sortable by the columns the index knows (array operations: models.record_table.sort)
        hh.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)
        self._sorted_by = (0, Qt.SortOrder.AscendingOrder)
        hh.sortIndicatorChanged.connect(self._on_sort_indicator)
        self.model.sort_refused.connect(self._on_sort_refused)

        self.image_panel = ImagePanel(
            (*self.action_groups.view.image_tools, self.action_groups.export.save_image), self
        )
        self.image_panel.image_chosen.connect(self._on_image_chosen)
        self.tree = FeatureTree(self)
        right = QSplitter(Qt.Orientation.Vertical, self)
        right.addWidget(self.image_panel)
        right.addWidget(self.tree)
        right.setSizes([420, 300])
        self.right_splitter = right
        self._image_sizes: list[int] | None = None  # the split before a record without image folded it
        self.image_panel.imageless.connect(self._on_imageless)
        left = QWidget(self)
        left_lay = QVBoxLayout(left)
        left_lay.setContentsMargins(0, 0, 0, 0)
        left_lay.setSpacing(0)
        left_lay.addWidget(self._build_filter_bar())
        self.thumbs = ThumbnailPool(self.ds, threads=2, size=THUMB, cell=(THUMB, THUMB_H), parent=self)
        self.gallery_model = GalleryModel(self.model, self.thumbs, self)
        self.thumbs.result.connect(self.gallery_model.on_thumbnail)
        self.gallery = GalleryView(self)
        self.gallery.setViewMode(QListView.ViewMode.IconMode)
        self.gallery.setModel(self.gallery_model)
        self.gallery.setUniformItemSizes(True)
        self.gallery.setResizeMode(QListView.ResizeMode.Adjust)
        self.gallery.setMovement(QListView.Movement.Static)
        self.gallery.setLayoutMode(QListView.LayoutMode.Batched)
        self.gallery.setBatchSize(200)
        self.gallery.setIconSize(QSize(THUMB, THUMB_H))
        self.gallery.setGridSize(QSize(THUMB + 16, THUMB_H + 40))
        self.gallery.setWordWrap(True)
        self.gallery.setSpacing(4)
        self.gallery.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.gallery.setItemDelegate(GalleryDelegate(self.gallery))
        self.gallery.selectionModel().currentChanged.connect(self._on_gallery_current)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.table, "Records")
        self.tabs.addTab(self.gallery, "Gallery")
        self.duplicates_model = DuplicatesModel(self.thumbs, self)  # the gallery's thumbnail pool
        self.thumbs.result.connect(self.duplicates_model.on_thumbnail)
        self.duplicates_view = DuplicatesView(self)
        self.duplicates_view.setModel(self.duplicates_model)
        self.duplicates_view.record_chosen.connect(self._on_copy_chosen)
        self.tabs.addTab(self.duplicates_view, "Duplicates")
        self.tabs.currentChanged.connect(self._on_tab)
        left_lay.addWidget(self.tabs, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setSizes([720, 560])
        self.setCentralWidget(self.splitter)

        self.problems = ProblemsModel(self.model._file_labels, self)  # the table's, made once
        self.problems_panel = ProblemsPanel(self.problems, self)
        self.problems_panel.add_action(self.action_groups.export.repair, "Repair…")
        self.problems_view = self.problems_panel.tree
        # one click, an arrow key or Enter on a problem shows its record, focus staying in the panel
        self.problems_view.problem_chosen.connect(self._on_problem_chosen)
        self.problems.arranged.connect(self._update_problem_counts)
        self.problems_dock = QDockWidget("Problems", self)
        self.problems_dock.setObjectName("problems")
        self.problems_dock.setWidget(self.problems_panel)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.problems_dock)
        self.problems_dock.hide()  # shown when the first problem turns up
        self.summary_panel = SummaryPanel(self)
        self.summary_panel.split_chosen.connect(self._show_chosen_summary)
        self.summary_dock = QDockWidget("Dataset Summary", self)
        self.summary_dock.setObjectName("summary")
        self.summary_dock.setWidget(self.summary_panel)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.summary_dock)
        self.tabifyDockWidget(self.problems_dock, self.summary_dock)
        self.summary_dock.hide()
        self.filtering = FilterController(
            self.session, self.model, self.problems, self.filter_edit, self.filter_status, self
        )
        self.filtering.cleared.connect(self._reselect)
        self.sorting = SortController(
            self.session, self.model, self.table.horizontalHeader(), self.sort_box, self.sort_down, self
        )
        self.sorting.said.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.sorting.scored.connect(self._on_scored)
        self.filtering.state_changed.connect(self._on_filter_state)
        self.shards_panel = ShardsController(self.session, self.problems, self.filtering, self)
        self.shards_panel.shard_shown.connect(self._on_shard_shown)
        self.shards_dock = self.shards_panel.dock
        self.shards_view = self.shards_panel.view
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.shards_dock)
        self.tabifyDockWidget(self.problems_dock, self.shards_dock)
        # a dataset of many files shows their health at a glance
        self.shards_dock.setVisible(len(self.ds.files) > 1)
        self.plots = PlotController(self.session, self, self.data_dir, self.filtering, self.shards_panel)
        self.plot_dock = self.plots.dock
        self.plots.panel.record_clicked.connect(self.select_record)
        self.summary_panel.chart.class_clicked.connect(self.plots.filter_class)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.plot_dock)
        self.tabifyDockWidget(self.problems_dock, self.plot_dock)
        self.plot_dock.hide()
        self.evaluating = EvaluationController(
            self.session, self, self.filtering, self.image_panel, self.thumbs, self.plots
        )
        self.evaluating.said.connect(lambda text: self.statusBar().showMessage(text, 10000))
        self.evaluating.loaded_changed.connect(self._on_predictions_loaded)
        self.evaluating.tiles_stale.connect(self.gallery_model.redraw)
        self.sorting.prediction_scores = self.evaluating.scores_of
        self.evaluating.evaluated.connect(self.sorting.on_prediction_scores)
        self.evaluation_dock = self.evaluating.dock
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.evaluation_dock)
        self.tabifyDockWidget(self.problems_dock, self.evaluation_dock)
        self.evaluation_dock.hide()
        self.comparing = CompareController(self.session, self, self.filtering)
        self.compare_dock = self.comparing.dock
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.compare_dock)
        self.tabifyDockWidget(self.problems_dock, self.compare_dock)
        self.compare_dock.hide()

        sb = self.statusBar()
        self.status_label = ElidedLabel("opening…", self)  # never wider than the window leaves it
        self.problems_label = QLabel("", self)
        self.problems_label.setTextFormat(Qt.TextFormat.RichText)
        self.progress = QProgressBar(self)
        self.progress.setMaximumWidth(220)
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.cancel_button = QToolButton(self)
        self.cancel_button.setDefaultAction(self.action_groups.analysis.stop_scan)
        sb.addWidget(self.status_label, 1)
        sb.addPermanentWidget(self.problems_label)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.cancel_button)
        self.exporting = ExportController(
            self,
            self.session,
            self.table,
            self.model,
            self.problems,
            self.image_panel,
            self.action_groups.view.labels.isChecked,
            self.data_dir,
        )
        self.tagging = TagsController(self, self)
        self.tagging.said.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.tagging.changed.connect(self._on_tags_changed)
        self.tagging.start()
        self.rewriting = RewriteController(
            self, self.session, self.open_requested.emit, self.filter_edit.text, write_dir
        )
        self._closing = False
        self._dock_decided = False  # the dock shows itself once; after that the person decides
        self._file_causes: dict[str, str] = {}  # file name -> why it broke (the analysis names it)
        self._file_errors: list[str] = []
        self._payload_kinds = ""

    def _build_filter_bar(self) -> QWidget:
        bar = QWidget(self)
        lay = QHBoxLayout(bar)
        lay.setContentsMargins(2, 2, 2, 2)
        self.filter_edit = FilterEdit(bar)
        self.filter_edit.setPlaceholderText(
            'Filter (Enter):  label == 3 and not problem    "image/object/class/text" contains "cat"'
        )
        self.filter_status = QLabel("", bar)
        self.filter_status.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.filter_edit, 1)
        lay.addWidget(self.filter_status)
        lay.addSpacing(8)
        lay.addWidget(QLabel("Sort by", bar))
        self.sort_box = QComboBox(bar)
        self.sort_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.sort_down = QToolButton(bar)
        lay.addWidget(self.sort_box)
        lay.addWidget(self.sort_down)
        return bar

    def _build_menus(self) -> None:
        a = self.action_groups
        m = self.menuBar().addMenu("&File")
        m.addAction(a.file.open)
        m.addAction(a.file.open_dir)
        self.recent_menu = m.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        m.addAction(a.file.reload)
        m.addSeparator()
        m.addAction(a.file.label_map)
        m.addAction(a.file.schema)
        m.addAction(a.file.predictions)
        m.addAction(a.export.save_image)
        m.addAction(a.export.salvage)
        m.addAction(a.export.repair)
        m.addAction(a.file.rewrite)
        ex = m.addMenu("&Export Selection")
        for action in a.export.selection:
            ex.addAction(action)
        m.addSeparator()
        m.addAction(a.file.close)
        m.addAction(a.file.quit)
        e = self.menuBar().addMenu("&Edit")
        e.addAction(a.tags.tag_undo)
        e.addAction(a.tags.tag_redo)
        e.addSeparator()
        tag_menu = e.addMenu("&Tag")
        for action in a.tags.on_selection:
            tag_menu.addAction(action)
        tag_menu.addSeparator()
        on_filter = tag_menu.addMenu("&Filter Result")
        for action in a.tags.on_filter:
            on_filter.addAction(action)
        v = self.menuBar().addMenu("&View")
        for action in a.view.image_tools:
            v.addAction(action)
        v.addSeparator()
        for dock in (
            self.problems_dock,
            self.summary_dock,
            self.plot_dock,
            self.compare_dock,
            self.evaluation_dock,
            self.shards_dock,
        ):
            toggle = dock.toggleViewAction()
            # a panel asked for comes to the front of the tabs it shares, not shown behind another
            toggle.triggered.connect(lambda on, d=dock: self._raise_dock(d) if on else None)
            v.addAction(toggle)
        v.addAction(a.view.summary)
        g = self.menuBar().addMenu("&Go")
        g.addAction(a.navigate.goto)
        g.addAction(a.navigate.filter)
        g.addAction(a.navigate.next_problem)
        g.addAction(a.navigate.prev_problem)
        g.addSeparator()
        g.addAction(a.analysis.rerun_checks)
        g.addAction(a.analysis.worker_processes)
        g.addAction(a.analysis.cancel)
        h = self.menuBar().addMenu("&Help")
        h.addAction(a.about)

    # settings -------------------------------------------------------------------------------------------

    def _restore(self) -> None:
        s = QSettings()
        geo = s.value("window/geometry")
        if geo is not None:
            self.restoreGeometry(geo)
        else:
            self.resize(1280, 800)
        split = s.value("window/splitter")
        if split is not None:
            self.splitter.restoreState(split)
        if not self.demo:
            add_recent(
                [str(f.path) for f in self.ds.files] if len(self.ds.files) == 1 else [self.ds.name], self.ds
            )

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for entry in QSettings().value("recent", [], type=list)[:MAX_RECENT]:
            act = self.recent_menu.addAction(entry)
            act.triggered.connect(lambda _=False, e=entry: self.open_requested.emit(recent_args(e)))
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none)").setEnabled(False)

    # the scan --------------------------------------------------------------------------------------------

    @Slot()
    def start_indexing(self) -> None:
        self.rows_timer.start()
        self.session.start()

    @Slot()
    def cancel_indexing(self) -> None:
        self.session.stop()

    @Slot()
    def _on_escape(self) -> None:
        """Esc stops what the focused part of the window started: in the filter box, the filter
        (never the scan of the dataset), or clears it once it has ended; elsewhere, the scan and the
        checks, or the filter when they are not running."""
        if self.filter_edit.hasFocus():
            self.filtering.escape()  # a running filter stops; a finished one is cleared
            return
        s = self.session
        if not (s.index_running or s.checks.running) and self.filtering.filtered:
            self.filtering.escape()  # nothing to stop: Esc clears the filter (a plot click's too)
            return
        self.cancel_indexing()

    @Slot()
    def resume_indexing(self) -> None:
        """Go on where a stopped scan stopped: the records already framed and verified are kept."""
        if self.session.index_running:
            return
        self.cancel_button.setDefaultAction(self.action_groups.analysis.stop_scan)
        self.cancel_button.setVisible(True)
        self.progress.setVisible(True)
        self.start_indexing()

    @Slot()
    def _grow_rows(self) -> None:
        before = self.model.rowCount()
        self.model.refresh()
        self._fit_number_columns()
        if before == 0 and self.model.rowCount():
            QTimer.singleShot(0, self.session.rows_painted)  # (after the paint the rows asked for)
        if before == 0 and self.model.rowCount() and self._selected is None:
            # after the first rows have painted: decoding record 0's image would compete with that paint
            QTimer.singleShot(100, self._select_first)
        self._update_status()

    @Slot()
    def _select_first(self) -> None:
        # never over a selection the person made in the meantime (Ctrl+A as the first rows arrive);
        # the table's focus arriving first makes row 0 current without selecting it (Qt's focus-in
        # with no current item): row 0 is selected then too, or it shows unmarked
        if (
            self.model.rowCount()
            and not self.table.selectionModel().hasSelection()
            and (self._selected is None or self.table.currentIndex().row() == 0)
        ):
            self.table.selectRow(0)

    @Slot(object)
    def _on_progress(self, p: IndexProgress) -> None:
        if self.model.rowCount() == 0 and p.records:
            self._grow_rows()  # the first rows go in at once; later ones on the timer
        bar = self.progress
        value = int(1000 * p.done_bytes / p.total_bytes) if p.total_bytes else bar.value()
        words = {ScanPhase.INDEX: "indexing %p%", ScanPhase.VERIFY: "verifying %p%"}.get(p.phase, "%p%")
        if value != bar.value() or words != bar.format():
            # painted with the rest of the window at the next paint: QProgressBar.setValue repaints
            # at once, and that repaint painted the table too (~50 ms of the UI thread a report
            # while a reopened split's 10,000 files were taken)
            bar.setUpdatesEnabled(False)
            bar.setValue(value)
            bar.setFormat(words)
            bar.setUpdatesEnabled(True)
        if p.phase is ScanPhase.VERIFY:
            self.model.status_changed()
        self._update_status()

    @Slot(int, object)
    def _on_problem(self, fi: int, problem: Problem) -> None:
        record, target, after = self.model.note_problem(fi, problem)
        self.problems.add(ProblemRow(fi, record, target, problem, after))
        self._show_problems_once()
        self._update_problem_counts()

    def _on_tags_changed(self) -> None:
        """Tags changed: the Tag column, the gallery's badges, and a filter that names `tag` again."""
        self.model.tags_changed()
        self.gallery.viewport().update()
        self.duplicates_view.viewport().update()
        text = self.filter_edit.text().strip()
        if text and self.model.filter_rows is not None:
            try:
                from tfrview.core.analysis.filterexpr import facts_used, parse

                names_tag = "tag" in facts_used(parse(text))
            except TfrviewError:
                names_tag = False
            if names_tag:
                self.filtering.apply()

    @Slot(int, object)
    def _on_reframed(self, fi: int, index) -> None:
        """A file framed again as `index_and_verify` frames it (records a header swallowed, records a
        line-ending conversion cut short): its index swapped in here, on the UI thread; the rows and
        the framing problems of it and the files after it (their numbers moved) are made again."""

        self.ds.files[fi].index = index
        if self.tagging.book is not None:  # its offsets: its tags are matched to them again
            self.tagging.book.forget(fi)
        file_level = {ProblemKind.UNREADABLE_FILE, ProblemKind.MISSING_SHARD}
        self.problems.remove_rows(lambda r: r.file_no >= fi and r.problem.kind in FRAMING_KINDS - file_level)
        self.model.forget_problems(fi)
        self.model.set_page(self.model.page_start)
        for fj in range(fi, len(self.ds.files)):
            for p in self.ds.files[fj].index.problems:
                self._on_problem(fj, p)

    @Slot(int, str)
    def _on_file_cause(self, fi: int, text: str) -> None:
        self._file_causes[self.ds.files[fi].path.name] = text
        self.problems_panel.show_file_causes(self._file_causes)

    def _show_problems_once(self) -> None:
        """The dock appears with the first problem (and stays as the person leaves it after that)."""
        if not self._dock_decided:
            self.problems_dock.show()
            self.problems_dock.raise_()  # in front of the Shards it shares the dock with
            self._dock_decided = True

    @Slot(int, str)
    def _on_file_error(self, fi: int, text: str) -> None:
        """A file that would not open or read: a row in the Problems panel, where the person looks."""
        self._file_errors.append(text)
        f = self.ds.files[fi]
        kind = (
            f.gap_kind if f.missing else ProblemKind.UNREADABLE_FILE
        )  # missing_shard or split_missing_shard
        self.problems.add(ProblemRow(fi, None, None, Problem(kind, 0, None, None, text)))
        self._show_problems_once()
        self._update_problem_counts()

    def _update_problem_counts(self) -> None:
        counts = self.problems.counts
        n = sum(counts.values())
        if not n:
            self.problems_label.setText("")
            return
        self.problems_label.setText(problems_text(counts))
        self.problems_label.setToolTip(problems_tip(counts, self._file_errors))
        shown = self.problems.shown
        self.problems_dock.setWindowTitle(f"Problems ({n})" if shown == n else f"Problems ({shown} of {n})")

    @Slot(object)
    def _on_problem_chosen(self, row: ProblemRow) -> None:
        if row.target is not None:
            self.select_record(row.target)

    def step_problem(self, backwards: bool) -> None:
        """F8 / Shift+F8: the next or previous problem (every one of them, in the panel's order: two
        on one record are two steps, a group's repeats one by one, and damage after the last record
        is reached too)."""
        self.problems.flush_pending()
        leaves = self.problems.leaves()
        if not leaves:
            return
        cur = self.problems_view.current_problem()
        at = self.problems_view.currentIndex()
        if cur is not None:
            i = next((k for k, r in enumerate(leaves) if r is cur), -1)
        elif at.isValid():  # a group's row: step to its first (or, backwards, the one before it)
            first = self.problems.row_at(at)
            i = next((k for k, r in enumerate(leaves) if r is first), 0) - (0 if backwards else 1)
        else:
            i = -1 if not backwards else len(leaves)
        i = (i + (-1 if backwards else 1)) % len(leaves)
        self.problems_view.show_problem(leaves[i])  # shows its record (problem_chosen)

    @Slot(object)
    def _on_index_finished(self, p: IndexProgress | None) -> None:
        if self._closing:
            return  # the window is going away and its files are closed
        self.rows_timer.stop()
        self.model.refresh(full=True)
        self._fit_number_columns(full=True)
        self._files_facts_cache = None  # every file's compression asked again
        self.model.status_changed(force=True)
        stopped = p is not None and p.phase in (ScanPhase.CANCELLED, ScanPhase.ERROR)
        self.cancel_button.setDefaultAction(self.action_groups.analysis.resume)
        self.cancel_button.setVisible(stopped)  # a stopped scan can always be resumed, visibly
        self.progress.setVisible(stopped)
        if stopped:
            self.progress.setFormat("stopped at %p%")
        self._update_status()
        self.model.resort()  # the rows framed and verified since the sort, in their places
        if self._selected is not None:
            self._request(self._selected)

    # the analysis ------------------------------------------------------------------------------------------

    @Slot()
    def _on_analysis_started(self) -> None:
        """A new analysis: the QA findings of the last one go (the scan's problems stay)."""
        self.problems.remove_kinds({str(k) for k in QA_KINDS})
        self._file_causes.clear()
        self.problems_panel.show_file_causes({})
        self.model.clear_qa()
        self._update_problem_counts()
        self.summary_panel.show_progress("computing the summary…")
        self.duplicates_model.clear()
        self._name_duplicates_tab()

    @Slot(object)
    def _on_duplicates(self, msg) -> None:
        """The analysis's groups of copies (messages.DuplicateGroups), in the Duplicates tab."""
        self.duplicates_model.set_groups(msg, self.ds.global_number)
        self._name_duplicates_tab()

    def _name_duplicates_tab(self) -> None:
        n = self.duplicates_model.total
        self.tabs.setTabText(
            self.tabs.indexOf(self.duplicates_view), f"Duplicates ({n:,})" if n else "Duplicates"
        )

    @Slot(int)
    def _on_copy_chosen(self, n: int) -> None:
        """A member clicked in the Duplicates view: that record, shown in the table."""
        self.tabs.setCurrentWidget(self.table)
        self.select_record(n)

    @Slot(object, bool)
    def _on_summary(self, summary: dict, partial: bool) -> None:
        if self.summary_panel.shown_split is None or partial:
            self.summary_panel.show_summary(summary, partial)
        self.filtering.offer_keys()

    @Slot(str)
    def _on_split_summary(self, _split: str) -> None:
        """A split's summary arrived: the panel's chooser offers it (the one shown is kept)."""
        self.summary_panel.set_splits(list(self.session.split_summaries))
        self._show_chosen_summary(self.summary_panel.shown_split)

    @Slot(object)
    def _show_chosen_summary(self, split: str | None) -> None:
        """The Dataset Summary of the split chosen (None: the whole dataset's)."""
        s = self.session
        summary = s.summary if split is None else s.split_summaries.get(split)
        if summary is not None:
            self.summary_panel.show_summary(summary, s.summary_partial if split is None else False)

    @Slot(object)
    def _on_sample(self, facts: SampleFacts) -> None:
        """A sample of records, read by the indexer: what they hold (for the status bar and the
        filter box's completions)."""
        self.filtering.offer_keys()
        kinds = sorted(facts.kinds, key=lambda k: -facts.kinds[k])
        others = f" (+{len(kinds) - 1} other kind{'s' if len(kinds) > 2 else ''})" if len(kinds) > 1 else ""
        self._payload_kinds = f"{_kind_title(kinds[0])} payloads{others}" if kinds else ""
        self._update_status()

    @Slot(int, object)
    def _on_child_failed(self, fi: int, failed) -> None:
        """A scan process failed and the file was framed here instead: said, not hidden (and logged)."""
        name = self.ds.files[fi].path.name
        self.statusBar().showMessage(
            f"{name}: the scan process failed ({failed.message}); framed here instead", 10000
        )

    @Slot(str)
    def _on_predictions_loaded(self) -> None:
        """Predictions loaded from a file: the gallery's tiles and the record shown draw them."""
        self.gallery_model.clear()
        self.image_panel.relayer()

    def _on_label_map_changed(self, note: str) -> None:
        """Everything drawn or summarised with class names follows the session's label map."""
        lm = self.session.label_map
        self.model.set_label_map(lm, self.schema)
        self.thumbs.reset(lm)
        self.gallery_model.clear()
        if note:
            self.statusBar().showMessage(note, 8000)
        self.problems_panel.show_notice(self.session.label_map_note)  # where a person looks, to stay
        if note:
            self._show_problems_once()
        self._update_status()
        if self._selected is not None:
            self._request(self._selected)

    @Slot()
    def _update_status(self, *_args) -> None:
        s = self.session
        p = s.index_progress
        opened, size_bytes, compressions = self._files_facts()
        m = self.model
        page = None
        if m.filter_rows is None and m.total() > m.row_cap:
            page = (m.page_start, min(m.page_start + m.row_cap, m.total()) - 1)
        stored = p is not None and s.stored_files and s.stored_files == opened and s.stored_at
        facts = StatusFacts(
            records=m.total(),
            size_bytes=size_bytes,
            compressions=compressions,
            payload_kinds=self._payload_kinds,
            files=len(self.ds.files),
            missing=len(self.ds.missing),
            phase=None if p is None else p.phase,
            note="" if p is None else p.note,
            done_bytes=0 if p is None else p.done_bytes,
            total_bytes=0 if p is None else p.total_bytes,
            checked_at=s.stored_at if stored else None,
            checks=s.checks_text(m.total()),
            analysis_note=s.analysis_note,
            labels=s.label_map_path.name if s.label_map_path else "",
            page=page,
            **self._tfds_facts(),
        )
        self.status_label.setText(status_text(facts))
        if self.ds.missing:
            self.status_label.set_extra_tip(missing_tip(self.ds.missing))

    def _tfds_facts(self) -> dict:
        """The TFDS dataset the window opened (one), as the status line says it: name/version and
        its metadata's splits and records."""
        if len(self.ds.tfds) != 1 or self.ds.tfds[0].info is None:
            return {}
        t = self.ds.tfds[0]
        return {
            "tfds": t.title,
            "tfds_splits": len(t.info.splits),
            "tfds_records": t.info.num_examples,
            "tfds_newest_of": t.newest_of,
        }

    def _files_facts(self) -> tuple[int, int, frozenset[str]]:
        """(files opened, their bytes, their compressions): counts and bytes the same for the whole
        session, so taken once (the status line is written at every progress report, and walking
        10,000 files for it three times took 0.15 s of the UI thread each time); compressions of
        the files read so far (`Dataset.compressions_known`: asking each file would open all
        10,000 before the first paint), walked again at most every second until all are known,
        and at the scan's end."""
        facts = getattr(self, "_files_facts_cache", None)
        now = time.monotonic()
        if facts is None or facts[0] is not self.ds:
            opened = [f for f in self.ds.files if f.source is not None]
            comps, complete = self.ds.compressions_known()
            facts = (self.ds, (len(opened), sum(f.source.file_size for f in opened), comps), now, complete)
            self._files_facts_cache = facts
        elif not facts[3] and now - facts[2] > 1.0:  # (the files not read before asked again)
            comps, complete = self.ds.compressions_known()
            facts = (self.ds, (*facts[1][:2], comps), now, complete)
            self._files_facts_cache = facts
        return facts[1]

    # the filter and the shards -------------------------------------------------------------------------------

    @Slot()
    def _reselect(self) -> None:
        """The filter was cleared: the selected record again, among every record."""
        if self._selected is not None:
            self.select_record(self._selected)
            if getattr(self, "_pane_emptied", False):
                self._pane_emptied = False
                self._request(self._selected)

    @Slot(object)
    def _on_filter_state(self, state: JobState) -> None:
        if not state.running:
            self.model.resort()  # the matches came in record order: sorted as the table is
        self._update_status()
        if state.phase is Phase.DONE and self.filtering.filtered:
            self._follow_filter()

    def _follow_filter(self) -> None:
        """The record shown is one the filter keeps, as a file browser's selection is: the first
        match when the filter leaves the shown record out; none, an empty pane that says so."""
        m = self.model
        emptied, self._pane_emptied = getattr(self, "_pane_emptied", False), False
        if self._selected is not None and m.row_of(self._selected) is not None:
            cur = self.table.currentIndex()
            if not cur.isValid() or m.record_number(cur.row()) != self._selected:
                self.select_record(self._selected)  # the new matches' rows: its row highlighted again
            if emptied:  # a filter before this one matched nothing and emptied the pane
                self._request(self._selected)
            return
        if m.match_count:
            self.select_record(m.record_number(0))
        else:
            self.image_panel.show_message("No record matches the filter (Esc clears it)")
            self.tree.show_payload(None)
            self._tree_for = None
            self._pane_emptied = True

    @Slot(int, Qt.SortOrder)
    def _on_sort_indicator(self, section: int, order: Qt.SortOrder) -> None:
        if 0 <= section < len(self.model.columns) and self.model.columns[section] in SORTABLE:
            self._sorted_by = (section, order)  # (a lazy column's click was refused: not the order)
        cur = self.table.currentIndex()
        if cur.isValid():
            self.table.scrollTo(cur, QAbstractItemView.ScrollHint.PositionAtCenter)
            self._sync_gallery(cur.row())

    @Slot(str)
    def _on_sort_refused(self, why: str) -> None:
        """A lazily read column was clicked: the indicator back where the rows' order is, and why."""
        hh = self.table.horizontalHeader()
        hh.blockSignals(True)
        hh.setSortIndicator(*self._sorted_by)
        hh.blockSignals(False)
        hh.viewport().update()
        self.statusBar().showMessage(why, 5000)

    @Slot(int)
    def _on_shard_shown(self, first: int) -> None:
        self.select_record(first)
        self.table.setFocus()

    # selection and decoding ----------------------------------------------------------------------------------

    @Slot(QModelIndex, QModelIndex)
    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        n = self.model.record_number(current.row())
        if n != self._selected:
            self._image_choice = 0
        self._selected = n
        self._sync_gallery(current.row())
        self._request(n)

    @Slot()
    def _on_scored(self) -> None:
        """Sorted by an image score: the first rows (the darkest, the blurriest) in view, the
        record shown kept."""
        self.table.scrollToTop()
        self.gallery.scrollToTop()
        cur = self.table.currentIndex()
        if cur.isValid():
            self._sync_gallery(cur.row())

    def _sync_gallery(self, row: int) -> None:
        """The gallery's current item follows the table's, silently: a gallery first shown with no
        current item would take its first one, and with it the selection (issue 9)."""
        sm = self.gallery.selectionModel()
        idx = self.gallery_model.index(row, 0)
        if sm is None or not idx.isValid() or sm.currentIndex() == idx:
            return
        sm.blockSignals(True)
        sm.setCurrentIndex(idx, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        sm.blockSignals(False)

    def _request(self, n: int) -> None:
        """Ask the decode worker for record n (it reads it too: on a cold file the read waits for the
        disk); the tree and image panel fill in when it answers."""
        view = self.image_panel.view
        self.decoder.request(
            DecodeRequest(
                n,
                None,
                self._image_choice,
                self.label_map,
                self._specs.get(n),
                (view.width(), view.height()),
                self.schema,
                *self._folder_and_arrayrecord_of(n),
            )
        )

    def _folder_and_arrayrecord_of(self, n: int) -> tuple[str | None, str | None]:
        """The local folder of record n's file, where a TFDS dataset keeps its features.json, and
        the file when it is a local ArrayRecord/Riegeli file (its own words join the tree): its file
        located by the table's own file starts (`Dataset.locate` walks every file: 10,000 shards)."""
        try:
            f = self.ds.files[self.model.locate(n)[0]]
        except IndexError:  # (no file: `model.locate` raises nothing of its own)
            return None, None
        path = f.path
        local = isinstance(path, Path) and f.source is not None
        folder = str(path.parent) if isinstance(path, Path) else None
        return folder, str(path) if local and f.compression == Compression.ARRAYRECORD else None

    @Slot(QModelIndex, QModelIndex)
    def _on_gallery_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        n = self.gallery_model.record_number(current.row())
        if n == self._selected:
            return
        row = self.model.row_of(n)
        sm = self.table.selectionModel()
        if row is not None and sm.isRowSelected(row, QModelIndex()):
            # inside the table's selection (Ctrl+A, then the Gallery tab, which makes its first item
            # current): the record shown moves, the person's selection stays
            sm.setCurrentIndex(self.model.index(row, 0), QItemSelectionModel.SelectionFlag.NoUpdate)
        else:
            self.select_record(n)

    def data_dir(self) -> str:
        """The folder of the data: where dialogs that read about this dataset open (label maps,
        schemas); dialogs for writing open in `settings.write_dir()`, never here unasked."""
        for f in self.ds.files:
            if f.source is not None and isinstance(f.path, Path):  # a URL's folder is not one to save in
                return str(f.path.parent.resolve())
        return last_dir()

    def _fit_number_columns(self, full: bool = False) -> None:
        """The #, offset and size columns as wide as their largest value, so 1,999,999 never shows
        as '1999…' nor an offset past 1 GB as '1,234,5…' (the maxima come from the index arrays;
        `full`: every file asked, `RecordTableModel.widest_numbers`)."""
        hh = self.table.horizontalHeader()
        fm = self.table.fontMetrics()
        widths = getattr(self, "_number_widths", {})
        self._number_widths = widths
        for name, value in self.model.widest_numbers(full).items():
            if name not in self.model.columns:
                continue
            width = fm.horizontalAdvance(number_text(value)) + 20  # the cell's margins
            if width > widths.get(name, 0):
                widths[name] = width
                i = self.model.columns.index(name)
                hh.resizeSection(i, max(hh.sectionSize(i), width))

    @Slot()
    def choose_jobs(self) -> None:
        """How many worker processes the analysis uses (remembered; the next analysis uses it)."""

        n, ok = QInputDialog.getInt(
            self,
            "Worker Processes",
            "Worker processes for the QA checks and summary\n"
            "(each reads one file at a time, below this window's priority):",
            analysis_jobs(),
            1,
            512,
        )
        if ok:
            QSettings().setValue("analysis/jobs", n)

    def _raise_dock(self, dock: QDockWidget) -> None:
        """A dock the person turned on: shown in front, with the focus in it."""
        dock.show()
        dock.raise_()
        w = dock.widget()
        if w is not None:
            w.setFocus()

    @Slot()
    def show_summary(self) -> None:
        """Ctrl+I: the Dataset Summary, in front of the Problems it shares the dock with."""
        self.summary_dock.show()
        self.summary_dock.raise_()

    @Slot(int)
    def _on_tab(self, i: int) -> None:
        if self.tabs.widget(i) is self.gallery and self._selected is not None:
            r = self.model.row_of(self._selected)
            if r is not None:
                idx = self.gallery_model.index(r, 0)
                self.gallery.setCurrentIndex(idx)
                self.gallery.scrollTo(idx)

    @Slot(object)
    def _on_view(self, view: RecordView) -> None:
        if view.number != self._selected:
            return  # a stale answer: the person has moved on
        if view.read_error is not None:
            self.image_panel.show_message(view.read_error)
            self.tree.show_payload(None)
            self._tree_for = None
            return
        status = self.model.status_of(view.number)
        fi, k = self.model.locate(view.number)
        # an unverified record cut in its CRC says so
        own = self.model.problems_at(fi, k) if status != RecordStatus.OK else []
        note = "\n".join(problem_line(p) for p in own)
        if self._tree_for != (view.number, view.payload.raw, note, view.named_type):
            if view.named is not None:
                self.tree.show_named(view.named_type, view.named, note, view.payload.limits)
            else:
                self.tree.show_payload(view.payload, note, view.tfds, view.declared, view.file_info)
            self._tree_for = (view.number, view.payload.raw, note, view.named_type)
        self.tree.set_thumbnails(view.thumbnails)
        self.image_panel.show_view(
            view, damaged=problem_line(own[0]) if own and status != RecordStatus.UNVERIFIED else ""
        )
        if view.payload.features and view.number not in self._specs:
            spec = remembered_spec(view.payload.features)
            if spec is not None:  # the person chose box keys for this layout before: redo with them
                self._specs[view.number] = spec
                self._request(view.number)

    @Slot(bool)
    def _on_imageless(self, imageless: bool) -> None:
        """A record without an image (tabular data): the feature tree takes the image's room; the
        split comes back with the next image."""
        sp = self.right_splitter
        if imageless:
            self._image_sizes = sp.sizes()
            top = self.image_panel.minimumSizeHint().height()
            sp.setSizes([top, max(sum(self._image_sizes) - top, 1)])
        elif self._image_sizes is not None:
            sp.setSizes(self._image_sizes)
            self._image_sizes = None

    @Slot(int)
    def _on_image_chosen(self, i: int) -> None:
        self._image_choice = i
        if self._selected is not None:
            self._request(self._selected)

    def select_record(self, n: int) -> None:
        if n >= self.model.total():
            return
        if self.model.row_of(n) is None and self.model.filter_rows is not None:
            return  # not among the matches
        if self.model.row_of(n) is None:
            self.model.set_page((n // self.model.row_cap) * self.model.row_cap)
        row = self.model.row_of(n)
        idx = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)

    # actions ------------------------------------------------------------------------------------------------

    @Slot(object)
    def _on_number_typed(self, n: int) -> None:
        """Digits typed in the table: go to that record (the last one if the number is past the end)."""
        total = self.model.total()
        if total:
            self.select_record(min(n, total - 1))
            self.statusBar().showMessage(
                f"record {n:,}" + ("" if n < total else f" (there are {total:,})"), 2000
            )

    @Slot(str)
    def _on_text_typed(self, text: str) -> None:
        """Other text typed in the table is the start of a filter."""
        self.filter_edit.setFocus()
        self.filter_edit.end(False)
        self.filter_edit.insert(text)

    @Slot()
    def go_to_record(self) -> None:
        total = self.model.total()
        if not total:
            return
        n, ok = QInputDialog.getInt(
            self, "Go to record", f"Record number (0–{total - 1:,}):", self._selected or 0, 0, total - 1
        )
        if ok:
            self.select_record(n)

    @Slot()
    def open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            "Open TFRecord files",
            last_dir(),
            "TFRecord files (*.tfrecord* *.tfrec *.record *.gz *-of-*);;"
            "TFDV statistics, schemas, anomalies (*.pb *.pbtxt);;All files (*)",
        )
        if paths:
            QSettings().setValue("last_dir", str(Path(paths[0]).parent))
            self.open_requested.emit(paths)

    @Slot()
    def open_folder(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Open a folder of shards", last_dir())
        if d:
            QSettings().setValue("last_dir", d)
            self.open_requested.emit([d])

    @Slot()
    def reload(self) -> None:
        self.open_requested.emit(["--reload", *[str(f.path) for f in self.ds.files]])

    @Slot()
    def choose_label_map(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load label map", self.data_dir(), "Label maps (*.pbtxt *.txt);;All files (*)"
        )
        if path:
            self.set_label_map(Path(path))

    @Slot()
    def choose_schema(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load schema", self.data_dir(), "Schemas (*.desc *.pb *.protoset *.proto);;All files (*)"
        )
        if not path:
            return
        from tfrview.core.records.protoschema import message_names  # (with the first schema, not the window)

        try:
            names = message_names(path)
        except TfrviewError as exc:
            QMessageBox.warning(self, "Schema", str(exc))
            return
        name, ok = QInputDialog.getItem(self, "Schema", "The message the records hold:", names, 0, False)
        if ok:
            self.set_schema(Path(path), name)

    def set_schema(self, path: Path, message: str | None) -> bool:
        """Show records of a custom protobuf with the field names of `message` from `path`."""
        from tfrview.core.records.protoschema import load_schema  # (with the first schema, not the window)

        try:
            self.schema = load_schema(path, message)
        except TfrviewError as exc:
            QMessageBox.warning(self, "Schema", str(exc))
            return False
        self.statusBar().showMessage(f"records shown as {self.schema.name}", 5000)
        self.model.set_label_map(self.session.label_map, self.schema)  # the summaries by field name too
        self._tree_for = None
        if self._selected is not None:
            self._request(self._selected)
        return True

    def set_label_map(self, path: Path) -> bool:
        try:
            self.session.set_label_map(path)
        except TfrviewError as exc:
            QMessageBox.warning(self, "Label map", str(exc))
            return False
        return True

    @Slot()
    def choose_box_keys(self) -> None:
        v = self.image_panel.current
        if v is None or not v.payload.features:
            QMessageBox.information(self, "Box keys", "Select a record with features first.")
            return
        feats = v.payload.features
        dlg = BoxSpecDialog(feats, v.overlay.spec if v.overlay else None, self)
        if dlg.exec():
            remember_spec(feats, dlg.spec())
            self.thumbs.specs = remembered_specs()  # thumbnails made from now on draw the choice
            self._specs.clear()
            self._request(v.number)

    # filtering -------------------------------------------------------------------------------------------

    # salvage and export -----------------------------------------------------------------------------------

    def _fit(self) -> None:
        self.image_panel.view.fit()

    def _actual(self) -> None:
        self.image_panel.view.actual_size()

    def _toggle_boxes(self, on: bool) -> None:
        self.image_panel.view.show_boxes = on
        self.image_panel.view.update()

    def _toggle_labels(self, on: bool) -> None:
        self.image_panel.view.show_labels = on
        self.image_panel.view.update()

    def about_box(self) -> QMessageBox:
        box = QMessageBox(self)
        box.setWindowTitle("About tfrview")
        box.setIconPixmap(QApplication.windowIcon().pixmap(96, 96))
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(
            f"<h3>tfrview {__version__}</h3><p>An inspector for TensorFlow TFRecord files: records, features, "
            "images with boxes and labels, and every damaged byte.</p>"
            "<p>Reads plain, GZIP and ZLIB files without TensorFlow.</p>"
            f"<p>What goes wrong is logged to {html.escape(str(window_log_path()))}</p>"
        )
        return box

    def about(self) -> None:
        self.about_box().exec()

    def _quit(self) -> None:
        QApplication.closeAllWindows()

    # drag and drop -----------------------------------------------------------------------------------------------

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_requested.emit(paths)

    # closing --------------------------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop and join every worker, then close the files (an mmap cannot close under a reader)."""
        self._closing = True
        self.rows_timer.stop()
        self.session.shutdown()
        for w in (self.decoder, self.thumbs, self.summarizer):
            w.cancel()
            w.wait()
        self.exporting.shutdown()
        self.rewriting.shutdown()
        self.plots.shutdown()
        self.comparing.shutdown()
        self.evaluating.shutdown()
        self.filtering.stop()
        self.sorting.shutdown()
        self.tagging.close()

        self.ds.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        s = QSettings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/splitter", self.splitter.saveState())
        self.shutdown()
        super().closeEvent(event)


def _kind_title(kind: str) -> str:
    """A payload kind's name for a person; a word tfrview does not know is shown as it is."""
    return PayloadKind(kind).title if kind in PayloadKind._value2member_map_ else kind


def add_recent(entries: list[str], ds: Dataset) -> None:
    s = QSettings()
    recent = [e for e in s.value("recent", [], type=list) if e not in entries]
    label = entries[0] if len(entries) == 1 else ds.name
    if len(ds.files) > 1:
        label = str(ds.files[0].path.parent / ds.name) if "?" in ds.name else str(ds.files[0].path.parent)
    s.setValue("recent", [label, *recent][:MAX_RECENT])


def recent_args(entry: str) -> list[str]:
    return [entry]
