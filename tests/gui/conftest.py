import os

import pytest

from tests.gui.driver import Driver
from tests.helpers import payloads
from tfrview.core.output.writer import write_records
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.framing import encode_record


@pytest.fixture
def open_window(qtbot):
    """Open a MainWindow on paths; closes it (joining its workers) at the end of the test."""
    from tfrview.gui.main_window import MainWindow

    windows = []

    def _open(paths, demo=False, wait=True):
        missing = [str(p) for p in paths if not os.path.lexists(p)]
        if missing:  # fail now, not after waiting out the index timeout
            pytest.fail(f"test fixture missing: {', '.join(missing)}")
        w = MainWindow(Dataset.open([str(p) for p in paths]), demo=demo)
        qtbot.addWidget(w)
        w.resize(1200, 800)
        w.show()
        windows.append(w)
        if wait:
            Driver(qtbot, w).wait_indexed()
        return w

    yield _open
    for w in windows:
        w.shutdown()


@pytest.fixture
def damaged_file(tmp_path):
    recs = [encode_record(p) for p in payloads(30)]
    b = bytearray(recs[4])
    b[20] ^= 1
    recs[4] = bytes(b)
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(b"".join(recs[:10]) + b"\x00garbage!" * 3 + b"".join(recs[10:]))
    return path


@pytest.fixture
def many_records(tmp_path):
    path = tmp_path / "many.tfrecord"
    write_records(path, (b"r%07d" % i for i in range(300_000)))
    return path
