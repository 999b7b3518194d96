"""The window on a remote split (issue 11): rows, problems and the analysis as for local files."""

from __future__ import annotations

import pytest

from tests.gui.driver import Driver
from tests.helpers import RACCOON, framed, payloads_of
from tests.remote_servers import http_requests, http_server

pytest.importorskip("fsspec", reason="the remote extras are not installed (pip install -e '.[test]')")


def test_the_window_opens_a_split_over_http_and_reopens_it_without_fetching_records(qtbot, tmp_path):
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.gui.main_window import MainWindow

    payloads = payloads_of(RACCOON)
    for k in range(3):
        data, offs = framed(payloads[4 * k : 4 * k + 4])
        b = bytearray(data)
        if k == 2:
            b[offs[1] + 50] ^= 0x08
        (tmp_path / f"val-{k:05d}-of-00003.tfrecord").write_bytes(bytes(b))
    with http_server(tmp_path) as base:
        windows = []
        for _ in range(2):
            before = http_requests(base)
            w = MainWindow(Dataset.open([f"{base}/"]))
            qtbot.addWidget(w)
            w.show()
            windows.append(w)
            d = Driver(qtbot, w)
            d.wait_indexed()
            assert d.wait_checks().phase.value == "done"
            assert w.model.total() == 12 and w.model.status_of(9) == "damaged"
            assert w.ds.name == "val-?????-of-00003.tfrecord"
            assert sorted(r.record for r in w.problems.rows if r.problem.kind == "bad_data_crc") == [9]
            fetched = http_requests(base)["ranges"] - before["ranges"]
            w.shutdown()
        assert "unchanged since" in windows[1].status_label.text()
    assert fetched == 0  # the second window: sizes and ETags only; records came from what was kept


def test_the_indexer_fetches_the_next_remote_files_while_it_frames_one(tmp_path):
    """Read-ahead: while file 0 is framed, files 1..READ_AHEAD_FILES are fetched whole, each in one
    request, and the scan then reads them from the kept pages; files past that wait their turn."""
    from tests.helpers import payloads
    from tfrview.core.limits import READ_AHEAD_FILES
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.gui.workers.scan import ScanWorker

    n = READ_AHEAD_FILES + 3
    for k in range(n):
        (tmp_path / f"s-{k:05d}-of-{n:05d}.tfrecord").write_bytes(framed(payloads(300, base=3000))[0])
    with http_server(tmp_path) as base:
        ds = Dataset.open([f"{base}/"])
        w = ScanWorker(ds)
        pool = w._reader_ahead()
        w._read_ahead(pool, 0)
        pool.shutdown(wait=True)
        requests = [f.source._data.requests for f in ds.files]
        assert requests[1 : 1 + READ_AHEAD_FILES] == [1] * READ_AHEAD_FILES  # the whole file, one request
        assert requests[1 + READ_AHEAD_FILES :] == [0] * (n - 1 - READ_AHEAD_FILES)
        w.work()  # the scan and the CRC pass, as the thread runs them
        assert [f.source._data.requests for f in ds.files][1 : 1 + READ_AHEAD_FILES] == [1] * READ_AHEAD_FILES
        assert ds.count == 300 * n and all(f.index.done for f in ds.files)
