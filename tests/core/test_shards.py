"""Per-shard health from the index status bits (issue 9's Shards panel reads this)."""

import numpy as np

from tests.helpers import framed, payloads
from tfrview.core.analysis.shard_health import shard_health
from tfrview.core.tfrecord.dataset import Dataset


def test_each_file_counts_its_records_intact_damaged_and_problems(tmp_path):
    data, offs = framed(payloads(6))
    bad = bytearray(data)
    bad[offs[2] + 20] ^= 1
    (tmp_path / "a-00000-of-00003.tfrecord").write_bytes(data)
    (tmp_path / "a-00001-of-00003.tfrecord").write_bytes(bytes(bad))
    (tmp_path / "a-00002-of-00003.tfrecord").write_bytes(data[: offs[4]])
    with Dataset.open([str(tmp_path)]) as ds:
        for _ in ds.scan():
            pass
        before = shard_health(ds, [f.path.name for f in ds.files], {})
        assert list(before.records) == [6, 6, 4] and list(before.unchecked) == [
            6,
            6,
            4,
        ]  # framed, not verified
        from tfrview.core.tfrecord.index import verify

        for f in ds.files:
            list(verify(f.source, f.index))
        h = shard_health(ds, [f.path.name for f in ds.files], {1: {"error": 1}})
    assert list(h.intact) == [6, 5, 4]
    assert list(h.damaged) == [0, 1, 0]
    assert list(h.unchecked) == [0, 0, 0]
    assert h.problems[1].tolist() == [1, 0, 0]
    assert int(h.order("damaged", descending=True)[0]) == 1
    assert list(h.order("records")) == [2, 0, 1]  # ties keep the files' order
    assert h.size.dtype == np.int64 and h.size[2] == offs[4]


def test_an_unreadable_file_is_a_row_that_says_why(tmp_path):
    (tmp_path / "ok.tfrecord").write_bytes(framed(payloads(2))[0])
    with Dataset.open([str(tmp_path / "ok.tfrecord"), str(tmp_path / "gone.tfrecord")]) as ds:
        h = shard_health(ds, ["ok", "gone"], {})
    assert h.errors_text[0] == "" and h.errors_text[1]  # the reason the file would not open
    assert h.records[1] == 0 and h.size[1] == -1


def test_files_not_framed_yet_count_nothing_and_move_no_other_file(tmp_path):
    """Every file's figures come from one array over all their status bits (10,000 files at once):
    a file not framed yet, between framed ones, takes no other file's records."""
    from tfrview.core.tfrecord.index import verify

    data, offs = framed(payloads(5))
    bad = bytearray(data)
    bad[offs[3] + 20] ^= 1
    for i, content in enumerate((data, data, bytes(bad), data)):
        (tmp_path / f"b-{i:05d}-of-00004.tfrecord").write_bytes(content)
    with Dataset.open([str(tmp_path)]) as ds:
        for fi in (0, 2):  # files 1 and 3 not framed yet
            for _ in ds.scan_file(fi):
                pass
            list(verify(ds.files[fi].source, ds.files[fi].index))
        h = shard_health(ds, [f.path.name for f in ds.files], {2: {"error": 1, "info": 2}})
    assert list(h.records) == [5, 0, 5, 0]
    assert list(h.intact) == [5, 0, 4, 0] and list(h.damaged) == [0, 0, 1, 0]
    assert list(h.unchecked) == [0, 0, 0, 0]
    assert h.problems.tolist() == [[0, 0, 0], [0, 0, 0], [1, 0, 2], [0, 0, 0]]
