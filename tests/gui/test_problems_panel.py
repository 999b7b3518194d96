from PySide6.QtCore import Qt

from tests.gui.driver import Driver
from tfrview.core.problems import QA_KINDS


def wait_checks(qtbot, w):
    state = Driver(qtbot, w).wait_checks()
    assert state.text("QA checks") == "QA checks done"  # the words the status bar shows
    assert "QA checks done" in w.status_label.text()


def test_problems_panel_lists_framing_and_qa_problems(qtbot, open_window, tmp_path, qtmodeltester):
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    wait_checks(qtbot, w)
    w.problems.flush()
    kinds = [str(r.problem.kind) for r in w.problems.rows]
    for k in (
        "bad_data_crc",
        "unreadable_bytes",
        "truncated",
        "image_undecodable",
        "box_out_of_bounds",
        "image_exif_rotation",
        "unexpected_payload",
    ):
        assert k in kinds, (k, kinds)
    rank = {"error": 0, "warning": 1, "info": 2}
    order = [(rank[r.problem.kind.severity], r.target) for r in w.problems.rows if r.target is not None]
    assert order == sorted(order)  # errors first, then warnings, then notes; each in record order
    assert "problems" in w.problems_label.text() and "bad_data_crc" in w.problems_label.toolTip()
    assert w.problems_dock.windowTitle() == f"Problems ({len(w.problems.rows)})"
    qtmodeltester.check(w.problems, force_py=True)
    # QA warnings and errors colour their rows and explain themselves in the tooltip; a record
    # with notes only stays plain (issue 12: a tint must still mean something)
    qa = next(
        r for r in w.problems.rows if r.problem.kind in QA_KINDS and r.problem.kind.severity == "warning"
    )
    m = w.model
    assert m.data(m.index(qa.target, 0), Qt.ItemDataRole.BackgroundRole) is not None
    assert str(qa.problem.kind) in m.data(m.index(qa.target, 0), Qt.ItemDataRole.ToolTipRole)
    from tfrview.core.problems import Problem, ProblemKind

    clean = 0
    assert m.status_of(clean) == "ok" and m.data(m.index(clean, 0), Qt.ItemDataRole.BackgroundRole) is None
    m.note_problem(
        0, Problem(ProblemKind.DUPLICATE_IMAGE, 0, 10, 0, "image/encoded is the same image as in record 9")
    )
    assert m.data(m.index(clean, 0), Qt.ItemDataRole.BackgroundRole) is None  # a note: plain row
    assert "duplicate_image" in m.data(m.index(clean, 0), Qt.ItemDataRole.ToolTipRole)  # still said on hover
    m.note_problem(0, Problem(ProblemKind.BOX_INVERTED, 0, 10, 0, "1 inverted box"))
    assert m.data(m.index(clean, 0), Qt.ItemDataRole.BackgroundRole) is not None  # a warning: tinted


def test_f8_steps_through_problems_and_double_click_jumps(qtbot, open_window, damaged_file):
    w = open_window([damaged_file])
    qtbot.waitUntil(lambda: len(w.problems.rows) >= 2, timeout=10000)
    w.select_record(0)
    w.step_problem(False)
    assert w._selected == 4  # the bad CRC
    w.step_problem(False)
    assert w._selected == 10  # the record after the garbage
    w.step_problem(False)
    assert w._selected == 4  # wraps around
    w.step_problem(True)
    assert w._selected == 10
    w.problems.flush()
    row = next(r for r in w.problems.rows if r.target == 4)
    w.select_record(0)
    w.problems_view.setCurrentIndex(w.problems.index_of(row))  # a click
    assert w._selected == 4
    at = w.problems.index_of(row)
    assert w.problems.data(at.siblingAtColumn(w.problems.columns.index("severity"))) == "error"


def test_damage_after_the_last_record_says_after(qtbot, open_window, tmp_path):
    """Trailing garbage or a truncated last record is 'after N', never 'before N' (issue 9)."""
    from tests.helpers import framed, payloads

    data, _ = framed(payloads(5))
    path = tmp_path / "tail.tfrecord"
    path.write_bytes(data + b"\x01garbage at the end")
    w = open_window([path])
    qtbot.waitUntil(lambda: len(w.problems.rows) >= 1, timeout=10000)
    w.problems.flush()
    col = w.problems.columns.index("record")
    assert w.problems.data(w.problems.index(0, col)) == "after 4"


def test_one_click_shows_the_record_and_f8_reaches_every_problem(qtbot, open_window, tmp_path):
    """Two problems on one record are two F8 steps, and damage after the last record is reached."""
    from tests.helpers import framed, payloads

    data, offs = framed(payloads(6))
    b = bytearray(data)
    b[offs[2] + 20] ^= 1  # record 2: a bad data CRC
    path = tmp_path / "two.tfrecord"
    path.write_bytes(bytes(b) + b"\x01tail garbage")
    w = open_window([path])
    qtbot.waitUntil(lambda: len(w.problems.rows) >= 2, timeout=10000)
    w.problems.flush()
    w.problems_view.setCurrentIndex(w.problems.index(0, 0))  # as a click does
    assert w._selected == 2
    seen = []
    for _ in range(len(w.problems.rows)):
        w.step_problem(False)
        seen.append((id(w.problems_view.current_problem()), w._selected))
    assert sorted(i for i, _ in seen) == sorted(id(r) for r in w.problems.rows)
    assert 5 in [n for _, n in seen]  # the trailing garbage, after the last record


def test_framing_problems_are_numbered_with_the_counts_of_now(tmp_path):
    """A problem of file 2 that arrives before the rows timer has seen file 1 complete is still
    numbered after file 1's records ("after 158", not "after 78")."""
    from tests.helpers import framed, payloads
    from tfrview.core.problems import Problem, ProblemKind
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.gui.models.record_table import RecordTableModel

    data, _ = framed(payloads(5))
    (tmp_path / "a.tfrecord").write_bytes(data)
    (tmp_path / "b.tfrecord").write_bytes(data + b"\x01junk")
    with Dataset.open([str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]) as ds:
        model = RecordTableModel(ds)  # its rows timer has seen nothing yet
        for _ in ds.scan():
            pass
        tail = next(p for p in ds.files[1].index.problems)
        record, target, after = model.note_problem(1, tail)
        assert (record, target, after) == (None, 9, True)
        assert model.note_problem(1, Problem(ProblemKind.BAD_DATA_CRC, 0, 10, 2, "x"))[0] == 7
