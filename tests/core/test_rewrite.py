"""`core.rewrite`: outputs read back by our reader and the `tfrecord` package, selection, class
maps, stratified grouped splits, TFDS naming, determinism, and failures that leave nothing behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import framed, payloads_of
from tfrview.core.output.writer import write_records
from tfrview.core.records.proto import example_pb2
from tfrview.core.rewrite.options import (
    ClassMap,
    GroupBy,
    RewriteError,
    RewriteOptions,
    parse_class_map,
    parse_fractions,
    parse_size,
)
from tfrview.core.rewrite.outdir import PARTIAL
from tfrview.core.rewrite.run import rewrite
from tfrview.core.tfrecord.report import index_and_verify
from tfrview.core.tfrecord.source import open_source

NAMES = {1: "cat", 2: "dog", 3: "bird"}


def example(i: int, label: int, source: str | None = None, extra: int = 0) -> bytes:
    ex = example_pb2.Example()
    f = ex.features.feature
    f["image/object/class/label"].int64_list.value[:] = [label, label]
    f["image/object/class/text"].bytes_list.value[:] = [NAMES[label].encode()] * 2
    f["image/object/bbox/xmin"].float_list.value[:] = [0.1, 0.2]
    f["image/object/bbox/ymin"].float_list.value[:] = [0.1, 0.2]
    f["image/object/bbox/xmax"].float_list.value[:] = [0.5, 0.6]
    f["image/object/bbox/ymax"].float_list.value[:] = [0.5, 0.6]
    f["image/source_id"].bytes_list.value[:] = [(source or f"s{i}").encode()]
    f["image/filename"].bytes_list.value[:] = [f"/imgs/{source or i}.jpg".encode()]
    f["n"].int64_list.value[:] = [i]
    f["pad"].bytes_list.value[:] = [bytes(extra)]
    return ex.SerializeToString(deterministic=True)


def numbers_of(path) -> list[int]:
    return [
        example_pb2.Example.FromString(p).features.feature["n"].int64_list.value[0] for p in payloads_of(path)
    ]


def verified(path) -> int:
    """Records of a file, asserting every one passed both CRCs."""
    with open_source(path) as src:
        idx, found = index_and_verify(src)
    assert not found and not idx.problems
    return idx.count


def other_reader(path, compression=None) -> list[bytes]:
    """The `tfrecord` PyPI package's reading (not ours), or a skip saying why."""
    reader = pytest.importorskip(
        "tfrecord.reader", reason="the tfrecord package (test extra) is not installed"
    )
    return [bytes(b) for b in reader.tfrecord_iterator(str(path), compression_type=compression)]


@pytest.fixture
def data(tmp_path):
    """Three files of 40 records (classes 1-3), the second with record 5's data damaged."""
    d = tmp_path / "in"
    d.mkdir()
    for k in range(3):
        recs = [example(40 * k + i, 1 + i % 3) for i in range(40)]
        if k == 1:
            raw, offs = framed(recs)
            b = bytearray(raw)
            b[offs[5] + 20] ^= 0x40
            (d / f"part-{k}.tfrecord").write_bytes(bytes(b))
        else:
            write_records(d / f"part-{k}.tfrecord", recs)
    return d


def test_copy_reads_back_whole_with_ours_and_tfrecord(data, tmp_path):
    out = tmp_path / "out"
    res = rewrite([str(data)], out, RewriteOptions(shards=3, index=True))
    assert (res.records_in, res.kept, res.dropped) == (120, 119, {"damaged": 1, "filter": 0, "tag": 0})
    shards = sorted(out.glob("*.tfrecord"))
    assert [s.name for s in shards] == [f"data-0000{i}-of-00003.tfrecord" for i in range(3)]
    got = [n for s in shards for n in numbers_of(s)]
    assert got == [n for n in range(120) if n != 45]  # in order, the damaged one left out
    assert sum(verified(s) for s in shards) == 119
    assert [b for s in shards for b in other_reader(s)] == [p for s in shards for p in payloads_of(s)]
    from tfrview.core.output.index_files import check_index

    for s in shards:
        with open_source(s) as src:
            idx, _ = index_and_verify(src)
        assert check_index(Path(str(s) + ".idx"), idx).ok
    import pyarrow.parquet as pq

    prov = pq.read_table(out / "provenance.parquet").to_pylist()
    assert len(prov) == 119
    row = prov[50]
    with open_source(row["input_file"]) as src:
        idx, _ = index_and_verify(src)
    assert int(idx.offsets[row["input_record"]]) == row["input_offset"]
    assert not list(tmp_path.glob(f"*{PARTIAL}"))


def test_shuffle_is_deterministic_and_gzip_reads_elsewhere(data, tmp_path):
    opts = RewriteOptions(shards=2, shuffle=True, seed=5, compression="gzip")
    rewrite([str(data)], tmp_path / "a", opts)
    rewrite([str(data)], tmp_path / "b", opts)
    rewrite([str(data)], tmp_path / "c", RewriteOptions(shards=2, shuffle=True, seed=6, compression="gzip"))
    for name in ("data-00000-of-00002.tfrecord", "data-00001-of-00002.tfrecord"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    a = [n for s in sorted((tmp_path / "a").glob("*.tfrecord")) for n in numbers_of(s)]
    c = [n for s in sorted((tmp_path / "c").glob("*.tfrecord")) for n in numbers_of(s)]
    assert sorted(a) == sorted(c) == [n for n in range(120) if n != 45] and a != c
    assert (
        len([b for s in sorted((tmp_path / "a").glob("*.tfrecord")) for b in other_reader(s, "gzip")]) == 119
    )


def test_stratified_grouped_split(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    rng = np.random.default_rng(1)
    recs, i = [], 0
    for g in range(240):
        label = 1 + int(rng.integers(0, 3))
        for _ in range(int(rng.integers(1, 4))):  # 1-3 copies of one source
            recs.append(example(i, label, source=f"src{g}"))
            i += 1
    write_records(d / "all.tfrecord", recs)
    out = tmp_path / "out"
    res = rewrite(
        [str(d)],
        out,
        RewriteOptions(split=parse_fractions("train=0.7,val=0.15,test=0.15"), group_by=GroupBy.SOURCE_ID),
    )
    assert res.kept == len(recs)
    seen: dict[str, str] = {}
    per: dict[str, Counter] = {}
    for s in out.glob("*.tfrecord"):
        split = s.name.split("-")[0]
        for p in payloads_of(s):
            f = example_pb2.Example.FromString(p).features.feature
            src = f["image/source_id"].bytes_list.value[0].decode()
            assert seen.setdefault(src, split) == split, f"{src} in {seen[src]} and {split}"
            per.setdefault(split, Counter())[f["image/object/class/label"].int64_list.value[0]] += 1
    total = Counter()
    for c in per.values():
        total += c
    for split, frac in (("train", 0.7), ("val", 0.15), ("test", 0.15)):
        n = sum(per[split].values())
        assert abs(n / len(recs) - frac) < 0.04
        for cls, k in total.items():  # each class's share of the split follows the dataset's
            assert abs(per[split][cls] / n - k / len(recs)) < 0.08


def test_class_map_rewrites_values_and_label_map(data, tmp_path):
    out = tmp_path / "out"
    res = rewrite([str(data)], out, RewriteOptions(class_map=parse_class_map("3=1,dog=animal")))
    from tfrview.core.records.labelmap import load_label_map

    assert dict(load_label_map(out / "label_map.pbtxt")) == {1: "cat", 2: "animal"}
    recs = payloads_of(next(out.glob("*.tfrecord")))
    # each file's record i has class 1 + i % 3: 42 intact 'cat' records (class 1) stay as they were
    assert len(recs) == 119 and res.changed == 119 - 42
    by_n = {}
    for p in recs:
        f = example_pb2.Example.FromString(p).features.feature
        by_n[f["n"].int64_list.value[0]] = (
            list(f["image/object/class/label"].int64_list.value),
            list(f["image/object/class/text"].bytes_list.value),
            p,
        )
    assert by_n[0][:2] == ([1, 1], [b"cat", b"cat"]) and by_n[0][2] == example(0, 1)  # byte for byte
    assert by_n[1][:2] == ([2, 2], [b"animal", b"animal"])
    assert by_n[2][:2] == ([1, 1], [b"cat", b"cat"])  # bird (3) joined cat (1): its name follows


def test_where_and_dropped_records(data, tmp_path):
    drops = tmp_path / "drop.jsonl"
    from tfrview.core.rewrite.tagged import read_record_list

    with open_source(data / "part-0.tfrecord") as src:
        idx, _ = index_and_verify(src)
    drops.write_text(
        json.dumps({"file": str(data / "part-0.tfrecord"), "offset": int(idx.offsets[3])}) + "\n"
    )
    res = rewrite(
        [str(data)],
        tmp_path / "out",
        RewriteOptions(where="n < 10 or n >= 110"),
        drop=frozenset(read_record_list(drops)),
    )
    assert res.dropped == {"damaged": 1, "filter": 99, "tag": 1}  # each counted once, in that order
    assert numbers_of(next((tmp_path / "out").glob("*.tfrecord"))) == [
        0,
        1,
        2,
        4,
        5,
        6,
        7,
        8,
        9,
        *range(110, 120),
    ]


def test_tfds_names_and_shard_lengths(tmp_path):
    from tests.tfdsdata import make_tfds
    from tfrview.core.tfds.info import read_info

    root = make_tfds(tmp_path / "tfds", lengths={"train": [5, 6], "test": [4]})
    out = tmp_path / "out"
    rewrite([str(root)], out, RewriteOptions(shards=3))
    names = sorted(p.name for p in out.iterdir())
    assert [n for n in names if ".tfrecord-" in n] == [
        "mnist-test.tfrecord-00000-of-00003",
        "mnist-test.tfrecord-00001-of-00003",
        "mnist-test.tfrecord-00002-of-00003",
        "mnist-train.tfrecord-00000-of-00003",
        "mnist-train.tfrecord-00001-of-00003",
        "mnist-train.tfrecord-00002-of-00003",
    ]
    info = read_info(out / "dataset_info.json")
    got = {s.name: s.shard_lengths for s in info.splits}
    for split, lengths in got.items():
        assert lengths == tuple(verified(out / f"mnist-{split}.tfrecord-{i:05d}-of-00003") for i in range(3))
    assert sum(got["train"]) == 11 and sum(got["test"]) == 4
    assert (out / "features.json").is_file()
    from tfrview.core.tfrecord.dataset import Dataset

    ds = Dataset.open([str(out)])
    assert {f.split for f in ds.files} == {"train", "test"} and len(ds.tfds) == 1


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("3", "is not OLD=NEW"),
        ("3=", "is not OLD=NEW"),
        ("3=1,3=2", "mapped twice"),
    ],
)
def test_bad_class_map_words(words, message):
    with pytest.raises(RewriteError, match=message):
        parse_class_map(words)


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("train=0.8,val=0.1", "add up to 0.9"),
        ("train=1.5", "at most 1"),
        ("train", "NAME=FRACTION"),
        ("a=0.5,a=0.5", "twice"),
    ],
)
def test_bad_fractions(words, message):
    with pytest.raises(RewriteError, match=message):
        parse_fractions(words)


def test_sizes():
    assert parse_size("256MB") == 256 << 20 and parse_size("1g") == 1 << 30 and parse_size("100") == 100
    with pytest.raises(RewriteError, match="no size"):
        parse_size("lots")


def _nothing_left(tmp_path, out):
    assert not out.exists() or not any(out.iterdir())
    assert not [p for p in tmp_path.rglob(f"*{PARTIAL}")]


def test_one_line_errors_leave_nothing(data, tmp_path):
    cases = [
        (data / "sub", RewriteOptions(), "inside the input"),
        (tmp_path / "out", RewriteOptions(class_map=ClassMap(ids=((7, 1),))), "class id 7 is in no record"),
        (
            tmp_path / "out",
            RewriteOptions(class_map=ClassMap(names=(("horse", "x"),))),
            "'horse' is in no record",
        ),
        (tmp_path / "out", RewriteOptions(where="nosuchkey > 1"), "no record has a feature"),
        (tmp_path / "out", RewriteOptions(where="n > 1000"), "no record is left"),
    ]
    for out, opts, msg in cases:
        with pytest.raises(Exception, match=msg) as got:
            rewrite([str(data)], out, opts)
        assert "\n" not in str(got.value)
        _nothing_left(tmp_path, out)
    full = tmp_path / "full"
    (full).mkdir()
    (full / "x").write_text("keep me")
    with pytest.raises(RewriteError, match=r"exists \(use --force"):
        rewrite([str(data)], full, RewriteOptions())
    rewrite([str(data)], full, RewriteOptions(force=True))
    assert not (full / "x").exists() and len(list(full.glob("*.tfrecord"))) == 1


CHILD = """
import os, resource, signal, sys, time
from tfrview.core.rewrite.options import RewriteOptions
from tfrview.core.rewrite.run import rewrite
mode, src, out = sys.argv[1:4]
if mode == "fsize":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
def progress(phase, done, total):
    if mode == "kill" and phase == "writing records" and done > 0:
        open(out + ".marker", "w").close()
        time.sleep(60)
try:
    rewrite([src], out, RewriteOptions(shards=4), progress=progress)
except Exception as exc:
    print(exc)
    sys.exit(2)
"""


@pytest.fixture
def bigger(tmp_path):
    d = tmp_path / "big"
    d.mkdir()
    write_records(d / "x.tfrecord", [example(i, 1 + i % 3, extra=200) for i in range(6000)])
    return d


def _child(*args) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.Popen([sys.executable, "-c", CHILD, *args], env=env, stdout=subprocess.PIPE, text=True)


def test_a_full_disk_is_one_line_and_nothing_left(bigger, tmp_path):
    out = tmp_path / "out"
    p = _child("fsize", str(bigger), str(out))
    said, _ = p.communicate(timeout=60)
    assert p.returncode == 2
    assert said.strip().endswith("nothing was written") and "cannot write" in said and said.count("\n") == 1
    _nothing_left(tmp_path, out)


@pytest.mark.slow  # a child process killed mid-write, then a second rewrite: 3-9 s on 2 loaded cores
def test_a_killed_rewrite_leaves_no_output_and_is_cleaned_after(bigger, tmp_path):
    out = tmp_path / "out"
    p = _child("kill", str(bigger), str(out))
    marker = Path(str(out) + ".marker")
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert marker.exists()
    p.send_signal(signal.SIGKILL)
    p.wait(10)
    assert not out.exists()
    left = list(tmp_path.glob(f".out.*{PARTIAL}"))
    assert len(left) == 1  # named as ours, with the dead writer's pid inside
    rewrite([str(bigger)], out, RewriteOptions(shards=2))  # the next run removes it
    assert not list(tmp_path.glob(f".out.*{PARTIAL}")) and len(list(out.glob("*.tfrecord"))) == 2


@pytest.mark.slow  # two job processes, one with the analysis pass's pool: 5-25 s on 2 loaded cores
def test_the_window_s_job_rewrites_and_says_a_bad_word_in_one_line(data, tmp_path):
    from tfrview.core.procs import launch
    from tfrview.core.procs import messages as m
    from tfrview.core.procs.requests import RewriteRequest

    def run(req) -> list:
        proc = launch.spawn(req)
        out = list(launch.read_lines(proc))
        proc.wait()
        return out

    out = run(RewriteRequest(paths=(str(data),), out=str(tmp_path / "o"), map_classes="dog=animal", shards=2))
    wrote = [x for x in out if isinstance(x, m.Rewrote)]
    assert out[-1] == m.Done() and len(wrote) == 1
    w = wrote[0]
    assert (w.records_in, w.kept, w.dropped["damaged"], w.changed) == (120, 119, 1, 39)  # 13 dogs a file
    assert [s[2] for s in w.shards] == [verified(tmp_path / "o" / s[0]) for s in w.shards]
    bad = run(RewriteRequest(paths=(str(data),), out=str(tmp_path / "p"), split="train=0.5"))
    assert isinstance(bad[-1], m.Failed) and "add up to 0.5" in bad[-1].message
    assert not (tmp_path / "p").exists()


@pytest.mark.slow  # the deep pass decodes 36 images and runs the dataset step: 2-7 s on 2 loaded cores
def test_copies_never_straddle_splits_by_dup_group(tmp_path):
    from tests.tfdsdata import jpeg

    d = tmp_path / "in"
    d.mkdir()
    recs = []
    for i in range(36):  # 12 pictures, each three times
        ex = example_pb2.Example()
        f = ex.features.feature
        k = i % 12
        f["image/encoded"].bytes_list.value[:] = [
            jpeg(48, 32, ((k * 20) % 256, (k * 70) % 256, (k * 110) % 256))
        ]
        f["image/format"].bytes_list.value[:] = [b"jpeg"]
        f["label"].int64_list.value[:] = [k % 2]
        f["n"].int64_list.value[:] = [i]
        recs.append(ex.SerializeToString())
    write_records(d / "pics.tfrecord", recs)
    out = tmp_path / "out"
    rewrite(
        [str(d)],
        out,
        RewriteOptions(split=parse_fractions("train=0.5,val=0.5"), group_by=GroupBy.DUP_GROUP, seed=2),
    )
    where = {}
    for s in out.glob("*.tfrecord"):
        for n in numbers_of(s):
            where.setdefault(n % 12, set()).add(s.name.split("-")[0])
    assert len(where) == 12 and all(len(v) == 1 for v in where.values())
    assert {next(iter(v)) for v in where.values()} == {"train", "val"}


def test_records_failing_finds_each_bad_header_and_data_crc():
    from tfrview.core.tfrecord.window import records_failing

    recs = [example(i, 1 + i % 3) for i in range(30)]
    raw, offs = framed(recs)
    starts = np.array(offs[:-1], dtype=np.int64)
    lengths = np.array([len(r) for r in recs], dtype=np.int64)
    bh, bd = records_failing(raw, starts, lengths)
    assert not bh.any() and not bd.any()
    b = bytearray(raw)
    b[offs[4] + 20] ^= 1  # record 4's data
    b[offs[9] + 9] ^= 1  # record 9's length CRC
    bh, bd = records_failing(bytes(b), starts, lengths)
    assert np.flatnonzero(bh).tolist() == [9] and np.flatnonzero(bd).tolist() == [4]
    # records with gaps between them (a filter's), and a length the bytes do not hold
    keep = np.array([0, 4, 7], dtype=np.int64)
    bad_len = lengths[keep].copy()
    bad_len[2] -= 1
    bh, bd = records_failing(bytes(b), starts[keep], bad_len)
    assert bh.tolist() == [False, False, True] and bd.tolist()[:2] == [False, True]


def test_a_record_damaged_after_its_stored_analysis_is_dropped_as_verification_would(tmp_path):
    """The copy checks the CRCs of what it reads against a stored analysis's framing; a record that
    fails there (its bytes changed, stat kept) starts the rewrite again with the inputs verified
    first: it is dropped and counted as damaged, and nothing of the first attempt is left."""
    d = tmp_path / "in"
    d.mkdir()
    path = d / "a.tfrecord"
    write_records(path, [example(i, 1 + i % 3) for i in range(40)])
    opts = RewriteOptions(where="n < 30", class_map=parse_class_map("3=1"), jobs=1)
    first = rewrite([str(path)], tmp_path / "one", opts)
    assert first.kept == 30 and first.dropped["damaged"] == 0
    with open_source(path) as src:
        idx, _ = index_and_verify(src)
    st = path.stat()
    with open(path, "r+b") as fh:  # record 5's data, in place; the stored analysis still applies
        fh.seek(int(idx.offsets[5]) + 20)
        c = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([c[0] ^ 0x40]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = rewrite([str(path)], tmp_path / "two", opts)
    assert again.dropped == {"damaged": 1, "filter": 10, "tag": 0} and again.kept == 29
    out = next((tmp_path / "two").glob("*.tfrecord"))
    assert verified(out) == 29 and 5 not in numbers_of(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "one", "two"]


def test_one_rule_and_one_wording_for_every_output_folder(data, tmp_path):
    """`output.atomic.check_new_output` is the rule the exports and the rewrite both say."""
    from tfrview.core.errors import TfrviewError
    from tfrview.core.output.atomic import atomic_dir, check_new_output
    from tfrview.core.rewrite.outdir import check_outdir

    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("x")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    cases = [
        (data / "sub", False, "is inside the input folder"),
        (data, False, "is inside the input folder"),
        (tmp_path, False, "holds the input"),
        (taken, False, "exists (use --force to replace it)"),
        (a_file, True, "exists and is no folder"),
    ]
    for out, force, words in cases:
        with pytest.raises(TfrviewError) as export:
            check_new_output(out, [data], force, folder=True)
        with pytest.raises(RewriteError) as rewrite_:
            check_outdir(out, [data], force)
        assert words in str(export.value) and str(export.value) == str(rewrite_.value)
    check_new_output(taken, [data], True, folder=True)  # --force replaces a folder
    late = tmp_path / "late"
    with (
        pytest.raises(TfrviewError, match=r"appeared while writing \(use --force"),
        atomic_dir(late, force=False) as tmp,
    ):
        (tmp / "a").write_text("a")
        late.mkdir()
        (late / "b").write_text("b")
    assert [p.name for p in late.iterdir()] == ["b"] and not list(tmp_path.glob(f".late*{PARTIAL}"))


def test_a_plain_shard_is_read_back_against_the_lengths_written(tmp_path):
    """`outdir._check_written`: the bytes on disk framed by the lengths the writer kept; a changed
    byte, a changed length or bytes past the end are each a one-line error."""
    from tfrview.core.rewrite.outdir import ShardWriter, _check_written

    recs = [example(i, 1, extra=i * 50) for i in range(50)]
    raw, offs = framed(recs)
    path = tmp_path / "s.tfrecord"
    w = ShardWriter(path)
    w.write_framed(raw[: offs[20]], 20, np.array([len(r) for r in recs[:20]]))
    for r in recs[20:]:
        w.write(r)
    w.close()
    lengths = w.lengths()
    got_offs, got_lens = _check_written(path, lengths, path)
    assert got_offs.tolist() == offs[:-1] and got_lens.tolist() == [len(r) for r in recs]
    for change in ("data", "length", "tail"):
        b = bytearray(raw)
        if change == "data":
            b[offs[33] + 15] ^= 1
        elif change == "length":
            b[offs[7]] ^= 1
        else:
            b += b"\0" * 16
        path.write_bytes(bytes(b))
        with pytest.raises(RewriteError, match=r"read back .*nothing was written"):
            _check_written(path, lengths, path)
