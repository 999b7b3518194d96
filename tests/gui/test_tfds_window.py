"""Issue 22.1 in the window: a TFDS folder opens as its dataset (title `name/version`, each shard in
its metadata's split), and its Problems panel shows split_missing_shard and shard_length_mismatch."""

from tests.gui.driver import Driver
from tests.tfdsdata import make_tfds


def test_tfds_folder_in_the_window(qtbot, open_window, tmp_path):
    root = make_tfds(tmp_path, held={"train": [3, 5, 2], "test": [2]})
    (root / "mnist-train.tfrecord-00002-of-00003").unlink()
    w = open_window([tmp_path / "mnist"])
    d = Driver(qtbot, w)
    d.wait_indexed()
    assert w.windowTitle() == "mnist/3.0.1 — tfrview"
    qtbot.waitUntil(lambda: len(d.problems_shown()) == 2, timeout=10000)
    assert sorted(d.problems_shown()) == [
        (
            "shard_length_mismatch",
            "train-00001",
            "5 intact records, where dataset_info.json says 4 for this shard of split train",
        ),
        (
            "split_missing_shard",
            "train-00002",
            "mnist-train.tfrecord-00002-of-00003 is not there: dataset_info.json names 3 shards for split train",
        ),
    ]
    assert w.status_label.text().startswith("TFDS mnist/3.0.1 (11 records in 2 splits by its metadata)")
