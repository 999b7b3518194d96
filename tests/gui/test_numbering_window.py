"""Issue 18 in the window: a missing shard is a row of the Problems and the Shards panels."""

from __future__ import annotations

from tests.gui.driver import Driver
from tests.helpers import framed, payloads


def test_a_missing_shard_is_a_problem_and_a_shard_row(qtbot, open_window, tmp_path):
    data, _ = framed(payloads(3))
    for i in (0, 1, 3):
        (tmp_path / f"train-{i:05d}-of-00004").write_bytes(data)
    w = open_window([tmp_path])
    d = Driver(qtbot, w)
    shown = d.problems_shown()
    assert [k for k, _, _ in shown] == ["missing_shard"]
    assert shown[0][2].startswith("train-00002-of-00004 is not there") and shown[0][1] == "00002"
    rows = d.shard_rows()
    assert [r["file"] for r in rows] == [f"train-{i:05d}-of-00004" for i in range(4)]
    assert [r["records"] for r in rows] == ["3", "3", "missing", "3"]
    assert rows[2]["errors"] == "" and w.model.total() == 9


def _dumped(capsys, path) -> list[tuple[int, int, str]]:
    import json

    from tfrview.cli import main

    main(["dump", "--json", str(path)])
    out, _ = capsys.readouterr()
    return [(d["record"], d["offset"], d.get("status", "ok")) for d in map(json.loads, out.splitlines())]


def test_the_window_numbers_records_as_verify_and_dump_do(qtbot, open_window, tmp_path, capsys):
    """A CR-stripped file, an overstated length that swallows two records, a record cut in its data
    CRC: the table's rows are dump's records, by number, offset and state."""
    from tests.cli.test_numbering import _cr_stripped, _swallowing
    from tfrview.core.tfrecord.framing import encode_record

    crlf, over, cut = tmp_path / "crlf.record", tmp_path / "over.record", tmp_path / "cut.record"
    _cr_stripped(crlf)
    _swallowing(over)
    cut.write_bytes(encode_record(b"y" * 3000)[:-3])
    for path, bad in ((crlf, [2, 5, 9]), (over, [0]), (cut, [0])):
        dumped = _dumped(capsys, path)
        w = open_window([path])
        d = Driver(qtbot, w)
        rows = d.table_records()
        assert [(n, off) for n, off, _ in rows] == [(n, off) for n, off, _ in dumped], path.name
        assert [n for n, _, s in rows if s != "ok"] == bad == [n for n, _, s in dumped if s != "ok"]
        assert [s for _, _, s in rows] == [t for _, _, t in dumped]  # the same words
        targets = sorted({r for _, _, _, r in d.problem_records() if r is not None})
        assert targets == bad
        if path is cut:  # shown as its bytes stand, and said so
            assert "all there" in d.record_note(0) and "unverified" in d.record_note(0)
