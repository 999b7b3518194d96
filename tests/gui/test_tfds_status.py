"""Issue 22.1: the status line names a TFDS dataset and what its metadata says, first."""

from __future__ import annotations

from tfrview.gui.status_line import StatusFacts, status_text


def test_status_line_says_the_tfds_dataset_first():
    facts = StatusFacts(
        10, 558, frozenset({"none"}), files=4, tfds="mnist/3.0.1", tfds_splits=2, tfds_records=11
    )
    assert status_text(facts).startswith(
        "TFDS mnist/3.0.1 (11 records in 2 splits by its metadata)  ·  10 records"
    )
    unsaid = StatusFacts(10, 558, frozenset({"none"}), tfds="d/1.0.0", tfds_splits=1)
    assert status_text(unsaid).startswith("TFDS d/1.0.0 (1 split by its metadata)  ·  ")
    assert not status_text(StatusFacts(10, 558, frozenset({"none"}))).startswith("TFDS")


def test_status_line_says_the_newest_of_several_versions_was_opened():
    facts = StatusFacts(
        10, 558, frozenset({"none"}), tfds="mnist/3.0.1", tfds_splits=2, tfds_records=11, tfds_newest_of=2
    )
    assert status_text(facts).startswith("TFDS mnist/3.0.1 (newest of 2 versions; 11 records in 2 splits")
