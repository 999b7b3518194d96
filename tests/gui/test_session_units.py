"""DatasetSession and the controllers on their own, without a MainWindow: a real dataset, real
workers and job processes, and typed job messages fed in; assertions on their state and signals."""

from __future__ import annotations

import pytest

from tests.helpers import framed, payloads
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.procs import messages as m
from tfrview.core.procs.requests import AnalyzeRequest, SeriesRequest
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.gui.job_state import Phase
from tfrview.gui.scan_phase import ScanPhase
from tfrview.gui.workers.jobs import JobWorker


@pytest.fixture
def session_of(qapp):
    """A DatasetSession over paths (no window); shut down at the end of the test."""
    from tfrview.gui.session import DatasetSession

    made = []

    def _make(paths, run_checks: bool = False) -> DatasetSession:
        s = DatasetSession(Dataset.open([str(p) for p in paths]), run_checks=run_checks)
        made.append(s)
        return s

    yield _make
    for s in made:
        s.shutdown()
        s.ds.close()


def _damaged(tmp_path, n: int = 40):
    data, offs = framed(payloads(n))
    b = bytearray(data)
    b[offs[5] + 14] ^= 0x10  # a bit of record 5's data: its data CRC fails
    path = tmp_path / "d.tfrecord"
    path.write_bytes(bytes(b))
    return path


def test_the_session_scans_and_analyses_without_a_window(qtbot, session_of, tmp_path):
    s = session_of([_damaged(tmp_path)], run_checks=True)
    found, ended, summaries = [], [], []
    s.problem_found.connect(lambda fi, p: found.append((fi, p.kind, p.record)))
    s.scan_ended.connect(ended.append)
    s.summary_ready.connect(lambda summary, partial: summaries.append((summary["records"], partial)))
    s.start()
    qtbot.waitUntil(lambda: bool(ended), timeout=20000)
    assert ended[0].phase is ScanPhase.DONE and ended[0].records == 40 and s.scan_over
    assert (0, ProblemKind.BAD_DATA_CRC, 5) in found
    assert s.sample is not None and s.sample.kinds  # a sample of records, once framed
    qtbot.waitUntil(lambda: not s.checks.running and s.checks.phase is not Phase.IDLE, timeout=120000)
    assert s.checks.phase is Phase.DONE, s.checks  # the analysis job followed
    # the summary counts the 39 records it could decode (record 5 fails its CRC)
    assert s.summary["records"] == 39 and not s.summary_partial and summaries[-1] == (39, False)


def _fed(s, *msgs) -> None:
    """Messages delivered as the session's analysis job would deliver them."""
    s._on_analysis_items(s.analyzer, list(msgs))


def test_the_session_takes_each_kind_of_analysis_message(qtbot, session_of, tmp_path):
    s = session_of([_damaged(tmp_path)])
    s.analyzer = JobWorker(AnalyzeRequest(paths=()), s)  # never started: the messages are fed here
    problems, causes, plots, states = [], [], [], []
    s.problem_found.connect(lambda fi, p: problems.append((fi, p)))
    s.cause_found.connect(lambda *a: causes.append(a))
    s.file_cause_found.connect(lambda *a: causes.append(a))
    s.plot_ready.connect(plots.append)
    s.checks_changed.connect(states.append)
    finding = Problem(ProblemKind.NAN_OR_INF, 0, 40, 3, "NaN in loss", feature="loss")
    _fed(
        s,
        m.Progress("analysis", 1, 2),
        m.ProblemFound(0, finding),
        m.CauseFound(0, "bad_data_crc", 99, "one bit"),
        m.FileCause(0, "a copy cut short"),
        m.Plot({"series": {"key": "loss"}}),
    )
    assert problems == [(0, finding)] and causes == [
        (0, "bad_data_crc", 99, "one bit"),
        (0, "a copy cut short"),
    ]
    assert plots[0].series_key == "loss"
    assert states[-1].phase is Phase.RUNNING and (states[-1].done, states[-1].total) == (1, 2)
    _fed(s, m.Summary({"records": 40}, True))
    assert s.summary_partial and s.analysis_note == ""
    _fed(s, m.Summary({"records": 40}, False, cached=1, files=1, analysed_at=1700000000.0), m.Done())
    assert not s.summary_partial and s.analysis_note.startswith("checked 2023-11-1")
    assert s.checks.phase is Phase.DONE


def test_a_failed_analysis_is_said_and_a_replaced_one_is_not_heard(qtbot, session_of, tmp_path):
    s = session_of([_damaged(tmp_path)])
    old = JobWorker(AnalyzeRequest(paths=()), s)
    s.analyzer = JobWorker(AnalyzeRequest(paths=()), s)
    s._on_analysis_items(old, [m.Failed("late words of a replaced run", "internal")])
    assert s.checks.phase is Phase.IDLE  # not this run's
    _fed(s, m.Progress("analysis", 0, 1), m.Failed("cannot read the store: disk I/O error", "StoreError"))
    assert s.checks.phase is Phase.FAILED and s.checks.error == "cannot read the store: disk I/O error"
    assert s.checks.text("QA checks") == "QA checks failed: cannot read the store: disk I/O error"


def test_a_failing_scan_process_is_said_never_swallowed(qtbot, session_of, tmp_path, monkeypatch, caplog):
    """The scan process cannot open a file deleted after the window read it (the window holds its
    descriptor once a file is read): the file is framed and verified in the window's process, and the failure reaches
    the session's `child_failed` and the log (it was swallowed by `except: pass`)."""
    import tfrview.gui.workers.scan as index_mod

    monkeypatch.setattr(index_mod, "CHILD_MIN_BYTES", 0)  # a small file goes to the scan process too
    path = tmp_path / "gone.tfrecord"
    path.write_bytes(framed(payloads(3000))[0])  # more than the first chunk framed before the child starts
    s = session_of([path])
    assert s.ds.files[0].compression == "none"  # read once: the window holds its descriptor from now on
    path.unlink()
    failures, ended = [], []
    s.child_failed.connect(lambda fi, failed: failures.append((fi, failed)))
    s.scan_ended.connect(ended.append)
    with caplog.at_level("WARNING", logger="tfrview.gui.workers.scan"):
        s.start()
        qtbot.waitUntil(lambda: bool(ended), timeout=30000)
    assert ended[0].phase is ScanPhase.DONE and ended[0].records == 3000 and ended[0].problems == 0
    assert [fi for fi, _ in failures] == [0, 0]  # the index pass and the verify pass each said it
    assert all(f.kind == "SourceError" and "gone.tfrecord" in f.message for _, f in failures)
    assert caplog.text.count("the scan process for") == 2 and "SourceError" in caplog.text


def test_the_filter_controller_without_a_window(qtbot, session_of, tmp_path):
    """A real filter job fills the table model's matches; fed messages move its state, and a
    Failed says why."""
    from PySide6.QtWidgets import QLabel

    from tfrview.gui.controllers.filter import FilterController
    from tfrview.gui.models.problems import ProblemsModel
    from tfrview.gui.models.record_table import RecordTableModel
    from tfrview.gui.widgets.filter_edit import FilterEdit

    s = session_of([_damaged(tmp_path)])
    ended = []
    s.scan_ended.connect(ended.append)
    s.start()
    qtbot.waitUntil(lambda: bool(ended), timeout=20000)
    model = RecordTableModel(s.ds)
    model.refresh()
    edit, status = FilterEdit(), QLabel()
    c = FilterController(s, model, ProblemsModel([str(tmp_path / "d.tfrecord")]), edit, status)
    states = []
    c.state_changed.connect(states.append)
    c.run_text("record >= 37")
    qtbot.waitUntil(lambda: c.state.phase is not Phase.RUNNING and not c.job.isRunning(), timeout=120000)
    assert c.state.phase is Phase.DONE, c.state
    assert model.filter_rows[: model.match_count].tolist() == [37, 38, 39]
    c.job.wait()
    c._on_items(c.job, [m.Note("the stored facts keep k only in part"), m.Failed("no facts", "NotStored")])
    assert status.toolTip() == "the stored facts keep k only in part"
    assert c.state.phase is Phase.FAILED and c.state.error == "no facts" and states[-1] == c.state


def test_the_record_table_keeps_each_records_problems_as_lines(qapp, tmp_path):
    """A record's problems are kept a line each (never one text split back): its own, the damage
    beside it and QA findings, in that order; the tooltip joins them only to show them."""
    from tfrview.core.problems import Severity
    from tfrview.gui.models.record_table import RecordTableModel, problem_line

    data, offs = framed(payloads(10))
    path = tmp_path / "p.tfrecord"
    path.write_bytes(data)
    ds = Dataset.open([str(path)])
    for _ in ds.scan():
        pass
    model = RecordTableModel(ds)
    model.refresh()
    crc = Problem(ProblemKind.BAD_DATA_CRC, offs[3], offs[4] - offs[3], 3, "data CRC mismatch\nsecond line")
    gap = Problem(ProblemKind.UNREADABLE_BYTES, offs[3], 9, None, "9 unreadable bytes")
    nan = Problem(ProblemKind.NAN_OR_INF, offs[3], 0, 3, "NaN in loss")
    for p in (crc, nan, gap):
        model.note_problem(0, p)
    own, beside, qa = (
        f"bad_data_crc: {crc.text}",
        f"before this record: unreadable_bytes: {gap.text}",
        f"nan_or_inf: {nan.text}",
    )
    assert "\n" not in own  # a problem's message is one line, whatever the data says
    assert model.problem_lines(3) == [own, beside, qa]
    assert model.problems_at(0, 3) == [crc] and model.problems_at(0, 4) == []  # data, not text
    assert model.severity_of(3) is Severity.ERROR and model.severity_of(2) is None  # the damage beside it
    assert problem_line(crc) == own and problem_line(gap, "before this record") == beside
    assert model.problems_text(3) == "\n".join([own, beside, qa]) and model.problems_text(2) == ""
    ds.close()


def test_the_plot_controller_without_the_main_window(qtbot, session_of, tmp_path):
    """Fed typed messages, the Plot panel draws what each plot is and says a job's failure; an event
    file's first plot, sent with the analysis, is kept for its key (no job for it later)."""
    from PySide6.QtWidgets import QMainWindow

    from tfrview.gui.controllers.plots import PlotController

    s = session_of([_damaged(tmp_path)])
    host = QMainWindow()  # a dock's host: not the tfrview window
    qtbot.addWidget(host)
    c = PlotController(s, host, lambda: str(tmp_path))
    series = {
        "key": "loss",
        "x_name": "step",
        "x": [0, 1, 2],
        "y": [1.0, 0.5, 0.25],
        "records": [0, 1, 2],
        "points": 3,
        "stride": 1,
    }
    s.plot_ready.emit(m.Plot({"series": series}))
    assert c._ready["loss"] == m.Plot({"series": series}) and "3 values" in c.panel.status.text()
    c.job = JobWorker(SeriesRequest(paths=(), key="size"), c)  # never started: its messages are fed here
    histogram = {"key": "size", "edges": [0, 1, 2], "counts": [4, 6], "values": 10}
    c._on_items(c.job, [m.Plot({"histogram": histogram})])
    assert c.panel.status.text().startswith("10 values in 2 bars")
    c._on_items(c.job, [m.Failed("no feature 'size' in the stored facts", "NoPlot")])
    assert c.panel.status.text() == "⚠ no feature 'size' in the stored facts"
    c._on_items(
        JobWorker(SeriesRequest(paths=(), key="size"), c), [m.Failed("a replaced job's words", "internal")]
    )
    assert "replaced" not in c.panel.status.text()


def test_a_bug_in_a_thumbnail_is_said_and_logged_with_its_traceback(qtbot, tmp_path, monkeypatch, caplog):
    """A failure that is no data error (a bug) shows as the thumbnail's error and lands in the log
    with its traceback, not only in the cell."""
    import tfrview.gui.workers.thumbnails as thumbnails
    from tfrview.gui.workers.thumbnails import ThumbnailPool

    def broken(*_a, **_k):
        raise ZeroDivisionError("a bug in thumbnails")

    monkeypatch.setattr(thumbnails, "make_thumbnail", broken)  # the one way to make a bug happen on purpose
    path = tmp_path / "t.tfrecord"
    path.write_bytes(framed(payloads(3))[0])
    ds = Dataset.open([str(path)])
    for _ in ds.scan():
        pass
    pool = ThumbnailPool(ds, threads=1)
    got = []
    pool.result.connect(got.append)
    with caplog.at_level("ERROR", logger="tfrview.gui.workers.thumbnails"):
        pool.start()
        pool.request(1)
        qtbot.waitUntil(lambda: bool(got), timeout=10000)
        pool.cancel()
        pool.wait()
    n, thumb = got[0]
    assert n == 1 and thumb.error and thumb.caption == "internal error: a bug in thumbnails"
    assert "the thumbnail of record 1 failed" in caplog.text and "ZeroDivisionError" in caplog.text
    ds.close()


def test_the_shards_controller_without_the_main_window(qtbot, session_of, tmp_path):
    """Per-file health from a real scan and the session's problems; showing a shard filters the
    table model to its records at once (no job) and says which record to select."""
    from PySide6.QtWidgets import QLabel, QWidget

    from tfrview.gui.controllers.filter import FilterController
    from tfrview.gui.controllers.shards import ShardsController
    from tfrview.gui.models.problems import ProblemRow, ProblemsModel
    from tfrview.gui.models.record_table import RecordTableModel
    from tfrview.gui.widgets.filter_edit import FilterEdit

    clean = tmp_path / "c.tfrecord"
    clean.write_bytes(framed(payloads(25))[0])
    s = session_of([clean, _damaged(tmp_path)])
    problems = ProblemsModel([clean.name, "d.tfrecord"])
    s.problem_found.connect(lambda fi, p: problems.add(ProblemRow(fi, None, None, p)))
    ended = []
    s.scan_ended.connect(ended.append)
    s.start()
    qtbot.waitUntil(lambda: bool(ended), timeout=20000)
    host = QWidget()
    qtbot.addWidget(host)
    model = RecordTableModel(s.ds)
    model.refresh()
    filtering = FilterController(s, model, problems, FilterEdit(), QLabel())
    c = ShardsController(s, problems, filtering, host)
    h = c.health()
    assert h.records.tolist() == [25, 40] and h.problems.sum(axis=1).tolist() == [0, 1]
    shown = []
    c.shard_shown.connect(shown.append)
    c.show_shard(1)
    assert shown == [25] and model.filter_rows[: model.match_count].tolist() == list(range(25, 65))
    assert (
        filtering.state.phase is Phase.DONE
        and filtering.expr == 'file == "d.tfrecord"'
        and filtering.job is None
    )


def test_an_analysis_beside_the_scan_is_heard_once_the_scan_ends(qtbot, session_of, tmp_path):
    """An analysis started beside the scan (a split analysed before): its progress shows at once,
    its findings and its end wait for the scan, whose framing numbers them."""
    s = session_of([_damaged(tmp_path)])
    s.indexer = JobWorker(AnalyzeRequest(paths=()), s)  # stands for the running scan (never started)
    s._early_for = s.indexer
    s.analyzer = JobWorker(AnalyzeRequest(paths=()), s)
    problems = []
    s.problem_found.connect(lambda fi, p: problems.append((fi, p.kind)))
    finding = Problem(ProblemKind.NAN_OR_INF, 0, 40, 3, "NaN in loss", feature="loss")
    _fed(
        s,
        m.Progress("records", 40, 40),
        m.ProblemFound(0, finding),
        m.Summary({"records": 40}, False),
        m.Done(),
    )
    s._on_analysis_done(s.analyzer)
    assert (s.checks.done, s.checks.total) == (40, 40) and s.checks.phase is Phase.RUNNING
    assert problems == [] and s.summary is None  # held
    s._on_index_done(s.indexer)  # the scan ends
    assert problems == [(0, ProblemKind.NAN_OR_INF)] and s.summary == {"records": 40}
    assert s.checks.phase is Phase.DONE and s._held == [] and s._early_for is None


def test_the_analysis_that_waits_for_the_scan_says_so_in_records_read_so_far(session_of, tmp_path):
    """Before the analysis starts, while the scan it follows runs, the status words say what QA
    waits for and the records read so far (a cold split of 10,000 shards is read for seconds
    before its analysis starts); once it runs or without one, the analysis's own words."""
    from tfrview.gui.workers.scan import IndexProgress

    path = tmp_path / "a.tfrecord"
    path.write_bytes(framed(payloads(3))[0])
    s = session_of([path], run_checks=True)
    assert s.checks_text() == ""  # nothing read yet
    s.index_progress = IndexProgress(ScanPhase.INDEX, 312_400, 0, 10, 100)
    assert s.checks_text() == "QA checks: after the scan (312,400 records read so far)"
    s.index_progress = IndexProgress(ScanPhase.VERIFY, 1_000_000, 0, 10, 100)
    assert "1,000,000 records read so far" in s.checks_text()
    assert "999,900 records read so far" in s.checks_text(999_900)  # the count the line says already
    s.index_progress = IndexProgress(ScanPhase.DONE, 1_000_000, 0, 100, 100)
    assert s.checks_text() == ""  # the scan ended: the analysis's own words from here on
    s.index_progress = IndexProgress(ScanPhase.INDEX, 5, 0, 10, 100)
    s.run_checks = False
    assert s.checks_text() == ""  # no analysis follows: nothing to wait for
