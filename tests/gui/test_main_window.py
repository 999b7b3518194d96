import subprocess
import sys

import pytest
from PySide6.QtCore import Qt

from tests.gui.driver import Driver
from tests.helpers import RACCOON
from tfrview.core.problems import FRAMING_KINDS
from tfrview.gui.models.record_table import RecordTableModel


def column(qtbot, w, name):
    """A column's values for every row, once the summary worker has filled them in."""
    m = w.model
    c = m.columns.index(name)
    for r in range(m.rowCount()):
        m.data(m.index(r, c))  # asks the worker for every row
    qtbot.waitUntil(lambda: all(m.data(m.index(r, c)) != "…" for r in range(m.rowCount())), timeout=10000)
    return [m.data(m.index(r, c)) for r in range(m.rowCount())]


def wait_view(qtbot, w, n):
    qtbot.waitUntil(
        lambda: w.image_panel.current is not None and w.image_panel.current.number == n, timeout=10000
    )
    return w.image_panel.current


def test_raccoon_boxes_sit_on_the_raccoon(qtbot, open_window):
    w = open_window([RACCOON])
    assert w.model.total() == 12 and w.windowTitle().startswith("raccoon_test-first12.record")
    assert w.label_map == {1: "raccoon"}  # found beside the file
    w.select_record(0)
    v = wait_view(qtbot, w, 0)
    assert (v.decoded.width, v.decoded.height) == (639, 315)
    (box,) = v.overlay.boxes
    # 0.2222 * 639, 0.0762 * 315, 0.6917 * 639, 0.8762 * 315
    assert (box.x0, box.y0, box.x1, box.y1) == pytest.approx((142, 24, 442, 276), abs=0.5)
    assert box.label == "raccoon"
    keys = [w.tree.topLevelItem(i).text(0) for i in range(w.tree.topLevelItemCount())]
    assert "image/object/bbox/xmin" in keys and "image/encoded" in keys
    enc = w.tree.findItems("image/encoded", Qt.MatchFlag.MatchExactly)[0]
    assert "JPEG image" in enc.text(3) and not enc.icon(3).isNull()  # a thumbnail


def test_keyboard_moves_selection_and_panels(qtbot, open_window):
    w = open_window([RACCOON])
    w.table.setFocus()
    w.select_record(3)
    wait_view(qtbot, w, 3)
    qtbot.keyClick(w.table, Qt.Key.Key_Down)
    assert wait_view(qtbot, w, 4).number == 4
    qtbot.keyClick(w.table, Qt.Key.Key_End)
    assert wait_view(qtbot, w, 11).number == 11


def test_damaged_rows_are_coloured_with_the_problem_in_the_tooltip(qtbot, open_window, damaged_file):
    w = open_window([damaged_file])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    m = w.model
    assert m.total() == 30
    status_col = m.columns.index("status")
    assert m.data(m.index(4, status_col)) == "damaged"  # the record status word every output uses
    assert m.data(m.index(4, 0), Qt.ItemDataRole.BackgroundRole) is not None
    assert m.data(m.index(3, 0), Qt.ItemDataRole.BackgroundRole) is None
    assert "data CRC mismatch" in m.data(m.index(4, 0), Qt.ItemDataRole.ToolTipRole)
    assert m.data(m.index(5, status_col)) == "ok"
    framing = [r for r in w.problems.rows if r.problem.kind in FRAMING_KINDS]
    assert len(framing) == 2  # the bad CRC and the garbage between records 9 and 10
    gap_tip = m.data(m.index(10, 0), Qt.ItemDataRole.ToolTipRole)
    assert gap_tip.startswith("before this record: unreadable_bytes")
    assert m.data(m.index(10, 0), Qt.ItemDataRole.BackgroundRole) is not None
    assert m.data(m.index(10, status_col)) == "ok"
    assert "2 problems" in w.problems_label.text()


def test_models_pass_qmodeltester(qtmodeltester, open_window, damaged_file):
    w = open_window([damaged_file])
    qtmodeltester.check(w.model, force_py=True)


def test_data_none_200k_calls_do_not_crash(open_window, damaged_file):
    # PySide6 6.12.0 on Python 3.11 aborted after ~50k data() calls returning None (none_dealloc).
    w = open_window([damaged_file])
    idx = w.model.index(3, 0)
    for _ in range(200_000):
        assert idx.data(Qt.ItemDataRole.DecorationRole) is None


def test_closing_mid_index_joins_every_thread(qtbot, many_records):
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.gui.main_window import MainWindow

    w = MainWindow(Dataset.open([str(many_records)]))
    qtbot.addWidget(w)
    w.show()
    d = Driver(qtbot, w)
    qtbot.waitUntil(lambda: d.index_running, timeout=5000)
    w.close()
    assert not d.index_running and not w.decoder.isRunning()
    assert all(f.source.closed for f in w.ds.files)


def test_rows_grow_while_indexing_and_cancel_stops(qtbot, open_window, many_records):
    w = open_window([many_records], wait=False)
    qtbot.waitUntil(lambda: w.model.rowCount() > 0, timeout=5000)
    d = Driver(qtbot, w)
    d.stop_scan()
    assert d.wait_index_ended(timeout=10000) in ("cancelled", "done")
    qtbot.waitUntil(lambda: not d.index_running, timeout=10000)


def test_go_to_record_and_row_cap_paging(qtbot, open_window, tmp_path):
    from tfrview.core.output.writer import write_records

    p = tmp_path / "paged.tfrecord"
    write_records(p, [b"x%d" % i for i in range(250)])
    w = open_window([p])
    w.model.row_cap = 100
    w.model.set_page(0)
    assert w.model.rowCount() == 100
    w.select_record(230)
    assert w.model.page_start == 200 and w.model.rowCount() == 50
    assert w.model.record_number(w.table.currentIndex().row()) == 230


def test_sequence_example_and_protobuf_and_bytes_in_the_tree(qtbot, open_window, tmp_path):
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    assert w.model.total() == 39
    kinds = column(qtbot, w, "kind")
    n = kinds.index("sequence example")
    w.select_record(n)
    wait_view(qtbot, w, n)
    tops = [w.tree.topLevelItem(i).text(0) for i in range(w.tree.topLevelItemCount())]
    assert tops == ["context", "feature lists"]
    n = kinds.index("bytes")
    w.select_record(n)
    wait_view(qtbot, w, n)
    assert w.tree.topLevelItem(0).text(0) == "(bytes)"
    # The digit stored as 784 floats is found as an image.
    n = next(r for r, text in enumerate(column(qtbot, w, "summary")) if "28x28" in text)
    w.select_record(n)
    assert wait_view(qtbot, w, n).decoded.pixels.shape == (28, 28)


def test_a_clip_shows_as_a_filmstrip_with_each_frames_boxes(qtbot, open_window, tmp_path):
    """A SequenceExample of JPEG frames (MediaSequence keys): every frame in the filmstrip, the
    frame shown with its own box (region/bbox/* of its step) and label."""
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    n = w.model.total() - 1  # the clip
    w.select_record(n)
    v = wait_view(qtbot, w, n)
    assert len(v.frames) == 8 and all(px is not None for _, px, _ in v.frames)
    assert w.image_panel.filmstrip.isVisible() and w.image_panel.filmstrip.count() == 8
    assert [b.label for b in v.overlay.boxes] == ["ball"] and "frame 0 of 8" in w.image_panel.facts.text()
    first = v.overlay.boxes[0]
    w.image_panel.filmstrip.frame_chosen.emit(v.frames[5][0])  # a click on frame 5
    qtbot.waitUntil(lambda: w.image_panel.current.image_index == v.frames[5][0], timeout=10000)
    later = w.image_panel.current.overlay.boxes[0]
    assert later.x0 > first.x0 + 60  # the ball rolled right: frame 5's own box, not frame 0's
    assert "frame 5 of 8" in w.image_panel.facts.text()
    small = v.frames[5][2].boxes[0]  # the filmstrip's box, at its thumbnail's size
    assert abs(small.x0 / v.frames[5][1].shape[1] - later.x0 / 160) < 0.02


def test_broken_image_is_said_not_crashed(qtbot, open_window, tmp_path):
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    n = w.model.total() - 3  # the JPEG cut short
    w.select_record(n)
    v = wait_view(qtbot, w, n)
    assert v.decoded is None and "do not decode" in v.error
    assert "does not decode" in w.image_panel.facts.text()


def test_save_image_with_boxes_never_touches_input(qtbot, open_window, tmp_path):
    src = RACCOON
    before = src.stat().st_mtime_ns
    w = open_window([src])
    w.select_record(0)
    wait_view(qtbot, w, 0)
    out = tmp_path / "r0.png"
    assert w.exporting.write_image(out, with_boxes=True)
    from PIL import Image

    im = Image.open(out)
    assert im.size == (639, 315)
    r, g, b = im.convert("RGB").getpixel((142, 150))  # on the left edge of the box: class colour, not photo
    plain = tmp_path / "plain.png"
    assert w.exporting.write_image(plain, with_boxes=False)
    assert Image.open(plain).convert("RGB").getpixel((142, 150)) != (r, g, b)
    assert src.stat().st_mtime_ns == before


def test_summaries_come_from_the_worker_not_the_ui_thread(qtbot, open_window):
    w = open_window([RACCOON])
    m = w.model
    c = m.columns.index("summary")
    assert m.data(m.index(10, c)) in ("…",) or "raccoon" in m.data(m.index(10, c))
    assert column(qtbot, w, "summary")[11] == "JPEG 600×450  ·  2 boxes  ·  raccoon×2"


def test_latest_decode_request_wins(qtbot):
    from tfrview.gui.workers.decode import DecodeRequest, DecodeWorker

    worker = DecodeWorker()
    got = []
    worker.result.connect(lambda v: got.append(v.number))
    data = (RACCOON).read_bytes()[12:54154]  # record 0's payload
    for n in range(50):
        worker.request(DecodeRequest(n, data, 0, None, None))
    worker.start()
    qtbot.waitUntil(lambda: 49 in got, timeout=10000)
    worker.cancel()
    worker.wait()
    assert got[-1] == 49 and len(got) < 50


def test_no_display_says_so_in_one_line(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    code = "import sys; from tfrview.cli import main; sys.exit(main([sys.argv[1]]))"
    r = subprocess.run(
        [sys.executable, "-c", code, str(RACCOON)], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no display" in r.stderr and "tfrview info" in r.stderr


def test_record_table_model_alone(qtmodeltester, tmp_path):
    from tfrview.core.output.writer import write_records
    from tfrview.core.tfrecord.dataset import Dataset

    for i in range(3):
        write_records(tmp_path / f"s-{i:05d}-of-00003.tfrecord", [b"a", b"b"])
    ds = Dataset.open([str(tmp_path)])
    for _ in ds.scan():
        pass
    m = RecordTableModel(ds)
    m.refresh()
    assert m.rowCount() == 6 and m.columns[1] == "file"
    assert m.data(m.index(3, 1)) == "00001"
    qtmodeltester.check(m, force_py=True)
    ds.close()


def test_indexing_falls_back_to_this_process_when_the_child_cannot_start(
    qtbot, open_window, damaged_file, monkeypatch
):
    import tfrview.core.procs.scanproc as scanproc
    import tfrview.gui.workers.scan as workers

    def no_child(*_a, **_k):
        raise OSError("no child process here")

    monkeypatch.setattr(workers, "CHILD_MIN_BYTES", 0)  # every file would go to a child
    monkeypatch.setattr(scanproc, "spawn", no_child)
    w = open_window([damaged_file])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    f = w.ds.files[0]
    assert f.index.count == 30 and int((f.index.status & 1).sum()) == 30  # all framed and verified
    assert sorted(str(p.kind) for p in f.index.problems) == ["bad_data_crc", "unreadable_bytes"]
    # said, not swallowed: the status bar names the failure (the log has it too)
    assert w.statusBar().currentMessage() == (
        "damaged.tfrecord: the scan process failed (no child process here); framed here instead"
    )


def test_a_file_replaced_while_open_is_said_in_the_panel(qtbot, open_window, tmp_path):
    import os

    from tfrview.core.output.writer import write_records

    p = tmp_path / "live.tfrecord"
    write_records(p, [b"a%d" % i for i in range(10)])
    w = open_window([p])
    w.select_record(1)
    wait_view(qtbot, w, 1)
    other = tmp_path / "new.tfrecord"
    write_records(other, [b"b"] * 10)
    os.replace(other, p)  # rewritten by a writer while tfrview looks at it
    w.select_record(2)
    qtbot.waitUntil(lambda: "replaced" in w.image_panel.view.message, timeout=10000)
    assert w.tree.topLevelItemCount() == 0


def test_nothing_sits_over_the_filter_box(open_window):
    """A widget parented to the window but in no layout (the rewrite's status and Cancel button
    before a rewrite) is shown with the window at its corner, over the filter box's left edge."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QWidget

    w = open_window([RACCOON])
    box = w.filter_edit
    ancestors = set()
    p = box
    while p is not None:
        ancestors.add(id(p))
        p = p.parentWidget()
    for dx, dy in ((1, 1), (3, box.height() // 2), (box.width() // 2, 1)):
        at = box.mapTo(w, QPoint(dx, dy))
        over = [
            c
            for c in w.findChildren(QWidget)
            if c.isVisible() and not c.isWindow() and id(c) not in ancestors
            if c.rect().translated(c.mapTo(w, QPoint(0, 0))).contains(at)
        ]
        assert over == [], f"over the filter box at {at.x()},{at.y()}: {[type(c).__name__ for c in over]}"
    assert w.childAt(box.mapTo(w, QPoint(1, 1))) is box
