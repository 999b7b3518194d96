"""The Problems panel as a triage tool (issue 9): sort by any column, filter by severity and kind,
repeats grouped with a count, and only the problems of the records the table's filter shows."""

from PySide6.QtCore import Qt

from tests.gui.driver import Driver
from tests.helpers import framed, payloads


def _damaged(tmp_path, flips=(1, 3, 5), tail=b"\x01tail garbage"):
    data, offs = framed(payloads(8))
    b = bytearray(data)
    for n in flips:
        b[offs[n] + 20] ^= 1  # a bad data CRC each
    path = tmp_path / "flips.tfrecord"
    path.write_bytes(bytes(b) + tail)
    return path


def _open(qtbot, open_window, path, n):
    w = open_window([path])
    qtbot.waitUntil(lambda: len(w.problems.rows) >= n, timeout=10000)
    w.problems.flush()
    return w


def _text(w, row, col, parent=None):
    m = w.problems
    at = (
        m.index(row, m.columns.index(col), parent)
        if parent is not None
        else m.index(row, m.columns.index(col))
    )
    return m.data(at)


def test_repeats_are_one_row_with_a_count_and_f8_walks_through_them(
    qtbot, open_window, tmp_path, qtmodeltester
):
    w = _open(qtbot, open_window, _damaged(tmp_path), 4)
    m = w.problems
    assert [len(e.rows) for e in m.entries] == [3, 1]  # three bad CRCs in one group, then the tail
    assert _text(w, 0, "count") == "3" and _text(w, 0, "kind") == "bad_data_crc"
    assert "…" in _text(w, 0, "message")  # the CRC words differ between the repeats
    assert _text(w, 0, "record") == "▸ 1 … 5" and m.rowCount() == 2
    w.problems_view.setCurrentIndex(m.index(0, 0))
    qtbot.keyClick(w.problems_view, Qt.Key.Key_Right)  # opens the group in place
    assert m.rowCount() == 5 and _text(w, 0, "record") == "▾ 1 … 5"
    assert [_text(w, i, "record").strip() for i in range(1, 4)] == ["1", "3", "5"]
    qtbot.keyClick(w.problems_view, Qt.Key.Key_Left)
    assert m.rowCount() == 2
    qtmodeltester.check(m, force_py=True)
    w.select_record(0)
    walked = []
    for _ in range(4):
        w.step_problem(False)
        walked.append(w._selected)
    assert walked == [1, 3, 5, 7]  # into the group, one by one, then the damage after record 7
    assert m.is_open(0) and m.rowCount() == 5
    w.problems_panel.group_box.setChecked(False)
    assert [len(e.rows) for e in m.entries] == [1, 1, 1, 1]
    assert w.problems_view.current_problem().target == 7  # the place is kept


def test_sort_by_any_column(qtbot, open_window, tmp_path):
    w = _open(qtbot, open_window, _damaged(tmp_path), 4)
    w.problems_panel.group_box.setChecked(False)
    m = w.problems
    view = w.problems_view
    view.sortByColumn(m.columns.index("record"), Qt.SortOrder.DescendingOrder)
    assert [e.first.target for e in m.entries] == [7, 5, 3, 1]
    view.sortByColumn(m.columns.index("kind"), Qt.SortOrder.AscendingOrder)
    assert [str(e.first.problem.kind) for e in m.entries] == sorted(
        str(e.first.problem.kind) for e in m.entries
    )
    view.sortByColumn(m.columns.index("severity"), Qt.SortOrder.AscendingOrder)
    assert [e.first.target for e in m.entries] == [1, 3, 5, 7]


def test_filter_by_severity_and_kind(qtbot, open_window, tmp_path):
    from tests.gui.test_problems_panel import wait_checks
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    wait_checks(qtbot, w)
    m = w.problems
    m.flush()
    total = len(m.rows)
    sev = {r.problem.kind.severity for r in m.leaves()}
    assert {"error", "warning"} <= sev
    panel = w.problems_panel
    assert panel.severity_buttons["error"].text().startswith("Errors ")
    panel.severity_buttons["error"].setChecked(False)
    assert m.leaves() and all(r.problem.kind.severity != "error" for r in m.leaves())
    assert w.problems_dock.windowTitle() == f"Problems ({m.shown} of {total})"
    panel.severity_buttons["error"].setChecked(True)
    panel.set_hidden_kinds(frozenset({"bad_data_crc"}))
    assert m.leaves() and all(r.problem.kind != "bad_data_crc" for r in m.leaves())
    assert "hidden" in panel.kinds_button.text()
    panel._fill_kinds()  # the menu offers every kind with its count, hidden ones unticked
    ticks = {a.text().split()[0]: a.isChecked() for a in panel.kinds_menu.actions() if a.isCheckable()}
    assert ticks["bad_data_crc"] is False and all(v for k, v in ticks.items() if k != "bad_data_crc")
    panel.set_hidden_kinds(frozenset())
    assert m.shown == total


def test_the_panel_follows_the_tables_filter(qtbot, open_window, tmp_path):
    w = _open(qtbot, open_window, _damaged(tmp_path), 4)
    d = Driver(qtbot, w)
    d.wait_index_ended()
    d.type_filter("record < 4")
    d.wait_filter()
    qtbot.waitUntil(lambda: w.model.match_count == 4, timeout=20000)
    w.problems.flush()
    assert sorted(r.target for r in w.problems.leaves()) == [1, 3]
    w.problems_panel.follow_box.setChecked(False)
    assert sorted(r.target for r in w.problems.leaves()) == [1, 3, 5, 7]
    w.problems_panel.follow_box.setChecked(True)
    w.filter_edit.clear()  # no filter: every problem again
    w.problems.flush()
    assert w.problems.shown == 4


def test_many_problems_arrive_without_rearranging_each_time(qtbot, open_window, tmp_path):
    """Problems are batched: a file with thousands of them arranges a few times, not per problem."""
    flips = tuple(range(0, 2000, 2))
    data, offs = framed(payloads(2000))
    b = bytearray(data)
    for n in flips:
        b[offs[n] + 20] ^= 1
    path = tmp_path / "many.tfrecord"
    path.write_bytes(bytes(b))
    w = open_window([path])
    arranged = []
    w.problems.arranged.connect(lambda: arranged.append(1))
    qtbot.waitUntil(lambda: len(w.problems.rows) == len(flips), timeout=20000)
    w.problems.flush()
    assert len(arranged) < len(flips) // 10
    assert [len(e.rows) for e in w.problems.entries] == [len(flips)]


def test_causes_named_by_the_analysis_reach_the_panel(qtbot, open_window, tmp_path):
    """Why a problem the scan found happened (one flipped bit), and why a whole file broke (a
    line-ending conversion), from the analysis to the Problems panel."""
    from tests.gui.driver import Driver
    from tests.helpers import framed, payloads
    from tfrview.core.tfrecord.framing import HEADER_SIZE

    pls = payloads(60, base=500)
    data, offs = framed(pls)
    b = bytearray(data)
    b[offs[7] + HEADER_SIZE + 40] ^= 0x02
    flipped = tmp_path / "flipped.tfrecord"
    flipped.write_bytes(bytes(b))
    crlf = tmp_path / "crlf.tfrecord"
    crlf.write_bytes(data.replace(b"\n", b"\r\n"))
    w = open_window([flipped, crlf])
    Driver(qtbot, w).wait_checks()
    panel = w.problems_panel

    def bad_crc_cause() -> str:
        rows = [r for r in w.problems.rows if r.file_no == 0 and r.problem.kind == "bad_data_crc"]
        return rows[0].problem.cause if rows else ""

    qtbot.waitUntil(
        lambda: bad_crc_cause().startswith("one flipped bit (data byte 40, bit 1)"), timeout=20000
    )
    qtbot.waitUntil(lambda: "crlf.tfrecord" in panel.causes.text(), timeout=20000)
    assert (
        panel.causes.isVisibleTo(w)
        and "line-ending conversion: every LF byte became CR LF" in panel.causes.text()
    )
    assert "flipped.tfrecord" not in panel.causes.text()


def test_findings_quoting_data_bytes_are_one_group_and_each_shows_its_detail(qtbot):
    """Issue 18.5: findings group by kind and feature, never by message text; the varying bytes
    are each finding's detail, shown on its own row and in its tooltip."""
    from tfrview.core.problems import Problem, ProblemKind
    from tfrview.gui.models.problems import ProblemRow, ProblemsModel

    m = ProblemsModel(["L.tfrecord"])
    for n in range(50):
        p = Problem(
            ProblemKind.IMAGE_NOT_IMAGE,
            100 * n,
            90,
            n,
            "image/encoded holds bytes that no image format starts with, not an image",
            feature="image/encoded",
            detail=f"{1000 + n:,} bytes, starting 74 {n:02x}",
        )
        m.add(ProblemRow(0, n, n, p))
    m.add(
        ProblemRow(
            0,
            7,
            7,
            Problem(
                ProblemKind.IMAGE_NOT_IMAGE,
                700,
                90,
                7,
                "image/other is empty (0 bytes)",
                feature="image/other",
            ),
        )
    )
    m.flush()
    assert [len(e.rows) for e in m.entries] == [50, 1]
    assert m.entries[0].title == "image/encoded holds bytes that no image format starts with, not an image"
    m.set_open(0, True)
    m.flush()
    child = m.index(1, m.columns.index("message"))
    assert m.data(child).endswith("not an image: 1,000 bytes, starting 74 00")
    assert "detail: 1,000 bytes, starting 74 00" in m.data(child, Qt.ItemDataRole.ToolTipRole)
