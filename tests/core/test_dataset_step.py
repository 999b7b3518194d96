"""Issue 21: the dataset step after the merge reads fact columns as arrays over every file, with
each row's file, record and split, and the merged facts carry each file's split."""

from __future__ import annotations

import numpy as np

from tfrview.core.analysis import factcolumns
from tfrview.core.analysis.merge import merge
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard
from tfrview.core.output.writer import write_records
from tfrview.core.records.proto import example_pb2


def _example(i: int, with_score: bool) -> bytes:
    ex = example_pb2.Example()
    ex.features.feature["id"].int64_list.value.append(i)
    if with_score:
        ex.features.feature["score"].float_list.value.append(i / 2)
    return ex.SerializeToString()


def _analysed(tmp_path, names_and_records):
    paths = []
    for name, records in names_and_records:
        paths.append(tmp_path / name)
        write_records(paths[-1], records)
    results = [
        analyze_shard(ShardTask(str(p), i, True, read_cache=False, write_cache=False))
        for i, p in enumerate(paths)
    ]
    return merge(results)


def test_columns_over_files_with_splits(tmp_path):
    a = _analysed(
        tmp_path,
        [
            ("train-00000-of-00002.tfrecord", [_example(i, True) for i in range(3)]),
            ("train-00001-of-00002.tfrecord", [_example(i, i != 4) for i in range(3, 5)]),
            ("test-00000-of-00001.tfrecord", [_example(i, False) for i in range(5, 7)]),
        ],
    )
    assert a.splits == ["train", "train", "test"]
    c = factcolumns.columns(a, ["score", "id", "absent"])
    assert c.split_names == ["test", "train"]
    assert c.file.tolist() == [0, 0, 0, 1, 1, 2, 2]
    assert c.record.tolist() == [0, 1, 2, 0, 1, 0, 1]
    assert [c.split_names[s] for s in c.split] == ["train"] * 5 + ["test"] * 2
    assert c.values["id"].tolist() == list(range(7))
    assert c.valid["score"].tolist() == [True, True, True, True, False, False, False]
    assert np.allclose(c.values["score"][c.valid["score"]], [0, 0.5, 1.0, 1.5])
    assert not c.valid["absent"].any()
    facts = a.facts()
    assert facts.column("split").to_pylist() == ["train"] * 5 + ["test"] * 2
    assert a.qa is not None  # the step ran: the analysis was deep
