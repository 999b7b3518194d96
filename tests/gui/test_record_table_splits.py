"""The record table of a split (issue 21): shard sets that share shard numbers (`train-00000` and
`validation-00000`) told apart in the file column, and a Split column, sortable, that follows the
person's choice of split."""

from __future__ import annotations

from tests.gui.driver import Driver
from tfrview.core.output.writer import write_records
from tfrview.demo import _example
from tfrview.gui.models.record_table import file_labels


def test_file_labels_tell_shard_sets_apart(tmp_path):
    from pathlib import Path

    one = [Path(f"train-{i:05d}-of-00002.tfrecord") for i in range(2)]
    assert file_labels(one) == ["00000", "00001"]
    two = [*one, Path("validation-00000-of-00001.tfrecord")]
    assert file_labels(two) == ["train-00000", "train-00001", "validation-00000"]
    tfds = [Path("mnist-train.tfrecord-00000-of-00001"), Path("mnist-test.tfrecord-00000-of-00001")]
    assert file_labels(tfds) == ["train-00000", "test-00000"]  # the words both share left out
    ar = [Path("x_train_.array_record-00000-of-00002"), Path("x_trainx_.array_record-00000-of-00001")]
    assert file_labels(ar) == ["train-00000", "trainx-00000"]  # cut at a separator, never inside a word
    assert file_labels([Path("tt-00000-of-00002"), Path("t-00000-of-00001")]) == ["tt-00000", "t-00000"]
    assert file_labels([Path("a.tfrecord"), Path("b.tfrecord")]) == ["a.tfrecord", "b.tfrecord"]


def test_the_table_shows_and_sorts_each_records_split(qtbot, open_window, tmp_path):
    for split, shards in (("train", 2), ("validation", 1)):
        for i in range(shards):
            recs = [_example(label=k).SerializeToString() for k in range(2)]
            write_records(tmp_path / f"{split}-{i:05d}-of-{shards:05d}.tfrecord", recs)
    w = open_window([tmp_path])
    d = Driver(qtbot, w)
    assert w.model.columns[:3] == ["#", "file", "split"]
    files = d.table_column("file")
    assert sorted(set(files)) == ["train-00000", "train-00001", "validation-00000"]
    by_file = dict(zip(files, d.table_column("split"), strict=True))
    assert by_file == {"train-00000": "train", "train-00001": "train", "validation-00000": "validation"}
    d.sort_by("split", descending=True)
    assert d.table_column("split") == ["validation"] * 2 + ["train"] * 4
    fi = [f.path.name for f in w.ds.files].index("train-00001-of-00002.tfrecord")
    w.session.set_split([fi], "test")  # the person puts a shard in another split
    assert d.table_column("split") == ["validation"] * 2 + ["train"] * 2 + ["test"] * 2


def test_file_labels_of_one_set_cut_at_the_number_agree_with_matching_each_name():
    """One set's names (10,000 shards) are cut at the first name's number without a match a name;
    any names that are not one set's take the matching path, to the same labels."""
    from pathlib import Path

    from tfrview.core.tfrecord.groups import SHARD_NAME
    from tfrview.gui.models.record_table import _one_set_numbers, file_labels

    one = [f"train-{i:05d}-of-00016.tfrecord" for i in (3, 0, 15)]
    assert file_labels([Path("/d") / n for n in one]) == ["00003", "00000", "00015"]
    for names in (
        [f"train-{i:05d}-of-00016" for i in range(2)] + [f"train-{i:05d}-of-00017" for i in range(2)],
        [f"a1-{i:05d}-of-00016" for i in range(2)] + [f"a2-{i:05d}-of-00016" for i in range(2)],
        ["train-00000-of-00002.tfrecord", "train-0000a-of-00002.tfrecord"],
        ["9-1-of-2", "9-2-of-2"],
        ["a.tfrecord", "b.tfrecord"],
    ):
        cut = _one_set_numbers(names)
        assert cut is None or cut == [SHARD_NAME.match(n)["num"] for n in names]
    assert file_labels([Path("/d") / n for n in ["9-1-of-2", "9-2-of-2"]]) == ["1", "2"]
