"""Issue 24: the window's evaluation job (procs.jobs.job_evaluate, messages.Evaluated): from the
stored analysis, the message a person reads and the arrays at its path, by the dataset's records."""

from __future__ import annotations

import numpy as np
import pytest

from tests.core.test_evaluation_dataset import planted
from tfrview.core.analysis import analyze
from tfrview.core.output.writer import write_records
from tfrview.core.procs import jobs
from tfrview.core.procs.messages import Evaluated
from tfrview.core.procs.requests import EvaluateRequest
from tfrview.core.records.matching import BoxOutcome


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_the_evaluation_job_answers_from_the_stored_analysis(tmp_path, monkeypatch):
    first, second = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    write_records(first, planted()[:2])
    write_records(second, planted()[2:])
    paths = (str(first), str(second))
    got: list = []
    monkeypatch.setattr(jobs, "_emit", got.append)
    out = tmp_path / "e.npz"
    req = EvaluateRequest(paths=paths, out=str(out), score_grid=(0.5, 0.93))
    with pytest.raises(jobs.NotStored):
        jobs.job_evaluate(req)
    analyze(list(paths), deep=True, jobs=1)
    jobs.job_evaluate(req)
    (msg,) = got
    assert isinstance(msg, Evaluated) and msg.images == 5 and msg.likely_errors == 3
    assert msg.names[:2] == ["cat", "dog"] and msg.confusion[1][0] == 1  # the dog called a cat
    a = np.load(out)
    assert a["record_fn"].tolist() == [0, 0, 1, 1, 0] and a["record_fp"].tolist() == [0, 1, 1, 0, 0]
    assert a["record_max_fp_score"][1] == pytest.approx(0.95)
    assert sorted(zip(a["error_kind"].tolist(), a["error_n"].tolist(), strict=True)) == [
        (0, 1),
        (1, 2),
        (2, 3),
    ]
    wrong = a["gt_outcome"] == BoxOutcome.WRONG_CLASS
    assert a["gt_n"][wrong].tolist() == [2] and a["pred_n"][a["gt_partner"][wrong]].tolist() == [2]
    assert a["pr_precision"].shape == (3, 101) and a["grid_confusion"].shape == (2, 4, 4)
    assert a["grid_confusion"][1][1][0] == 0  # at score 0.93 the 0.92 cat on the dog is not counted


def test_filter_and_scores_by_a_joined_predictions_file(tmp_path, monkeypatch):
    """fn > 0 and the gallery's order by max_fp_score from a COCO results file the window loaded."""
    import json

    from tests.core.test_predictions_join import IDS, coco_record, results
    from tfrview.core.procs.requests import FilterRequest, ScoresRequest

    d = tmp_path / "coco.tfrecord"
    write_records(d, [coco_record(i) for i in IDS])
    r = tmp_path / "results.json"
    r.write_text(json.dumps(results()))
    analyze([str(d)], deep=True, jobs=1)
    got: list = []
    monkeypatch.setattr(jobs, "_emit", got.append)

    def matches(expr: str) -> list[int]:
        got.clear()
        jobs.job_filter(FilterRequest(paths=(str(d),), expr=expr, predictions=str(r)))
        return [n for msg in got for n in getattr(msg, "matches", ())]

    assert matches("fn > 0") == [0]  # image 397133: its bicycle called a person
    assert matches("fp > 0 and max_fp_score > 0.95") == [1]  # image 37777: a car on nothing at 0.97
    out = tmp_path / "s.npy"
    jobs.job_scores(ScoresRequest(paths=(str(d),), key="max_fp_score", out=str(out), predictions=str(r)))
    values = np.load(out)
    assert values[1] == pytest.approx(0.97) and values[0] == pytest.approx(0.9) and np.isnan(values[2])
