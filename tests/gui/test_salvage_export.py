from tests.helpers import read_all
from tfrview.core.report import verify_source
from tfrview.core.source import open_source


def run_and_wait(qtbot, start):
    box = {}
    start(lambda result: box.setdefault("r", result))
    qtbot.waitUntil(lambda: "r" in box, timeout=30000)
    return box["r"]


def test_save_intact_records_from_the_window(qtbot, open_window, damaged_file, tmp_path):
    w = open_window([damaged_file])
    qtbot.waitUntil(lambda: w.progress_state is not None and w.progress_state.phase == "done", timeout=10000)
    before = damaged_file.read_bytes()
    out = tmp_path / "intact.tfrecord"
    status, res = run_and_wait(qtbot, lambda cb: w.write_intact(out, "gzip", on_done=cb))
    assert status == "ok" and res.written == 29 and res.dropped == 1 and res.damaged_regions == 1
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
    status, res = run_and_wait(qtbot, lambda cb: w.write_export("records", numbers, out, "none", on_done=cb))
    assert status == "ok" and res.written == 4
    with open_source(out) as src:
        idx, rep = verify_source(src)
        assert rep.ok and read_all(src, idx) == [w.ds.read(n) for n in numbers]
    out = tmp_path / "sel.jsonl"
    status, res = run_and_wait(qtbot, lambda cb: w.write_export("jsonl", numbers, out, on_done=cb))
    assert status == "ok" and len(out.read_text().splitlines()) == 4


def test_export_refuses_to_write_over_an_input(qtbot, open_window, damaged_file):
    w = open_window([damaged_file])
    before = damaged_file.read_bytes()
    status, msg = run_and_wait(qtbot, lambda cb: w.write_export("records", [0], damaged_file, on_done=cb))
    assert status == "error" and "refusing" in msg
    assert damaged_file.read_bytes() == before
