"""Issue 24 from bytes to answers: records holding the OD API's detection keys beside their ground
truth, analysed; the dataset step's evaluation table, its likely label errors at their records,
and the fact columns tp/fp/fn/max_fp_score in the filter."""

from __future__ import annotations

import pytest

from tests.core.test_payload import make_example
from tfrview.core.analysis import analyze, stepcolumns
from tfrview.core.output.writer import write_records
from tfrview.core.problems import ProblemKind
from tfrview.core.procs import jobs
from tfrview.core.procs.requests import FilterRequest

NAMES = {1: b"cat", 2: b"dog", 3: b"bird"}
GOOD = [(0.1, 0.1, 0.3, 0.3, 1), (0.6, 0.6, 0.9, 0.9, 2)]


def record(gt, det) -> bytes:
    """An OD API record of a 100 x 100 image: ground truth (x0, y0, x1, y1, id) and detections
    (x0, y0, x1, y1, id, score) as infer_detections.py writes them."""
    d = {
        "image/width": [100],
        "image/height": [100],
        "image/source_id": [b"img"],
        "image/object/bbox/xmin": [float(b[0]) for b in gt],
        "image/object/bbox/ymin": [float(b[1]) for b in gt],
        "image/object/bbox/xmax": [float(b[2]) for b in gt],
        "image/object/bbox/ymax": [float(b[3]) for b in gt],
        "image/object/class/label": [b[4] for b in gt],
        "image/object/class/text": [NAMES[b[4]] for b in gt],
        "image/detection/bbox/xmin": [float(b[0]) for b in det],
        "image/detection/bbox/ymin": [float(b[1]) for b in det],
        "image/detection/bbox/xmax": [float(b[2]) for b in det],
        "image/detection/bbox/ymax": [float(b[3]) for b in det],
        "image/detection/label": [b[4] for b in det],
        "image/detection/score": [float(b[5]) for b in det],
    }
    return make_example(**{k: v for k, v in d.items() if v})


def planted() -> list[bytes]:
    """Record 0 and 4: clean; 1: a confident bird on no box (missing label); 2: the dog box
    predicted a cat (wrong class); 3: a cat box no prediction comes near (spurious)."""
    clean = [(*b, 0.9) for b in GOOD]
    return [
        record(GOOD, clean),
        record(GOOD, [*clean, (0.4, 0.0, 0.55, 0.2, 3, 0.95)]),
        record(GOOD, [clean[0], (0.6, 0.6, 0.9, 0.9, 1, 0.92)]),
        record([*GOOD, (0.0, 0.7, 0.2, 0.95, 1)], clean),
        record(GOOD, clean),
    ]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def dataset(tmp_path_factory) -> list[str]:
    path = tmp_path_factory.mktemp("data") / "detections.tfrecord"
    write_records(path, planted())
    return [str(path)]


def test_likely_label_errors_at_their_records(dataset):
    a = analyze(dataset, deep=True, jobs=1)
    kinds = {
        (p.kind, p.record)
        for p in a.problems(0)
        if p.kind
        in (
            ProblemKind.POSSIBLE_MISSING_LABEL,
            ProblemKind.POSSIBLE_WRONG_CLASS,
            ProblemKind.POSSIBLE_SPURIOUS_LABEL,
        )
    }
    assert kinds == {
        (ProblemKind.POSSIBLE_MISSING_LABEL, 1),
        (ProblemKind.POSSIBLE_WRONG_CLASS, 2),
        (ProblemKind.POSSIBLE_SPURIOUS_LABEL, 3),
    }
    words = {p.kind: p.message for p in a.problems(0)}
    assert "box 1 is dog, predicted cat at score 0.92" in words[ProblemKind.POSSIBLE_WRONG_CLASS]
    assert (
        "prediction 2: id 3 at score 0.95" in words[ProblemKind.POSSIBLE_MISSING_LABEL]
    )  # no box is a bird: no name without a label map
    assert "box 2 (cat)" in words[ProblemKind.POSSIBLE_SPURIOUS_LABEL]
    table = a.qa.tables["evaluation"]
    assert table["images"] == 5 and table["boxes"] == 11 and table["predictions"] == 11
    by = {row["class"]: row for row in table["classes"]}
    assert (by["cat"]["tp"], by["cat"]["fp"], by["cat"]["fn"]) == (5, 1, 1)
    assert (by["dog"]["tp"], by["dog"]["fn"]) == (4, 1) and by["id 3"]["fp"] == 1
    labels = table["confusion"]["labels"]
    assert labels[-1] == "background"
    m = table["confusion"]["matrix"]
    assert m[labels.index("dog")][labels.index("cat")] == 1  # the dog called a cat
    assert m[labels.index("background")][labels.index("id 3")] == 1
    facts = a.facts()
    assert facts["fn"].to_pylist() == [0, 0, 1, 1, 0] and facts["fp"].to_pylist() == [0, 1, 1, 0, 0]
    assert facts["max_fp_score"].to_pylist()[:3] == [None, pytest.approx(0.95), pytest.approx(0.92)]


def test_the_filter_reads_the_evaluation_columns(dataset, monkeypatch):
    analyze(dataset, deep=True, jobs=1)
    got: list[int] = []
    monkeypatch.setattr(jobs, "_emit", lambda msg: got.extend(getattr(msg, "matches", ())))
    jobs.job_filter(FilterRequest(paths=tuple(dataset), expr="fn > 0", counts=(5,)))
    assert got == [2, 3]
    got.clear()
    jobs.job_filter(FilterRequest(paths=tuple(dataset), expr="max_fp_score > 0.93"))
    assert got == [1]
    key = stepcolumns.key(dataset, [""], [], None, ())
    assert stepcolumns.load(key[0])["tp"][0].tolist() == [2, 2, 1, 2, 2]
