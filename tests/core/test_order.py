"""The record table's sort orders as array operations (issue 18): stable both ways, packed or not."""

from __future__ import annotations

import numpy as np

from tfrview.core.tfrecord.index import BAD_DATA_CRC, BAD_LENGTH_CRC, VERIFIED
from tfrview.core.tfrecord.order import sort_order, status_rank


def test_sort_order_keeps_ties_in_record_order_both_ways():
    k = np.array([3, 1, 3, 2, 1])
    assert sort_order(k).tolist() == [1, 4, 3, 0, 2]
    assert sort_order(k, descending=True).tolist() == [0, 2, 3, 1, 4]
    r = np.random.default_rng(0).integers(0, 50, 10_000)
    assert sort_order(r).tolist() == np.argsort(r, kind="stable").tolist()
    desc = sort_order(r, descending=True)
    assert np.all(np.diff(r[desc]) <= 0)
    ties = desc[r[desc] == 7]
    assert np.all(np.diff(ties) > 0)  # ties in record order
    assert sort_order(np.arange(5), descending=True).tolist() == [4, 3, 2, 1, 0]
    assert sort_order(np.array([], dtype=np.int64)).tolist() == []


def test_keys_too_wide_to_pack_sort_the_same():
    k = np.array([2**62, 0, 2**61, 0, 5], dtype=np.int64)
    assert sort_order(k).tolist() == [1, 3, 4, 2, 0]
    assert sort_order(k, descending=True).tolist() == [0, 2, 4, 1, 3]


def test_damage_ranks_after_good_records():
    st = np.array(
        [VERIFIED, 0, VERIFIED | BAD_DATA_CRC, BAD_LENGTH_CRC, BAD_DATA_CRC | BAD_LENGTH_CRC], np.uint8
    )
    assert status_rank(st).tolist() == [0, 1, 2, 3, 4]


def test_scores_sort_with_records_without_one_last_both_ways():
    from tfrview.core.tfrecord.order import score_key

    values = np.array([0.5, np.nan, 12.25, 0.25, 12.75, 0.5])
    numbers = np.arange(7)  # record 6 came after the scores were read: none
    up = sort_order(score_key(values, numbers), False)
    assert up.tolist() == [3, 0, 5, 2, 4, 1, 6]  # 12.25 before 12.75 (no int truncation); ties in order
    down = sort_order(score_key(values, numbers, True), True)
    assert down.tolist() == [4, 2, 0, 5, 3, 1, 6]
    assert sort_order(score_key(values, np.array([1, 3]))).tolist() == [1, 0]
    signed = np.array([-3.5, 2.0, -0.5, 0.0, -0.0])  # -0.0 and 0.0 tie
    assert sort_order(score_key(signed, np.arange(5))).tolist() == [0, 2, 3, 4, 1]
    assert sort_order(score_key(signed, np.arange(5), True), True).tolist() == [1, 3, 4, 2, 0]


def test_split_key_by_name_with_no_split_last():
    from tests.helpers import framed, index_bytes, payloads
    from tfrview.core.tfrecord.order import column_key

    def index(n: int):
        return index_bytes(framed(payloads(n))[0])[1]

    indexes = [index(2), index(1), index(2)]
    key = column_key(indexes, np.arange(5), "split", ["validation", "", "train"])
    assert key.tolist() == [1, 1, 2, 0, 0]
