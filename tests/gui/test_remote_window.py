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
            assert w.model.total() == 12 and w.model.status_of(9) == "bad_data_crc"
            assert w.ds.name == "val-?????-of-00003.tfrecord"
            assert sorted(r.record for r in w.problems.rows if r.problem.kind == "bad_data_crc") == [9]
            fetched = http_requests(base)["ranges"] - before["ranges"]
            w.shutdown()
        assert "unchanged since" in windows[1].status_label.text()
    assert fetched == 0  # the second window: sizes and ETags only; records came from what was kept
