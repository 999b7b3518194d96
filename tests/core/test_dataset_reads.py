"""Issues 19 and 21: the dataset step reads each file's stored fact table once for all its steps,
and only the columns they ask for; what each step gets is what it got when it read alone."""

from __future__ import annotations

import numpy as np
import pytest

from tests.core.test_payload import make_example
from tfrview.core.analysis import cache, datasetqa, duplicates, factcolumns, imagequality, labelrules
from tfrview.core.analysis.merge import merge
from tfrview.core.analysis.shard import analyze_shard, plan
from tfrview.core.output.writer import write_records


@pytest.fixture(autouse=True)
def own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield
    cache._forget()


def _box(i: int) -> bytes:
    return make_example(
        **{
            "image/width": [100],
            "image/height": [100],
            "image/object/bbox/xmin": [0.1],
            "image/object/bbox/ymin": [0.1],
            "image/object/bbox/xmax": [0.3 + i / 100],
            "image/object/bbox/ymax": [0.4],
            "image/object/class/text": [b"cat" if i % 2 else b"dog"],
            "label": [i % 3],
        }
    )


def _stored(tmp_path, files: dict[str, list[bytes]]):
    """The files analysed deep and stored, then their results loaded back from the store (facts
    read only when asked), merged."""
    paths = []
    for name, records in files.items():
        paths.append(tmp_path / "data" / name)
        paths[-1].parent.mkdir(exist_ok=True)
        write_records(paths[-1], records)
    tasks = plan([str(p) for p in paths], True)
    for t in tasks:
        analyze_shard(t)  # stored
    results = [cache.load(t) for t in tasks]
    assert all(r is not None and r.from_cache for r in results)
    return results


class Seen:
    """A gatherer that keeps the column names of each table it is given (a real `Gatherer`)."""

    def __init__(self, names):
        self.names, self.tables = names, []

    def needs(self, schema):
        return self.names

    def add(self, file_no, table):
        self.tables.append((file_no, table.num_rows, sorted(table.column_names)))

    def done(self):
        return self.tables


def test_a_stored_table_is_read_with_only_the_columns_picked(tmp_path):
    (r,) = _stored(tmp_path, {"a.tfrecord": [_box(i) for i in range(6)]})
    whole = r.deep.read_facts()
    part = r.deep.read_facts(lambda schema: ["record", "label", "image_width", "not a column"])
    assert part.column_names == ["record", "image_width", "label"]  # the table's order
    for name in part.column_names:
        assert part[name].equals(whole[name])
    assert part.schema.metadata == whole.schema.metadata  # the box spec comes along
    assert r.deep.read_facts(lambda schema: ["not a column"]).num_columns == 0


def test_one_read_of_each_table_serves_every_step(tmp_path):
    results = _stored(
        tmp_path,
        {
            "train-00000-of-00002.tfrecord": [_box(i) for i in range(5)],
            "train-00001-of-00002.tfrecord": [_box(i) for i in range(5, 8)],
        },
    )
    a = merge(results)
    seen = Seen(["record", "label"])
    cols, labelled, tables = factcolumns.read(
        a, [factcolumns.ColumnGatherer(a, ["phash", "brightness"]), labelrules.LabelGatherer(), seen]
    )
    assert [(fi, n) for fi, n, _ in tables] == [(0, 5), (1, 3)]  # each file's table once
    box_columns = {f"image/object/bbox/{c}" for c in ("xmin", "ymin", "xmax", "ymax")}
    wanted = {
        "record",
        "label",
        "phash",
        "brightness",
        "image_width",
        "image_height",
        "image/object/class/text",
    }
    assert set(tables[0][2]) - {"image/object/bbox/xmin#len"} == wanted | box_columns  # the union asked
    assert "pixel_hash" not in tables[0][2] and "offset" not in tables[0][2]  # nobody asked
    assert cols.record.tolist() == [0, 1, 2, 3, 4, 0, 1, 2] and cols.file.tolist() == [0] * 5 + [1] * 3
    assert labelled.unit == labelrules.Unit.BOXES and len(labelled) == 8
    # what the steps get from one read is what each got reading alone
    shared = factcolumns.gathered(a, datasetqa.STEPS)
    alone = factcolumns.columns(a, duplicates.HASHES + list(imagequality.SCORES))
    for name in duplicates.HASHES + list(imagequality.SCORES):
        assert np.array_equal(shared[0].values[name], alone.values[name], equal_nan=True)
        assert np.array_equal(shared[0].valid[name], alone.valid[name])
    assert shared[1] is shared[0]  # one Columns for the steps that ask for columns
    got, own = shared[2], labelrules.gather(a)
    assert got.names == own.names and np.array_equal(got.cls, own.cls)
    assert all(np.array_equal(x, y) for x, y in zip(got.corners, own.corners, strict=True))


def test_boxes_in_a_later_file_let_the_record_labels_go(tmp_path):
    results = _stored(
        tmp_path,
        {
            "a.tfrecord": [make_example(label=[i % 2]) for i in range(4)],
            "b.tfrecord": [_box(i) for i in range(3)],
        },
    )
    got = labelrules.gather(merge(results))
    assert got.unit == labelrules.Unit.BOXES and got.file.tolist() == [1, 1, 1]
    assert sorted(got.names) == ["cat", "dog"]


def test_a_growing_array_keeps_its_pieces_type_and_fills_the_missing_rows():
    def grown(pieces, expected=4, mask=False):
        g = factcolumns.Growing(expected, mask)
        for p in pieces:
            g.skip(p) if isinstance(p, int) else g.extend(p)
        return g.array()

    big = np.array([2**62 + 1, -3], np.int64)  # a 64-bit hash: a float would lose it
    out = grown([big, 3])  # more rows than expected: doubled, then cut to the rows given
    assert out.dtype == np.int64 and out.tolist() == [2**62 + 1, -3, 0, 0, 0]
    floats = grown([2, np.array([1.5], np.float32)], expected=10)
    assert floats.dtype == np.float32 and len(floats) == 3 and np.isnan(floats[:2]).all() and floats[2] == 1.5
    assert grown([np.array([True]), 1], mask=True).tolist() == [True, False]
    assert grown([1, np.array([None, "a"], dtype=object)]).tolist() == [None, None, "a"]
    assert grown([np.array([1], np.int32), np.array([2.5])]).tolist() == [1.0, 2.5]  # a wider type
    none = grown([2, 3])
    assert len(none) == 5 and np.isnan(none).all() and not none.flags.writeable
    assert not grown([2, 3], mask=True).any()


def test_a_file_whose_images_are_missing_keeps_the_others_hashes_exact(tmp_path):
    """A column a table holds only nulls of is a count of missing rows, never an array: the other
    files' 64-bit hashes stay integers (a float column would make two near words equal)."""
    import io

    from PIL import Image

    def jpeg(seed: int) -> bytes:
        img = np.random.default_rng(seed).integers(0, 255, (32, 48, 3), dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, "JPEG")
        return buf.getvalue()

    results = _stored(
        tmp_path,
        {
            "a.tfrecord": [make_example(label=[1]) for _ in range(3)],
            "b.tfrecord": [make_example(**{"image/encoded": [jpeg(i)], "label": [2]}) for i in range(4)],
        },
    )
    a = merge(results)
    c = factcolumns.columns(a, duplicates.HASHES)
    assert c.values["phash"].dtype == np.int64 and c.valid["phash"].tolist() == [False] * 3 + [True] * 4
    whole = a.shards[1].deep.read_facts()
    assert c.values["pixel_hash"][3:].tolist() == whole["pixel_hash"].to_pylist()


def _same(x, y) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
    if isinstance(x, tuple):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y, strict=True))
    return x == y


def test_tables_read_in_batches_give_what_file_by_file_reading_gives(tmp_path, monkeypatch):
    """Issue 19: stored tables are fetched and gathered a batch at a time (one query, one table a
    run of one schema); the record labels' names come in the order file-by-file reading names them
    (ids sorted within a file, a file's new ones after the earlier files')."""
    labels = [[5, 2, 5], [9, 2, 1], [0], [7, 9, 3, 3]]
    files = {
        f"s-{i:05d}-of-00005.tfrecord": [make_example(label=[v]) for v in vs] for i, vs in enumerate(labels)
    }
    files["s-00004-of-00005.tfrecord"] = [make_example(label=[b"cat"]), make_example(label=[b"dog"])]
    a = merge(_stored(tmp_path, files))
    names = duplicates.HASHES + list(imagequality.SCORES) + ["label"]
    batched = factcolumns.read(a, [factcolumns.ColumnGatherer(a, names), labelrules.LabelGatherer()])
    monkeypatch.setattr(factcolumns, "BATCH_FILES", 1)
    alone = factcolumns.read(a, [factcolumns.ColumnGatherer(a, names), labelrules.LabelGatherer()])
    (cb, lb), (ca, la) = batched, alone
    assert lb.unit == labelrules.Unit.RECORDS and lb.names == la.names
    assert lb.names[:6] == [
        "id 2",
        "id 5",
        "id 1",
        "id 9",
        "id 0",
        "id 3",
    ]  # as file by file: sorted within a file
    for f in ("file", "record", "slot", "cls", "class_keys", "specs"):
        assert _same(getattr(lb, f), getattr(la, f)), f
    assert cb.file.tolist() == [0] * 3 + [1] * 3 + [2] + [3] * 4 + [4] * 2
    for f in ("file", "record", "split"):
        assert _same(getattr(cb, f), getattr(ca, f)), f
    for n in names:
        assert _same(cb.values[n], ca.values[n]) and _same(cb.valid[n], ca.valid[n]), n


def test_a_batch_whose_stored_table_left_the_store_says_so(tmp_path):
    a = merge(_stored(tmp_path, {"a.tfrecord": [_box(i) for i in range(3)], "b.tfrecord": [_box(4)]}))
    cache.clear()
    with pytest.raises(cache.StoreError, match="left the result store"):
        factcolumns.columns(a, ["phash"])
