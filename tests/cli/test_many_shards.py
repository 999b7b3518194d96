"""Costs per shard (issue 19): `info` on many shards decodes its sample across the dataset, not a
sample a file."""

import json

from tests.cli.test_cli import run
from tfrview.core.records.proto import example_pb2
from tfrview.core.tfrecord.framing import encode_record


def _shard(path, first: int, n: int, key: str) -> None:
    recs = []
    for i in range(first, first + n):
        ex = example_pb2.Example()
        ex.features.feature["label"].int64_list.value.append(i)
        ex.features.feature[key].float_list.value.extend([0.5] * 3)
        recs.append(encode_record(ex.SerializeToString()))
    path.write_bytes(b"".join(recs))


def test_info_spreads_its_sample_over_the_shards(capsys, tmp_path):
    for i in range(6):  # shard 3 alone holds the key "odd": one sampled record of it must name it
        _shard(tmp_path / f"s-{i:05d}-of-00006.tfrecord", 100 * i, 100, "odd" if i == 3 else "x")
    code, out, _ = run(capsys, "info", "--json", "--sample", "12", str(tmp_path))
    doc = json.loads(out)
    files, (ds,) = doc["files"], doc["datasets"]
    assert code == 0 and [f["records"] for f in files] == [100] * 6
    sampled = [f["sampled_records"] for f in files]
    assert sum(sampled) == ds["sampled_records"] == 12 and min(sampled) >= 1  # not 12 a file
    assert set(files[3]["features"]) == {"label", "odd"} and set(files[0]["features"]) == {"label", "x"}
    assert ds["features"]["odd"]["present"] == sampled[3]


def test_info_samples_each_shard_once_even_when_the_sample_is_smaller_than_the_shards(capsys, tmp_path):
    for i in range(5):
        _shard(tmp_path / f"t-{i:05d}-of-00005.tfrecord", 10 * i, 10, "x")
    code, out, _ = run(capsys, "info", "--json", "--sample", "2", str(tmp_path))
    files = json.loads(out)["files"]
    assert code == 0 and [f["sampled_records"] for f in files] == [1] * 5
    assert all(f["features"]["label"]["types"] == ["int64"] for f in files)
