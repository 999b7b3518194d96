"""Issue 24, the window's evaluate job (procs/evaljob.py): it answers at the request's thresholds,
then at each further line of its stdin from what it prepared once; its .npz holds each record's
TP/FP/FN and most confident false positive and each box's matrix cell, in the window's numbers."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from tests.preddata import planted_file
from tfrview.core.analysis import analyze
from tfrview.core.procs import evaljob
from tfrview.core.procs.messages import Evaluated, decode, encode
from tfrview.core.procs.requests import EvaluateRequest


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_the_job_answers_each_question_from_what_it_prepared(tmp_path):
    a_path = planted_file(tmp_path / "a.tfrecord", 3)
    b_path = planted_file(tmp_path / "b.tfrecord", 2)
    paths = (str(a_path), str(b_path))
    a = analyze(list(paths), deep=True, jobs=1)
    req = EvaluateRequest(paths=paths, counts=(3, 2), out_dir=str(tmp_path), iou=0.5, score=0.5)
    said: list = []
    questions = io.StringIO(
        json.dumps({"iou": 0.5, "score": 0.2, "asked": 1})
        + "\n"
        + "not json\n"
        + json.dumps({"iou": 0.95, "score": 0.5, "asked": 2})
        + "\n"
    )
    evaljob.run(req, said.append, a, stdin=questions)
    assert [type(m) for m in said] == [Evaluated] * 3 and [m.asked for m in said] == [0, 1, 2]
    assert decode(encode(said[0])) == said[0]  # one JSON line on the wire
    first, low, strict = (m.summary for m in said)
    labels = first["confusion"]["labels"]
    assert labels == ["cat", "dog", "id 3", "background"]
    assert first["confusion"]["matrix"] == [[5, 0, 0, 0], [0, 0, 0, 5], [0, 0, 0, 0], [0, 0, 5, 0]]
    assert low["confusion"]["matrix"][3] == [0, 5, 5, 0]  # the faint dogs are false positives at 0.2
    assert strict["confusion"]["matrix"][0] == [0, 0, 0, 5]  # IoU 0.90 < 0.95: every cat missed
    with np.load(said[0].arrays) as z:
        assert z["records"].tolist() == [0, 1, 2, 3, 4]  # file b's records follow file a's
        assert z["tp"].tolist() == [1] * 5 and z["fn"].tolist() == [1] * 5 and z["fp"].tolist() == [1] * 5
        np.testing.assert_allclose(z["max_fp_score"], [0.6, 0.7, 0.8, 0.6, 0.7], rtol=1e-6)
        cells = set(
            zip(z["cell_image"].tolist(), z["cell_row"].tolist(), z["cell_col"].tolist(), strict=True)
        )
    k = 3  # the background's row and column
    assert {(i, 0, 0) for i in range(5)} | {(i, 1, k) for i in range(5)} | {
        (i, k, 2) for i in range(5)
    } == cells
    curves = said[0].curves
    assert [c["name"].split(" (")[0] for c in curves["curves"]] == ["cat", "dog"]
    assert curves["curves"][0]["y"][0] == 1.0


def test_no_predictions_is_one_line(tmp_path):
    from tests.preddata import planted_record
    from tfrview.core.output.writer import write_records

    path = tmp_path / "bare.tfrecord"
    write_records(path, [planted_record(0, detections=False)])
    a = analyze([str(path)], deep=True, jobs=1)
    req = EvaluateRequest(paths=(str(path),), out_dir=str(tmp_path))
    with pytest.raises(evaljob.NothingToEvaluate, match="no record holds predictions"):
        evaljob.run(req, print, a, stdin=io.StringIO(""))
    with pytest.raises(evaljob.NothingToEvaluate, match="the analysis is not stored yet"):
        evaljob.run(req, print, None, stdin=io.StringIO(""))
