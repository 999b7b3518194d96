"""The dataset step's per-record columns (`dup_group`, `leak`) for the window's filter job: stored
beside the files' results by the analysis job, joined to the stored facts by the filter job, and
computed there from the stored results when they are not stored (issue 21, item 6)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import copies_split, json_extract
from tfrview.core.analysis import analyze, stepcolumns
from tfrview.core.procs import jobs
from tfrview.core.procs.requests import FilterRequest


def test_columns_pack_and_unpack_as_they_were():
    cols = {
        "dup_group": {0: np.array([1, 1, -1]), 2: np.array([-1, 7])},
        "leak": {0: np.array([False, True, False]), 2: np.array([True, False])},
    }
    text, arrays = stepcolumns.pack(cols, 3)
    assert json_extract(text, "$.counts") is not None  # standard JSON, as SQL over the store reads it
    back = stepcolumns.unpack(text, arrays)
    assert set(back) == {"dup_group", "leak"} and set(back["dup_group"]) == {0, 2}
    assert back["dup_group"][2].tolist() == [-1, 7] and back["leak"][0].tolist() == [False, True, False]
    assert stepcolumns.unpack(*stepcolumns.pack({}, 3)) == {}
    with pytest.raises(ValueError, match="shorter"):
        stepcolumns.unpack(text, arrays[:-1])
    with pytest.raises(ValueError, match="longer"):
        stepcolumns.unpack(text, arrays + b"\0")


def _filter(monkeypatch, request) -> list[int]:
    got: list[int] = []
    monkeypatch.setattr(jobs, "_emit", lambda msg: got.extend(getattr(msg, "matches", ())))
    jobs.job_filter(request)
    return got


def test_the_filter_job_reads_dup_group_and_leak(tmp_path, monkeypatch):
    paths = copies_split(tmp_path / "split")
    analyze(paths, deep=True, jobs=1)  # the CLI's pass: every file's result stored, not the columns
    req = FilterRequest(paths=tuple(paths), expr="leak", counts=(4, 3), complete=True, known_keys=("x",))
    key = stepcolumns.key(paths, ["train", "validation"], [], None, ())
    assert stepcolumns.load(key[0]) is None
    assert _filter(monkeypatch, req) == [2, 5]  # the step ran over the stored results here
    assert stepcolumns.load(key[0])["dup_group"][0].tolist() == [1, 1, 2, -1]  # and stored them

    def no_merge(*a, **k):
        raise AssertionError("the step ran again")

    monkeypatch.setattr(jobs, "merge", no_merge)
    assert _filter(monkeypatch, FilterRequest(paths=tuple(paths), expr="dup_group == 1")) == [0, 1]
    assert _filter(monkeypatch, FilterRequest(paths=tuple(paths), expr="dup_group and not leak")) == [0, 1]
    assert _filter(monkeypatch, FilterRequest(paths=tuple(paths), expr='leak and split == "val"')) == [5]


def test_the_analysis_job_stores_them_for_the_filter(tmp_path, monkeypatch):
    from tfrview.core.procs.requests import AnalyzeRequest

    paths = copies_split(tmp_path / "split")
    monkeypatch.setattr(jobs, "_emit", lambda msg: None)
    jobs.job_analyze(AnalyzeRequest(paths=tuple(paths), jobs=1))
    got = stepcolumns.load(stepcolumns.key(paths, ["train", "validation"], [], None, ())[0])
    assert got["leak"][0].tolist() == [False, False, True, False] and got["leak"][1].tolist() == [
        False,
        True,
        False,
    ]
    assert (
        stepcolumns.load(stepcolumns.key(paths, ["train", "train"], [], None, ())[0]) is None
    )  # other splits


def test_the_scores_job_saves_a_score_of_every_record(tmp_path, monkeypatch):
    """The gallery's Sort by reads an image score of every record from the stored facts."""
    from tfrview.core.procs.messages import Scores
    from tfrview.core.procs.requests import ScoresRequest

    paths = copies_split(tmp_path / "split")
    analyze(paths, deep=True, jobs=1)
    said: list = []
    monkeypatch.setattr(jobs, "_emit", said.append)
    out = tmp_path / "blur.npy"
    jobs.job_scores(ScoresRequest(paths=tuple(paths), counts=(4, 3), key="blur", out=str(out)))
    assert said == [Scores("blur", str(out), 7, 7)]
    got = np.load(out)
    want = analyze(paths, deep=True, jobs=1).facts().column("blur").to_numpy()
    assert got.tolist() == want.tolist() and got[0] == got[1] and got[0] != got[2]  # A's copy: A's score
    with pytest.raises(jobs.NoPlot, match="no 'sharpness' score"):
        jobs.job_scores(ScoresRequest(paths=tuple(paths), key="sharpness", out=str(out)))
