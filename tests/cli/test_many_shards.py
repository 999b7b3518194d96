"""Costs per shard (issue 19): `info` on many shards decodes its sample across the dataset, not a
sample a file."""

import json

from tests.cli.test_cli import run
from tests.helpers import rows_not_json
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


def _answer_of(paths, *what):
    """`info`'s stored answer over these files, if one is stored and still true."""
    from tfrview.cli import _info_answer
    from tfrview.core.analysis import plan

    keyed = _info_answer.key_of(plan([str(p) for p in paths], False, None), list(what))
    return _info_answer.load(keyed[0]) if keyed is not None else None


def test_info_of_a_stored_split_is_one_stored_answer_and_says_the_same(capsys, tmp_path):
    paths = [tmp_path / f"a-{i:05d}-of-00006.tfrecord" for i in range(6)]
    for i, p in enumerate(paths):
        _shard(p, 20 * i, 20, "odd" if i == 3 else "x")
    run(capsys, "verify", "--checks", "-q", "-j", "1", str(tmp_path))
    assert _answer_of(paths, False, 2000, False) is None
    first = [run(capsys, "info", *a, str(tmp_path)) for a in (["--json"], [], ["-v"])]
    doc = _answer_of(paths, False, 2000, False)
    assert doc is not None and len(doc["rows"]) == 6 and len(doc["datasets"]) == 1
    assert rows_not_json() == []  # the answer and every file's result: standard JSON
    again = [run(capsys, "info", *a, str(tmp_path)) for a in (["--json"], [], ["-v"])]
    assert again == first  # JSON and text, each file's read time included
    files = json.loads(first[0][1])["files"]
    assert all("analysed_at" in f for f in files) and files[3]["features"]["odd"]["present"] == 20
    assert "records       120" in first[1][1] and "record size" in first[2][1]


def test_info_answers_anew_when_a_file_changes_or_its_stored_result_does(capsys, tmp_path):
    paths = [tmp_path / f"b-{i:05d}-of-00004.tfrecord" for i in range(4)]
    for i, p in enumerate(paths):
        _shard(p, 10 * i, 10, "x")
    run(capsys, "verify", "--checks", "-q", "-j", "1", str(tmp_path))
    run(capsys, "info", "--json", str(tmp_path))
    assert _answer_of(paths, False, 2000, False) is not None
    _shard(paths[2], 0, 15, "y")  # a changed file: read again, the others from the store
    code, out, _ = run(capsys, "info", "--json", str(tmp_path))
    files = json.loads(out)["files"]
    assert code == 0 and [f["records"] for f in files] == [10, 10, 15, 10]
    assert "analysed_at" not in files[2] and "y" in files[2]["features"]
    # this look read a file itself: its answer is not kept (the next look says that file's read time)
    assert _answer_of(paths, False, 2000, False) is None
    code, out, _ = run(capsys, "info", "--json", str(tmp_path))
    assert all("analysed_at" in f for f in json.loads(out)["files"])
    assert _answer_of(paths, False, 2000, False) is not None
    # a plain verify stored since answers the look before the deep pass does: the answer goes
    run(capsys, "verify", "-q", "-j", "1", str(paths[0]))
    assert _answer_of(paths, False, 2000, False) is None
    code, out, _ = run(capsys, "info", "--json", "--sample", "4", str(tmp_path))
    files = json.loads(out)["files"]
    assert files[0]["sampled_records"] < 10 and files[1]["sampled_records"] == 10  # sampled vs every record
