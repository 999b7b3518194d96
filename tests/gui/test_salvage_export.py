from tests.gui.driver import Driver
from tests.helpers import read_all
from tfrview.core.procs.messages import Failed
from tfrview.core.tfrecord.report import verify_source
from tfrview.core.tfrecord.source import open_source


def run_and_wait(qtbot, start):
    box = {}
    start(lambda result: box.setdefault("r", result))
    qtbot.waitUntil(lambda: "r" in box, timeout=30000)
    return box["r"]


def test_save_intact_records_from_the_window(qtbot, open_window, damaged_file, tmp_path):
    w = open_window([damaged_file])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    before = damaged_file.read_bytes()
    out = tmp_path / "intact.tfrecord"
    res = run_and_wait(qtbot, lambda cb: w.exporting.write_intact(out, "gzip", on_done=cb))
    assert not isinstance(res, Failed) and res.written == 29 and res.dropped == 1 and res.damaged_regions == 1
    assert damaged_file.read_bytes() == before
    with open_source(out) as src:
        idx, rep = verify_source(src)
        assert rep.ok and src.compression == "gzip" and idx.count == 29
        with open_source(damaged_file) as orig:
            oidx, _ = verify_source(orig)
            expect = [d for k, d in enumerate(read_all(orig, oidx)) if k != 4]
        assert read_all(src, idx) == expect


def test_export_selection_records_and_jsonl(qtbot, open_window, damaged_file, tmp_path):
    w = open_window([damaged_file])
    numbers = [1, 2, 3, 20]
    out = tmp_path / "sel.tfrecord"
    res = run_and_wait(
        qtbot, lambda cb: w.exporting.write_export("records", numbers, out, "none", on_done=cb)
    )
    assert not isinstance(res, Failed) and res.written == 4
    with open_source(out) as src:
        idx, rep = verify_source(src)
        assert rep.ok and read_all(src, idx) == [w.ds.read(n) for n in numbers]
    out = tmp_path / "sel.jsonl"
    res = run_and_wait(qtbot, lambda cb: w.exporting.write_export("jsonl", numbers, out, on_done=cb))
    assert not isinstance(res, Failed) and len(out.read_text().splitlines()) == 4


def test_export_refuses_to_write_over_an_input(qtbot, open_window, damaged_file):
    w = open_window([damaged_file])
    before = damaged_file.read_bytes()
    failed = run_and_wait(
        qtbot, lambda cb: w.exporting.write_export("records", [0], damaged_file, on_done=cb)
    )
    assert isinstance(failed, Failed) and not failed.stopped and "refusing" in failed.message
    assert damaged_file.read_bytes() == before


def test_exports_never_launder_a_damaged_record(qtbot, open_window, damaged_file, tmp_path):
    """Record 4 of the fixture fails its data CRC (issue 9): left out by default; kept only when asked,
    and then with its failing CRC, so the new file still says it is damaged."""
    w = open_window([damaged_file])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    assert w.exporting.damaged_among([3, 4, 5]) == [4]
    out = tmp_path / "default.tfrecord"
    res = run_and_wait(
        qtbot, lambda cb: w.exporting.write_export("records", [3, 4, 5], out, "none", on_done=cb)
    )
    assert (
        not isinstance(res, Failed)
        and res.written == 2
        and res.skipped == 1
        and "left out 1 damaged record(s)" in res.notes[0]
    )
    with open_source(out) as src:
        _, rep = verify_source(src)
        assert rep.ok and rep.records == 2
    out = tmp_path / "kept.tfrecord"
    res = run_and_wait(
        qtbot,
        lambda cb: w.exporting.write_export("records", [3, 4, 5], out, "gzip", on_done=cb, keep_damaged=True),
    )
    assert not isinstance(res, Failed) and res.written == 3 and "failing CRC" in res.notes[0]
    with open_source(out) as src:
        _, rep = verify_source(src)
        assert (
            rep.records == 2
            and rep.damaged_records == 1
            and [p.kind for p in rep.problems] == ["bad_data_crc"]
        )


def test_jsonl_export_says_file_crc_status_and_problems(qtbot, open_window, damaged_file, tmp_path):
    import json

    w = open_window([damaged_file])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    out = tmp_path / "sel.jsonl"
    res = run_and_wait(qtbot, lambda cb: w.exporting.write_export("jsonl", [3, 4], out, on_done=cb))
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert not isinstance(res, Failed) and [r["crc"] for r in rows] == ["ok", "damaged"]
    assert rows[1]["file"] == str(damaged_file) and rows[1]["problems"][0]["kind"] == "bad_data_crc"


def test_save_intact_with_nothing_intact_writes_nothing(qtbot, open_window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    path = tmp_path / "hopeless.tfrecord"
    path.write_bytes(b"not a record at all " * 10)
    w = open_window([path])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    said = []
    monkeypatch.setattr(QMessageBox, "information", lambda *a: said.append(a[2]))
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (_ for _ in ()).throw(AssertionError("asked"))
    )
    w.exporting.save_intact()
    assert said and "nothing to save" in said[0]


def test_repair_from_the_window_restores_the_flipped_record(qtbot, open_window, damaged_file, tmp_path):
    from tests.helpers import payloads

    w = open_window([damaged_file])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    repair = w.actions_by_name["repair"]
    assert any(b.defaultAction() is repair for b in w.problems_panel.findChildren(type(w.cancel_button)))
    out = tmp_path / "repaired.tfrecord"
    res = run_and_wait(qtbot, lambda cb: w.exporting.write_repaired(out, "none", on_done=cb))
    assert (
        not isinstance(res, Failed)
        and res.written == 30
        and [r.record for r in res.repaired] == [4]
        and not res.dropped
    )
    with open_source(out) as src:
        idx, rep = verify_source(src)
        assert rep.ok and read_all(src, idx) == payloads(30)  # record 4 back to its original bytes


def test_repair_runs_in_a_job_process_and_says_a_refusal_in_one_line(
    qtbot, open_window, damaged_file, tmp_path
):
    """The repair's work is done in a job process (a repair can be seconds of Python: never in the
    window's), and what it refuses (writing over an input) comes back as the one line it said."""
    from tfrview.gui.workers.jobs import JobWorker

    w = open_window([damaged_file])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    before = damaged_file.read_bytes()
    started = []
    original = JobWorker.start
    JobWorker.start = lambda self: (started.append(self.request), original(self))[1]
    try:
        failed = run_and_wait(qtbot, lambda cb: w.exporting.write_repaired(damaged_file, "none", on_done=cb))
    finally:
        JobWorker.start = original
    assert [s.JOB for s in started] == ["write"] and started[0].what == "repair"
    assert isinstance(failed, Failed) and not failed.stopped
    message = failed.message
    assert "\n" not in message and "Error:" not in message and "input" in message
    assert damaged_file.read_bytes() == before
