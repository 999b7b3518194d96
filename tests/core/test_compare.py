"""`analysis.compare` and `tfrview compare`: two generated splits with known shifts (a key only in
train, a type change, a category share moved, a numeric histogram moved, a presence change) and
two features unchanged; exactly the shifted ones are flagged, the measures as computed by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tfrview.cli import main
from tfrview.core.analysis.compare import Measure, Shift, records_in_bar
from tfrview.core.output.writer import write_records
from tfrview.core.records.proto import example_pb2

N = 200


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _example(feats: dict) -> bytes:
    ex = example_pb2.Example()
    for k, v in feats.items():
        f = ex.features.feature[k]
        if isinstance(v, bytes):
            f.bytes_list.value.append(v)
        elif isinstance(v, float):
            f.float_list.value.append(v)
        else:
            f.int64_list.value.append(v)
    return ex.SerializeToString()


def _train(i: int) -> bytes:
    return _example(
        {
            "only_train": 1.5,
            "id": i,
            "colour": b"red" if i % 2 else b"blue",  # 50 % red
            "score": 1.0 if i % 2 else 0.0,  # half 0, half 1
            "steady": float(i % 10),
            "weight": 2.0,
            "label": i % 4,
        }
    )


def _val(i: int) -> bytes:
    d = {
        "id": str(i).encode(),
        "colour": b"red" if i % 5 else b"blue",  # 80 % red
        "score": 1.0,
        "steady": float(i % 10),
        "label": i % 4,
    }
    if i % 2:
        d["weight"] = 2.0  # in half the records
    return _example(d)


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    write_records(d / "train-00000-of-00001.tfrecord", [_train(i) for i in range(N)])
    write_records(d / "validation-00000-of-00001.tfrecord", [_val(i) for i in range(N)])
    return d


def _run(capsys, *args):
    code = main(["compare", "-j", "1", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def _sides(data):
    from tfrview.core.analysis.compare import side_of
    from tfrview.core.analysis.results import ShardTask
    from tfrview.core.analysis.shard import analyze_shard

    out = []
    for fi, name in enumerate(("train", "validation")):
        path = str(data / f"{name}-00000-of-00001.tfrecord")
        r = analyze_shard(ShardTask(path, fi, deep=True))
        out.append(side_of(name, [r], [fi * N]))
    return out


def test_exactly_the_shifted_features_are_flagged_with_hand_computed_measures(data):
    from tfrview.core.analysis.compare import compare

    a, b = _sides(data)
    c = compare(a, b)
    by = {f.key: f for f in c.features if not f.derived}
    assert {f.key for f in c.drifted if not f.derived} == {"only_train", "id", "colour", "score", "weight"}
    assert by["only_train"].shifts == (Shift.ONLY_IN_A,)
    assert by["id"].shifts == (Shift.TYPE_CHANGED,) and by["id"].types_a == ("int64_list",)
    assert by["id"].types_b == ("bytes_list",)
    assert by["colour"].measure == Measure.L_INFINITY
    assert by["colour"].value == pytest.approx(0.3)  # red 0.5 -> 0.8
    # score: train half 0, half 1; validation all 1; 10 common bins over [0, 1]
    p, q = np.array([0.5, 0.5]), np.array([0.0, 1.0])
    m = (p + q) / 2
    jsd = 0.5 * (0.5 * math.log2(0.5 / 0.25) + 0.5 * math.log2(0.5 / 0.75)) + 0.5 * math.log2(1 / 0.75)
    assert by["score"].measure == Measure.JENSEN_SHANNON
    assert by["score"].value == pytest.approx(jsd) and m.sum() == 1
    assert by["weight"].shifts == (Shift.PRESENCE,)
    assert (by["weight"].presence_a, by["weight"].presence_b) == (1.0, 0.5)
    assert by["steady"].value == pytest.approx(0.0) and not by["steady"].drifted
    assert by["label"].measure == Measure.L_INFINITY and by["label"].value == pytest.approx(0.0)
    assert c.features[0].drifted and not c.features[-1].drifted  # drifted first
    assert (c.records_a, c.records_b) == (N, N)
    from tfrview.core.analysis.compare import Comparison

    assert Comparison.from_json(json.loads(json.dumps(c.to_json()))) == c


def test_a_bar_names_its_records(data):
    a, b = _sides(data)
    blue = records_in_bar(b, "colour", False, category="blue")
    assert blue.tolist() == [N + i for i in range(0, N, 5)]
    ones = records_in_bar(a, "score", False, 0.9, 1.0, closed=True)
    assert ones.tolist() == list(range(1, N, 2))


def test_cli_exit_status_and_json(capsys, data):
    code, out, _ = _run(capsys, "train", "val", data)  # val: an alias of validation
    assert code == 1
    assert "shifted: 5 of" in out and "infinity_norm 0.3000 > 0.1" in out and "only in train" in out
    code, out, _ = _run(capsys, "train", "validation", data, "--json")
    d = json.loads(out)
    assert code == 1 and d["drifted"] == 5 and d["records_a"] == N
    assert {f["key"] for f in d["features"] if f["drifted"]} == {
        "only_train",
        "id",
        "colour",
        "score",
        "weight",
    }
    code, out, _ = _run(capsys, "train", "validation", data, "--json", "--rule", "infinity_norm=0.5")
    assert code == 1 and "colour" not in {f["key"] for f in json.loads(out)["features"] if f["drifted"]}
    t = data / "train-00000-of-00001.tfrecord"
    code, out, _ = _run(capsys, t, t)  # two paths, the same data: nothing shifted
    assert code == 0 and "shifted: 0 of" in out


def test_cli_bad_input_is_one_line_and_exit_2(capsys, data):
    code, out, err = _run(capsys, "train", "holdout", data)
    assert code == 2 and "no split 'holdout'" in err and "train, validation" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = _run(capsys, "train", "validation", data, "--rule", "nope=1")
    assert code == 2 and "no rule is called 'nope'" in err
    code, out, err = _run(
        capsys, "train", "holdout", data, "--split", f"holdout={data / 'validation-00000-of-00001.tfrecord'}"
    )
    assert code == 1 and "holdout" in out


def test_the_compare_job_answers_with_a_typed_message_and_selects_a_bars_records(data, monkeypatch):
    from tfrview.core.procs import jobs
    from tfrview.core.procs.messages import Compared, Matches, decode, encode
    from tfrview.core.procs.requests import CompareRequest, CompareSelectRequest
    from tfrview.core.procs.requests import decode as decode_request
    from tfrview.core.procs.requests import encode as encode_request

    paths = tuple(str(data / f"{s}-00000-of-00001.tfrecord") for s in ("train", "validation"))
    got: list = []
    monkeypatch.setattr(jobs, "_emit", lambda msg: got.append(decode(encode(msg))))  # over the wire
    req = CompareRequest(paths=paths, counts=(N, N), a="train", b="validation", jobs=1)
    jobs.JOBS[type(req)](decode_request(encode_request(req)))
    (msg,) = got
    assert isinstance(msg, Compared) and msg.selectable
    assert {f.key for f in msg.comparison.drifted if not f.derived} == {
        "only_train",
        "id",
        "colour",
        "score",
        "weight",
    }
    got.clear()
    pick = CompareSelectRequest(
        paths=paths, counts=(N, N), a="train", b="validation", jobs=1, side="b", key="colour", category="blue"
    )
    jobs.JOBS[type(pick)](decode_request(encode_request(pick)))
    (m,) = got
    assert isinstance(m, Matches) and m.matches == [N + i for i in range(0, N, 5)]
    with pytest.raises(jobs.TfrviewError, match="splits found: train, validation"):
        jobs.job_compare(CompareRequest(paths=paths, a="train", b="test", jobs=1))
