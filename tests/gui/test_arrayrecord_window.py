"""The window on an ArrayRecord file made by the official writer: its rows from the footer, a chunk
with a damaged header shown as a damaged row and a problem, a pickle record's disassembly."""

from __future__ import annotations

import pickle

import msgpack
import pytest

from tests.core.test_payload import make_example
from tests.gui.driver import Driver
from tests.helpers import write_arrayrecord

pytest.importorskip(
    "array_record.python.array_record_module",
    reason="the official array-record wheel is not installed here (it has no Windows build)",
)


def test_the_window_reads_an_arrayrecord_file(qtbot, open_window, tmp_path) -> None:
    from tfrview.core.tfrecord.source import open_source

    path = tmp_path / "train.array_record-00000-of-00001"
    recs = [make_example(label=[i % 3]) for i in range(20)] + [pickle.dumps({"step": 1}, protocol=5)]
    recs.append(msgpack.packb({"step": 2, "pose": [0.5, -1.0], "name": "arm"}))
    write_arrayrecord(path, "group_size:1,zstd:3", recs)
    with open_source(path) as src:
        begin = int(src.ar.chunks.begin[7])
    data = bytearray(path.read_bytes())
    data[begin + 10] ^= 2  # chunk 7's header
    path.write_bytes(data)

    win = open_window([path])
    d = Driver(qtbot, win)
    d.wait_index_ended()
    qtbot.waitUntil(lambda: any(s == "damaged" for _, _, s in d.table_records()), timeout=20000)
    rows = d.table_records()
    assert [n for n, _, _ in rows] == list(range(22))
    assert [n for n, _, s in rows if s != "ok"] == [7]
    # the chunk's own problem and words (offset, chunk, records lost), not a bad_data_crc of ours
    (problem,) = d.problem_records()
    assert problem[0] == "chunk_damaged" and problem[3] == 7
    assert f"chunk 7 at byte {begin:,} has a damaged header (hash mismatch)" in problem[2]
    assert "its 1 records (7-7) are lost" in problem[2]
    win.select_record(20)
    qtbot.waitUntil(lambda: win.tree.topLevelItemCount() > 0 and win.tree.topLevelItem(0).text(0) == "pickle")
    assert "never unpickled" in win.tree.topLevelItem(0).text(3)
    win.select_record(21)  # msgpack: a tree of its values
    qtbot.waitUntil(lambda: win.tree.topLevelItem(0).text(0) == "msgpack")
    root = win.tree.topLevelItem(0)
    assert [root.text(1), root.text(2)] == ["map", "3"]
    kids = [[root.child(i).text(c) for c in range(4)] for i in range(root.childCount())]
    assert kids == [["step", "int", "", "2"], ["pose", "array", "2", ""], ["name", "str", "3", "'arm'"]]
    assert [root.child(1).child(i).text(3) for i in range(2)] == ["0.5", "-1.0"]


def test_a_damaged_chunk_of_many_records_is_one_problem_verified_by_hashes(
    qtbot, open_window, tmp_path
) -> None:
    """group_size:8: a damaged chunk's 8 records are damaged rows under one `chunk_damaged` problem
    (the window verifies by the file's hashes, as `verify` does: no chunk decoded for a CRC)."""
    from tfrview.core.tfrecord.source import open_source

    path = tmp_path / "g8.array_record"
    write_arrayrecord(path, "group_size:8,zstd:3", [make_example(label=[i % 3]) for i in range(40)])
    with open_source(path) as src:
        begin = int(src.ar.chunks.begin[2])
    data = bytearray(path.read_bytes())
    data[begin + 10] ^= 2  # chunk 2's header: records 16-23
    path.write_bytes(data)

    win = open_window([path])
    d = Driver(qtbot, win)
    d.wait_index_ended()
    qtbot.waitUntil(lambda: sum(s == "damaged" for _, _, s in d.table_records()) == 8, timeout=20000)
    assert [n for n, _, s in d.table_records() if s != "ok"] == list(range(16, 24))
    kinds = [k for k, *_ in d.problem_records() if k != "arrayrecord_group_size"]
    assert kinds == ["chunk_damaged"]
    assert not any(k == "bad_data_crc" for k, *_ in d.problem_records())


def test_the_windows_salvage_writes_arrayrecord_through_the_official_writer(
    qtbot, open_window, tmp_path, monkeypatch
) -> None:
    """Save Intact Records of an ArrayRecord file: the dialog offers ArrayRecord first (the input's
    format, the writer being installed) and TFRecord; the job writes through the official writer,
    reads the file back and renames it; a damaged chunk's record is left out."""
    from array_record.python.array_record_module import ArrayRecordReader

    from tests.gui.test_salvage_export import run_and_wait
    from tfrview.core.output.arwriter import RecordFormat
    from tfrview.core.procs.messages import Failed
    from tfrview.core.tfrecord.source import open_source

    path = tmp_path / "s.array_record"
    recs = [make_example(label=[i]) for i in range(12)]
    write_arrayrecord(path, "group_size:1,brotli:6", recs)
    with open_source(path) as src:
        begin = int(src.ar.chunks.begin[5])
    data = bytearray(path.read_bytes())
    data[begin + 10] ^= 2  # chunk 5's header: record 5 is lost
    path.write_bytes(data)

    win = open_window([path])
    d = Driver(qtbot, win)
    d.wait_index_phase("done", timeout=20000)
    dlg, formats = win.exporting.format_dialog()
    assert formats == [RecordFormat.ARRAYRECORD, RecordFormat.TFRECORD]
    assert dlg.textValue().startswith("ArrayRecord, as the input (group_size:1,brotli")
    assert "written as ArrayRecord by default" in dlg.labelText()
    dlg.deleteLater()
    assert win.exporting._source_compression() == "none"  # TFRecord's compression word, not "arrayrecord"
    # Repair is TFRecord's: said at once, in one line, before any dialog asks anything
    from PySide6.QtWidgets import QInputDialog, QMessageBox

    said: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda *a: said.append(a[2]))
    monkeypatch.setattr(
        QInputDialog, "getItem", lambda *a, **k: (_ for _ in ()).throw(AssertionError("asked"))
    )
    win.exporting.save_repaired()
    assert len(said) == 1 and said[0].startswith("not for ArrayRecord: ") and "\n" not in said[0]
    monkeypatch.undo()

    out = tmp_path / "intact.array_record"
    res = run_and_wait(
        qtbot, lambda cb: win.exporting.write_intact(out, "none", on_done=cb, fmt=RecordFormat.ARRAYRECORD)
    )
    assert not isinstance(res, Failed), res
    assert (res.written, res.dropped) == (11, 1)
    reader = ArrayRecordReader(str(out))
    assert reader.read(list(range(reader.num_records()))) == recs[:5] + recs[6:]
    with open_source(out) as src:
        assert src.compression == "arrayrecord" and "brotli" in src.ar.footer.options
    assert not list(tmp_path.glob("*.partial"))  # renamed into place, nothing left beside it

    out2 = tmp_path / "intact.tfrecord"
    res = run_and_wait(qtbot, lambda cb: win.exporting.write_intact(out2, "none", on_done=cb))
    assert not isinstance(res, Failed) and res.written == 11
    with open_source(out2) as src:
        assert src.compression == "none"


def test_without_the_official_writer_the_dialog_says_tfrecord(qtbot, open_window, tmp_path, monkeypatch):
    from tfrview.core.output.arwriter import RecordFormat
    from tfrview.gui.controllers import export

    path = write_arrayrecord(tmp_path / "t.array_record", "group_size:1,zstd:3", [make_example(label=[1])])
    win = open_window([path])
    Driver(qtbot, win).wait_index_phase("done", timeout=20000)
    monkeypatch.setattr(export, "official_writer", lambda: None)
    dlg, formats = win.exporting.format_dialog()
    assert formats == [RecordFormat.TFRECORD] and dlg.textValue() == "TFRecord"
    assert "needs the official array-record package" in dlg.labelText()
    dlg.deleteLater()


def test_the_file_rows_show_a_riegeli_files_metadata_chunk(qtbot, open_window, tmp_path) -> None:
    """Below a record of a Riegeli file with a metadata chunk: its chunks and its metadata (record
    type, writer options, file descriptors by name); the metadata is no row of the table."""
    from tests.core.test_riegeli_metadata import RECS, metadata_bytes, riegeli_with_metadata

    path = riegeli_with_metadata(tmp_path, RECS, metadata_bytes(len(RECS)))
    win = open_window([path])
    d = Driver(qtbot, win)
    d.wait_index_ended()
    assert [n for n, _, _ in d.table_records()] == list(range(len(RECS)))
    win.select_record(0)

    def file_row():
        t = win.tree
        return next(
            (
                t.topLevelItem(i)
                for i in range(t.topLevelItemCount())
                if t.topLevelItem(i).text(0) == "ArrayRecord file"
            ),
            None,
        )

    qtbot.waitUntil(lambda: file_row() is not None)
    row = file_row()
    assert row.text(3) == "chunks: 5 (no footer)"  # info's words (reader.info_lines)
    lines = [row.child(i).text(3) for i in range(row.childCount())]
    assert lines[:3] == [
        "metadata: record type tensorflow.Example",
        "metadata: writer options transpose,zstd",
        "metadata: 5 records expected by the writer",
    ]
    assert lines[3].startswith("metadata: file descriptor tfrview/core/records/proto/example.proto (")
