"""Label rules across the dataset (issue 21, item 4): a planted detection dataset with each case
planted once among clean records; each is found at its record and no clean record is flagged; the
thresholds (`--rule` words) change the answer; a class only in train is missing in validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.core.test_payload import make_example
from tfrview.core.analysis.merge import merge
from tfrview.core.analysis.rules import DatasetRules
from tfrview.core.analysis.shard import analyze_shard, plan
from tfrview.core.output.writer import write_records
from tfrview.core.problems import ProblemKind

LABEL_KINDS = {
    ProblemKind.CLASS_IMBALANCE,
    ProblemKind.BOX_SIZE_OUTLIER,
    ProblemKind.DUPLICATE_BOX,
    ProblemKind.OVERLAPPING_CLASSES,
    ProblemKind.TINY_BOX,
    ProblemKind.CLASS_MISSING_IN_SPLIT,
}
CLASSES = {b"cat": 1, b"dog": 2, b"bird": 3, b"zebra": 4}
CELLS = ((0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (0.5, 0.5))  # a box a quarter of the image: no overlaps


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def where(tmp_path_factory):
    """A folder whose path names no split (pytest's `test_...` folders name the split `test`)."""
    return tmp_path_factory.mktemp("data")


def _record(boxes: list[tuple[float, float, float, float, bytes]], size: int = 100) -> bytes:
    """An Object Detection API Example of a `size` x `size` image (stated, no pixels) and its boxes."""
    return make_example(
        **{
            "image/width": [size],
            "image/height": [size],
            "image/object/bbox/xmin": [float(b[0]) for b in boxes],
            "image/object/bbox/ymin": [float(b[1]) for b in boxes],
            "image/object/bbox/xmax": [float(b[2]) for b in boxes],
            "image/object/bbox/ymax": [float(b[3]) for b in boxes],
            "image/object/class/text": [b[4] for b in boxes],
            "image/object/class/label": [CLASSES[b[4]] for b in boxes],
        }
    )


def _clean(rng, classes=(b"cat", b"dog", b"bird")) -> list[tuple]:
    """A box of each class, each in its own quarter, 15-25 % of the image a side."""
    out = []
    for (cx, cy), name in zip(CELLS, classes, strict=False):
        w, h = rng.uniform(0.15, 0.25, 2)
        x, y = cx + rng.uniform(0.02, 0.2), cy + rng.uniform(0.02, 0.2)
        out.append((x, y, x + w, y + h, name))
    return out


PLANTED = {
    5: ProblemKind.TINY_BOX,
    10: ProblemKind.BOX_SIZE_OUTLIER,  # by its area
    11: ProblemKind.BOX_SIZE_OUTLIER,  # by its aspect
    15: ProblemKind.DUPLICATE_BOX,
    20: ProblemKind.OVERLAPPING_CLASSES,
    25: ProblemKind.CLASS_IMBALANCE,  # the one zebra
}


def _planted(n: int = 60) -> list[bytes]:
    rng = np.random.default_rng(7)
    out = []
    for i in range(n):
        boxes, size = _clean(rng), 100
        if i == 5:
            size = 16  # a normal box of 16-25 % of the image is 2.4-4 px: under 4 px at this size
            boxes[0] = (0.05, 0.05, 0.05 + 0.15, 0.05 + 0.2, b"cat")
        elif i == 10:
            boxes[3:] = [(0.02, 0.02, 0.97, 0.97, b"dog")]  # a dog the size of the image
            boxes = boxes[1:3] + boxes[3:]  # without the cat it would overlap
        elif i == 11:
            boxes[2] = (0.02, 0.6, 0.47, 0.645, b"bird")  # as large as a bird but 10 times wider than high
        elif i == 15:
            x0, y0, x1, y1, name = boxes[0]
            boxes.append((x0 + 0.001, y0, x1, y1 + 0.001, name))
        elif i == 20:
            x0, y0, x1, y1, _ = boxes[1]
            boxes.append((x0, y0 + 0.002, x1, y1, b"cat"))
        elif i == 25:
            boxes.append((0.6, 0.6, 0.8, 0.8, b"zebra"))
        out.append(_record(boxes, size))
    return out


def _results(paths):
    return [
        analyze_shard(t) for t in plan([str(p) for p in paths], True, read_cache=False, write_cache=False)
    ]


def _found(analysis) -> dict[int, set]:
    """file -> {(record, kind)} of the label rules' findings."""
    out: dict[int, set] = {}
    for fi in range(len(analysis.shards)):
        for p in analysis.problems(fi):
            if p.kind in LABEL_KINDS:
                out.setdefault(fi, set()).add((p.record, p.kind))
    return out


@pytest.fixture
def planted(where):
    path = where / "planted.tfrecord"
    write_records(path, _planted())
    return path


def test_each_planted_case_is_found_at_its_record_and_no_clean_record_is_flagged(planted):
    a = merge(_results([planted]))
    assert _found(a) == {0: {(n, k) for n, k in PLANTED.items()}}
    by_kind = {p.kind: p for p in a.problems(0) if p.kind in LABEL_KINDS}
    assert by_kind[ProblemKind.CLASS_IMBALANCE].message == (
        "class 'zebra' has 1 box, under 1/50 (imbalance_ratio) of the 61 of the largest class, 'cat'"
    )
    assert by_kind[ProblemKind.TINY_BOX].message.startswith(
        "3 box(es) under 4 px wide or high (tiny_pixels), e.g. box 0 (cat): 2.4×3.2 px in a 16×16 image"
    )
    assert "boxes 0 and 3 (cat), IoU 0.99" in by_kind[ProblemKind.DUPLICATE_BOX].message
    assert "box 1 (dog) and box 3 (cat), IoU 0.98" in by_kind[ProblemKind.OVERLAPPING_CLASSES].message
    outliers = [p.message for p in a.problems(0) if p.kind == ProblemKind.BOX_SIZE_OUTLIER]
    assert "box 2 (dog): area 90.25% of the image, the class's median 4.14%" in outliers[0]
    assert "box 2 (bird): aspect 10, the class's median 1.03" in outliers[1]
    table = a.qa.tables["classes"]
    assert table["unit"] == "boxes" and table["splits"] == ["all"]
    assert [(r["class"], r["total"]) for r in table["rows"]] == [
        ("cat", 61),
        ("dog", 61),
        ("bird", 60),
        ("zebra", 1),
    ]
    assert [n for n in a.qa.notes if "box" in n or "label" in n] == []
    assert json.loads(json.dumps(a.qa.to_json()))["tables"]["classes"] == table  # plain data


def test_rule_words_change_the_answer(planted):
    results = _results([planted])
    rules = DatasetRules().with_words(
        [
            "tiny_pixels=2",
            "imbalance_ratio=100",
            "duplicate_iou=0.999",
            "overlap_iou=0.99",
            "outlier_sigma=50",
        ]
    )
    assert _found(merge(results, rules=rules)) == {}
    stricter = DatasetRules().with_words(["outlier_min_boxes=100"])  # no class has 100 boxes
    kinds = {k for _, k in _found(merge(results, rules=stricter))[0]}
    assert ProblemKind.BOX_SIZE_OUTLIER not in kinds and ProblemKind.TINY_BOX in kinds


def test_a_class_only_in_train_is_missing_in_validation(where):
    rng = np.random.default_rng(3)
    train = [_record(_clean(rng, (b"cat", b"dog", b"zebra"))) for _ in range(20)]
    val = [_record(_clean(rng, (b"cat", b"dog"))) for _ in range(10)]
    paths = [where / "train-00000-of-00001.tfrecord", where / "validation-00000-of-00001.tfrecord"]
    write_records(paths[0], train)
    write_records(paths[1], val)
    a = merge(_results(paths))
    assert a.splits == ["train", "validation"]
    (miss,) = [p for p in a.problems(0) if p.kind == ProblemKind.CLASS_MISSING_IN_SPLIT]
    assert miss.record == 0 and miss.feature == "image/object/class/text"
    assert miss.message == "class 'zebra' has 20 boxes in split train and none in split validation"
    assert _found(a) == {0: {(0, ProblemKind.CLASS_MISSING_IN_SPLIT)}}
    table = a.qa.tables["classes"]
    assert table["splits"] == ["train", "validation"]
    assert {r["class"]: r["counts"] for r in table["rows"]} == {
        "cat": {"train": 20, "validation": 10},
        "dog": {"train": 20, "validation": 10},
        "zebra": {"train": 20, "validation": 0},
    }


def test_without_boxes_the_record_labels_are_judged_and_said_once(where):
    path = where / "labels.tfrecord"
    write_records(path, [make_example(label=[i % 2]) for i in range(120)] + [make_example(label=[7])])
    a = merge(_results([path]))
    (rare,) = [p for p in a.problems(0) if p.kind in LABEL_KINDS]
    assert (rare.kind, rare.record, rare.feature) == (ProblemKind.CLASS_IMBALANCE, 120, "label")
    assert (
        rare.message
        == "class 'id 7' has 1 record, under 1/50 (imbalance_ratio) of the 60 of the largest class, 'id 0'"
    )
    assert [n for n in a.qa.notes if "box" in n] == [
        "no boxes: the box rules (tiny_box, box_size_outlier, duplicate_box, overlapping_classes) were not run; "
        "class balance is judged by the record labels"
    ]
    assert a.qa.tables["classes"]["unit"] == "records"


def test_boxes_past_the_fact_tables_limit_are_said_once(where):
    from tfrview.core.limits import FACT_VALUES

    rng = np.random.default_rng(5)
    many = [(x, y, x + 0.01, y + 0.01, b"cat") for x, y in rng.uniform(0, 0.9, (FACT_VALUES + 10, 2))]
    path = where / "many.tfrecord"
    write_records(path, [_record(_clean(rng)) for _ in range(3)] + [_record(many, 4000)])
    a = merge(_results([path]))
    assert [n for n in a.qa.notes if "box" in n] == [
        f"10 boxes of 1 records past the fact table's {FACT_VALUES:,} values a list were not judged by the "
        "label rules (limits.FACT_VALUES)"
    ]


def test_verify_checks_json_names_the_label_kinds(planted, capsys):
    from tfrview.cli import main

    code = main(["verify", "--checks", "--json", str(planted)])
    out = json.loads(capsys.readouterr().out)
    kinds = {
        (p["record"], p["kind"]) for f in out["files"] for p in f["problems"] if p["kind"] in LABEL_KINDS
    }
    assert code == 1 and kinds == {(n, str(k)) for n, k in PLANTED.items()}


def test_pixel_boxes_are_judged_at_their_own_size(where):
    """COCO's [x, y, width, height] in pixels: a box 2 px high is tiny whatever the image's size."""
    rng = np.random.default_rng(11)
    recs = []
    for i in range(30):
        boxes = [
            [x, y, w, h]
            for (x, y), (w, h) in zip(rng.uniform(0, 300, (2, 2)), rng.uniform(40, 60, (2, 2)), strict=True)
        ]
        boxes[1][0] += 320  # apart from box 0
        if i == 9:
            boxes[1][3] = 2.0
        recs.append(
            make_example(
                **{
                    "image/width": [640],
                    "image/height": [480],
                    "bbox": [float(v) for b in boxes for v in b],
                    "category_id": [1, 2],
                }
            )
        )
    path = where / "coco.tfrecord"
    write_records(path, recs)
    a = merge(_results([path]))
    assert _found(a) == {0: {(9, ProblemKind.TINY_BOX), (9, ProblemKind.BOX_SIZE_OUTLIER)}}
    (tiny,) = [p for p in a.problems(0) if p.kind == ProblemKind.TINY_BOX]
    assert "e.g. box 1 (id 2):" in tiny.message and "×2.0 px in a 640×480 image" in tiny.message
