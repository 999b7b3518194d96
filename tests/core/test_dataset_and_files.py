import pytest

from tests.helpers import payloads, read_all
from tfrview.core.errors import TfrviewError
from tfrview.core.output.index_files import check_index, format_index, read_index, write_index
from tfrview.core.output.salvage import salvage
from tfrview.core.output.writer import RecordWriter, write_records
from tfrview.core.tfrecord.dataset import Dataset, expand_paths, missing_shards, shard_name
from tfrview.core.tfrecord.report import index_source, verify_source
from tfrview.core.tfrecord.source import open_source


def make_shards(tmp_path, n=3, per=5, total=None):
    total = total or n
    paths = []
    for i in range(n):
        p = tmp_path / f"train-{i:05d}-of-{total:05d}.tfrecord"
        write_records(p, [f"s{i}r{j}".encode() for j in range(per)])
        paths.append(p)
    return paths


def test_dataset_numbers_records_across_shards(tmp_path):
    make_shards(tmp_path, 3, 5)
    with Dataset.open([str(tmp_path / "train-?????-of-00003.tfrecord")]) as ds:
        assert ds.name == "train-?????-of-00003.tfrecord"
        for _ in ds.scan():
            pass
        assert ds.count == 15
        assert ds.locate(0) == (0, 0) and ds.locate(7) == (1, 2) and ds.locate(14) == (2, 4)
        assert ds.read(7) == b"s1r2"
        with pytest.raises(IndexError):
            ds.locate(15)


def test_directory_and_natural_order(tmp_path):
    for name in ["b-10.tfrecord", "b-9.tfrecord", "labels.pbtxt", ".hidden"]:
        (tmp_path / name).write_bytes(b"")
    got = [p.name for p in expand_paths([str(tmp_path)])]
    assert got == ["b-9.tfrecord", "b-10.tfrecord"]


def test_nothing_matches(tmp_path):
    with pytest.raises(TfrviewError, match="no files match"):
        expand_paths([str(tmp_path / "nope-*")])


def test_missing_shards_are_named(tmp_path):
    paths = make_shards(tmp_path, 3, 1, total=4)
    assert missing_shards(paths) == ["train-00003-of-00004.tfrecord"]
    assert shard_name(paths) == "train-?????-of-00004.tfrecord"


def test_one_shard_set_is_read_once_and_any_other_names_each_as_before():
    """`groups.one_set`: names of one `-of-N` set differing only in the number take one match;
    names that are not (two folders, non-ASCII digits, another prefix) are matched a name, with the
    same answers for the name, the missing shards and the splits."""
    from pathlib import Path

    from tfrview.core.tfrecord.dataset import missing_shard_paths
    from tfrview.core.tfrecord.groups import one_folder_set, one_set
    from tfrview.core.tfrecord.splits import split_of_files

    one = [Path(f"/d/validation/v2-{i:05d}-of-00010.tfrecord") for i in range(10) if i != 3]
    assert one_set([p.name for p in one]) == (3, 8)
    assert shard_name(one) == "v2-?????-of-00010.tfrecord"
    assert missing_shard_paths(one) == [Path("/d/validation/v2-00003-of-00010.tfrecord")]
    assert split_of_files([str(p) for p in one]) == ["validation"] * 9
    two = [Path("/d/a-00000-of-00002"), Path("/e/a-00001-of-00002")]  # one set's names, two folders
    assert one_set([p.name for p in two]) == (2, 7)
    assert missing_shard_paths(two) == [Path("/d/a-00001-of-00002"), Path("/e/a-00000-of-00002")]
    assert split_of_files(["/d/train/a-00000-of-00002", "/d/val/a-00001-of-00002"]) == ["train", "validation"]
    assert one_folder_set([str(p) for p in one]) == (len("/d/validation/"), 3, 8)
    assert one_folder_set([str(p) for p in two]) is None
    sub = [
        Path("/d/a-00000-of-00002"),
        Path("/d/s/a-00001-of-00002"),
    ]  # a shard in a subfolder: not one folder
    assert one_folder_set([str(p) for p in sub]) is None
    assert missing_shard_paths(sub) == [Path("/d/a-00001-of-00002"), Path("/d/s/a-00000-of-00002")]
    assert one_set(["x-0٣-of-00002", "x-01-of-00002"]) is None  # an Arabic-Indic digit: matched a name
    mixed = [Path("/d/a-00000-of-00002"), Path("/d/b-00001-of-00002")]
    assert one_set([p.name for p in mixed]) is None
    assert shard_name(mixed) == "2 files in d"
    assert [p.name for p in missing_shard_paths(mixed)] == ["a-00001-of-00002", "b-00000-of-00002"]


def test_unopenable_file_stays_with_its_error(tmp_path):
    make_shards(tmp_path, 1)
    with Dataset.open([str(tmp_path / "train-00000-of-00001.tfrecord"), str(tmp_path / "gone")]) as ds:
        assert ds.files[1].source is None and "no such file" in ds.files[1].error


def test_index_file_roundtrip_and_check(tmp_path):
    path = tmp_path / "a.tfrecord"
    write_records(path, payloads(20))
    with open_source(path) as src:
        idx = index_source(src)
    out = tmp_path / "a.idx"
    write_index(out, idx)
    offs, sizes = read_index(out)
    assert offs.tolist() == idx.offsets.tolist()
    assert (sizes - 16).tolist() == idx.lengths.tolist()
    assert format_index(idx).splitlines()[1] == f"{int(idx.offsets[1])} {int(idx.lengths[1]) + 16}"
    assert check_index(out, idx).ok
    lines = out.read_text().splitlines()
    lines[3] = "1 2"
    (tmp_path / "bad.idx").write_text("\n".join(lines[:-1]) + "\n")
    res = check_index(tmp_path / "bad.idx", idx)
    assert not res.ok
    assert any("lists 19 records" in m for m in res.messages)
    assert any(m.startswith("line 4:") for m in res.messages)
    (tmp_path / "junk.idx").write_text("hello\n")
    with pytest.raises(TfrviewError, match="expected 'offset size'"):
        read_index(tmp_path / "junk.idx")


def test_writer_is_atomic(tmp_path):
    dest = tmp_path / "out.tfrecord"
    dest.write_bytes(b"previous contents")
    with pytest.raises(RuntimeError), RecordWriter(dest) as w:
        w.write(b"x")
        raise RuntimeError("boom")
    assert dest.read_bytes() == b"previous contents"
    assert [p.name for p in tmp_path.iterdir()] == ["out.tfrecord"]


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_salvage_keeps_every_intact_record(tmp_path, compression):
    pls = payloads(30)
    src_path = tmp_path / "in.tfrecord"
    write_records(src_path, pls, compression)
    if compression == "none":
        data = bytearray(src_path.read_bytes())
        with open_source(src_path) as s:
            idx = index_source(s)
        data[int(idx.offsets[4]) + 14] ^= 1  # bad data CRC in record 4
        data[int(idx.offsets[9]) + 2] ^= 1  # bad length header in record 9 (data intact)
        src_path.write_bytes(bytes(data))
        expect = pls[:4] + pls[5:]
    else:
        expect = pls
    before = src_path.read_bytes()
    out = tmp_path / "out.tfrecord"
    with open_source(src_path) as src:
        idx, _ = verify_source(src)
        res = salvage(src, idx, out)
    assert src_path.read_bytes() == before  # the input is never modified
    with open_source(out) as o:
        assert o.compression == compression
        idx2, rep = verify_source(o)
        assert rep.ok
        assert read_all(o, idx2) == expect
    assert res.written == len(expect)
    if compression == "none":
        assert res.dropped == 1 and res.reheadered == 1


def test_salvage_refuses_to_overwrite_its_input(tmp_path):
    p = tmp_path / "a.tfrecord"
    write_records(p, payloads(3))
    with open_source(p) as src:
        idx, _ = verify_source(src)
        with pytest.raises(TfrviewError, match="refusing to write over an input"):
            salvage(src, idx, p)


def test_written_files_get_the_usual_permissions_not_mkstemps_0600(tmp_path):
    import os
    import stat

    from tfrview.core.output.atomic import atomic_write_text

    umask = os.umask(0o022)
    try:
        write_records(tmp_path / "a.tfrecord", [b"x"])
        atomic_write_text(tmp_path / "a.idx", "0 17\n")
    finally:
        os.umask(umask)
    for name in ("a.tfrecord", "a.idx"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.idx", "a.tfrecord"]  # no temporary left


def test_thousands_of_shards_fit_under_a_low_open_file_limit(tmp_path):
    """Each mapped shard costs one descriptor, and the soft limit is raised when a dataset needs it."""
    import subprocess
    import sys

    for i in range(400):
        write_records(tmp_path / f"s-{i:05d}-of-00400.tfrecord", [b"r%d" % i])
    code = (
        "import resource, sys\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "from tfrview.core.tfrecord.dataset import Dataset\n"
        "ds = Dataset.open([sys.argv[1]])\n"
        "print(sum(1 for f in ds.files if f.source is not None), [f.error for f in ds.files if f.error][:1])\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "400", r.stdout


def test_workers_lower_their_own_priority():
    import os
    import subprocess
    import sys

    code = "import os; from tfrview.core.childproc import lower_priority; lower_priority(); print(os.nice(0))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert int(r.stdout) >= min(os.nice(0) + 10, 19)
    # a big file's part process frames beside its parent, which waits for it: at the parent's priority
    code = "import os; from tfrview.core.childproc import worker_start; worker_start(lower=False); print(os.nice(0))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert int(r.stdout) == os.nice(0)


def test_a_folder_lists_in_natural_order_with_or_without_one_name_shape(tmp_path):
    """Names of one shape (a shard set) sort as text, any others by the natural key: the same
    order either way, and side files and hidden names stay out."""
    from tfrview.core.tfrecord.dataset import _natural_name_key, _natural_sorted

    same = [f"train-{i:05d}-of-00012.tfrecord" for i in (11, 2, 0, 10, 1)]
    mixed = ["f10.tfrecord", "f9.tfrecord", "f1.tfrecord", "a01", "a1", "a001", "b2", "a10"]
    for names in (same, mixed, [], ["x"]):
        assert _natural_sorted(list(names)) == sorted(names, key=_natural_name_key)
    listed = ["f10.tfrecord", "f9.tfrecord", "f1.tfrecord", "a1", "b2", "a10"]  # (no ties: a1, a01)
    for n in [*listed, ".hidden.tfrecord", "labels.pbtxt", "data.JSON"]:
        (tmp_path / n).write_bytes(b"")
    assert [p.name for p in expand_paths([str(tmp_path)])] == sorted(listed, key=_natural_name_key)
