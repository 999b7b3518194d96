"""A dataset's files opened when first read, under a bound on descriptors held (tfrecord/lazyfile)."""

import gzip
import os

import pytest

from tfrview.core import limits
from tfrview.core.errors import SourceError
from tfrview.core.output.writer import write_records
from tfrview.core.tfrecord import lazyfile
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.framing import encode_record


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _shards(folder, n: int, per: int = 3) -> None:
    for i in range(n):
        write_records(folder / f"s-{i:05d}-of-{n:05d}.tfrecord", [b"f%dr%d" % (i, j) for j in range(per)])


def test_many_files_open_with_no_file_opened_until_read(tmp_path, monkeypatch):
    _shards(tmp_path, 500)
    opened: list[str] = []
    real_open = os.open

    def counting_open(path, *a, **kw):  # a spy: the real open runs
        opened.append(os.fspath(path))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(os, "open", counting_open)
    before = _fds()
    with Dataset.open([str(tmp_path)]) as ds:
        assert len(ds.files) == 500 and ds.missing == []
        assert [f.source.file_size for f in ds.files[:2]] == [os.path.getsize(f.path) for f in ds.files[:2]]
        assert not [p for p in opened if p.startswith(str(tmp_path))]  # no file opened yet
        assert _fds() == before
        for _ in ds.scan_file(7):
            pass
        assert ds.files[7].index.count == 3
        assert [p for p in opened if p.startswith(str(tmp_path))] == [str(ds.files[7].path)]  # that file only
        assert ds.files[7].compression == "none"


def test_the_descriptor_bound_is_kept_when_more_files_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "OPEN_FILES_HELD", 8)
    _shards(tmp_path, 40)
    gz = tmp_path / "z-gzip.tfrecord"  # a compressed file among them: reopened, it still inflates
    gz.write_bytes(gzip.compress(b"".join(encode_record(b"z%d" % j) for j in range(3))))
    before = _fds()
    with Dataset.open([str(tmp_path)]) as ds:
        peak = 0
        for _ in ds.scan():
            peak = max(peak, _fds() - before)
        assert ds.count == 40 * 3 + 3
        assert peak <= 8 and lazyfile.held() <= 8
        got = [ds.read(n) for n in range(ds.count)]  # every file read again, in and out of the bound
        assert got[:4] == [b"f0r0", b"f0r1", b"f0r2", b"f1r0"] and got[-3:] == [b"z0", b"z1", b"z2"]
        assert ds.read(5) == b"f1r2" and _fds() - before <= 8
        assert ds.files[-1].compression == "gzip"
    assert _fds() <= before  # closing the dataset closes what it held (others' may have been closed too)


def test_a_file_replaced_after_its_descriptor_was_closed_is_said(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "OPEN_FILES_HELD", 4)
    _shards(tmp_path, 12)
    with Dataset.open([str(tmp_path)]) as ds:
        list(ds.scan())
        assert ds.read(0) == b"f0r0"
        for n in range(3, ds.count):  # the first file's descriptor is closed on the way
            ds.read(n)
        other = tmp_path / "other"
        write_records(other, [b"something else"] * 3)
        os.replace(other, ds.files[0].path)
        with pytest.raises(SourceError, match="replaced"):
            ds.read(0)


def test_what_cannot_be_read_is_said_at_open_without_opening_it(tmp_path):
    _shards(tmp_path, 2)
    fifo = tmp_path / "pipe.tfrecord"
    os.mkfifo(fifo)  # no writer: opening it would wait
    with Dataset.open(
        [
            str(tmp_path / "s-00000-of-00002.tfrecord"),
            str(fifo),
            str(tmp_path / "gone.tfrecord"),
            str(tmp_path),
        ]
    ) as ds:
        errors = {f.path.name: f.error for f in ds.files if f.error}
        assert "not a regular file (a named pipe)" in errors["pipe.tfrecord"]
        assert "no such file" in errors["gone.tfrecord"]
        assert [f.path.name for f in ds.files if f.source is not None] == [
            "s-00000-of-00002.tfrecord",
            "s-00001-of-00002.tfrecord",
        ]


def test_a_file_removed_between_listing_and_reading_is_said_and_the_rest_are_read(tmp_path):
    _shards(tmp_path, 3)
    with Dataset.open([str(tmp_path)]) as ds:
        os.unlink(ds.files[1].path)
        list(ds.scan())
        assert [f.index.count for f in ds.files] == [3, 0, 3]
        assert ds.files[1].source is None and "s-00001-of-00003.tfrecord: no such file" in ds.files[1].error
        assert ds.read(3) == b"f2r0"


def test_the_status_lines_compressions_are_those_of_files_read_so_far(tmp_path):
    """What the window's status line asks before its first paint opens no file."""
    _shards(tmp_path, 2)
    (tmp_path / "z.tfrecord").write_bytes(gzip.compress(encode_record(b"z")))
    before = _fds()
    with Dataset.open([str(tmp_path)]) as ds:
        assert ds.compressions_known() == (frozenset(), False) and _fds() == before  # none opened
        list(ds.scan())
        assert ds.compressions_known() == (frozenset({"none", "gzip"}), True)
