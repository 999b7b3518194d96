"""Issue 21 items 1 and 6: which split a path names (one rule for every command and the window),
and the dataset step's thresholds as words a person types (`--rule NAME=VALUE`)."""

from __future__ import annotations

import pytest

from tfrview.core.analysis.rules import DatasetRules, RuleError
from tfrview.core.tfrecord.splits import split_of_files, split_of_path


@pytest.mark.parametrize(
    ("path", "split"),
    [
        ("data/train-00003-of-00016.tfrecord", "train"),
        ("data/validation-00000-of-00004.tfrecord", "validation"),
        ("ds/val/part-0.tfrecord", "validation"),
        ("ds/dev/part-0.tfrecord", "validation"),
        ("mnist/3.0.1/mnist-test.tfrecord-00000-of-00001", "test"),
        ("pipeline/Split-train/data_tfrecord-00000-of-00001.gz", "train"),
        ("pipeline/Split-eval/data_tfrecord-00000-of-00001.gz", "validation"),
        ("coco/val2017.record", "validation"),
        ("gs://bucket/imagenet/train/shard-00001", "train"),
        ("val/train-0.tfrecord", "train"),  # the file's own name is the nearer word
        ("contest/latest.tfrecord", ""),  # words inside words are no split
        ("data/trainer_logs.tfrecord", ""),
        ("data/device-00001.tfrecord", ""),
        ("pets_examples.record", ""),
        ("/home/me/test_data/x.tfrecord", ""),  # a folder names a split by its whole name only
        ("/tmp/pytest-of-me/pytest-3/test_leak0/data.tfrecord", ""),
        ("/data/validation_images/x.tfrecord", ""),
    ],
)
def test_split_named_by_path(path, split):
    assert split_of_path(path) == split


def test_split_named_by_the_person_wins(tmp_path):
    (tmp_path / "a").mkdir()
    files = [tmp_path / "a" / "train-0.tfrecord", tmp_path / "b-0.tfrecord", tmp_path / "test-1.tfrecord"]
    got = split_of_files(files, [("holdout", [str(tmp_path / "a")]), ("extra", [str(files[1])])])
    assert got == ["holdout", "extra", "test"]


def test_rules_by_words():
    r = DatasetRules().with_words(["near_distance=6", "duplicate_iou = 0.9", "check_near=no"])
    assert r.duplicates.near_distance == 6
    assert r.labels.duplicate_iou == 0.9
    assert r.duplicates.check_near is False
    assert DatasetRules().duplicates.near_distance != 6  # frozen: the defaults stay
    assert r.names()["near_distance"] == 6


@pytest.mark.parametrize(
    ("word", "says"),
    [
        ("no_such_rule=3", "no rule is called 'no_such_rule'"),
        ("near_distance", "say a value, as in near_distance="),
        ("near_distance=far", "near_distance takes a whole number"),
        ("check_near=maybe", "check_near takes yes or no"),
    ],
)
def test_bad_rule_is_one_line(word, says):
    with pytest.raises(RuleError) as e:
        DatasetRules().with_words([word])
    assert says in str(e.value)
    assert "\n" not in str(e.value)
