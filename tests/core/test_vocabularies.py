"""Issue 20: each vocabulary is one type with one home, and its words are the wire words."""

from __future__ import annotations

import json

import numpy as np

from tfrview.core.problems import SEVERITIES, ProblemKind, Severity
from tfrview.core.records.kinds import FEATURE_KINDS, PayloadKind
from tfrview.core.tfrecord.framing import Compression
from tfrview.core.tfrecord.status import (
    INTACT,
    WORDS,
    RecordStatus,
    bytes_all,
    damaged_mask,
    damaged_of_bytes,
    intact_mask,
    intact_of_bytes,
    record_status,
    status_bytes,
    status_codes,
    status_counts,
)


def test_severity_words_ranks_and_what_a_person_reads():
    assert [str(s) for s in SEVERITIES] == ["error", "warning", "info"]  # worst first, as stored
    assert [(s.rank, s.plural, s.label) for s in Severity] == [
        (0, "errors", "Errors"),
        (1, "warnings", "Warnings"),
        (2, "notes", "Notes"),
    ]
    assert (
        ProblemKind.BAD_DATA_CRC.severity is Severity.ERROR and ProblemKind.MISSING_FEATURE.severity == "info"
    )
    assert ProblemKind.BOX_INVERTED.severity_rank == 1


def test_which_payload_kinds_carry_features_is_said_once():
    assert {k for k in PayloadKind if k.has_features} == FEATURE_KINDS
    assert "event" in FEATURE_KINDS and "protobuf" not in FEATURE_KINDS  # a plain word is found too
    assert not PayloadKind.PROTOBUF.has_features and not PayloadKind.BYTES.has_features
    assert json.dumps({"kind": PayloadKind.EVENT}) == '{"kind": "event"}'
    assert PayloadKind.EXAMPLE_LIST.title == "ExampleListWithContext"


def test_compression_words_and_wbits():
    assert [(str(c), c.wbits) for c in Compression] == [
        ("none", 0),
        ("gzip", 31),
        ("zlib", 15),
        ("arrayrecord", 0),
    ]
    assert Compression.of("gzip") is Compression.GZIP and Compression.of("bz2") is None


def test_a_record_status_is_one_word_alone_and_in_arrays():
    bits = np.arange(32, dtype=np.uint8)  # every combination of the index's status bits
    one = [str(record_status(int(b))) for b in bits]
    assert [str(WORDS[c]) for c in status_codes(bits)] == one
    assert set(one) == {"ok", "damaged", "header_damaged", "unverified"} == {str(w) for w in RecordStatus}
    wide = np.arange(512, dtype=np.int64)  # every status byte, and wider values masked to their bits
    words = [record_status(int(b) & 0xFF) for b in wide]
    assert intact_mask(wide).tolist() == [w in INTACT for w in words]
    assert damaged_mask(wide).tolist() == [w is RecordStatus.DAMAGED for w in words]
    assert status_counts(np.array([1, 3, 5, 0], dtype=np.uint8)) == {
        "ok": 1,
        "damaged": 1,
        "header_damaged": 1,
        "unverified": 1,
    }
    # the counts of records that all share one status (a clean file's): the same answers
    for b in wide.tolist():
        same = np.full(3, b, dtype=np.int64 if b > 255 else np.uint8)
        w = record_status(b & 0xFF)
        assert status_counts(same) == {str(v): 3 * (v is w) for v in WORDS}
        bins = status_bytes(same)
        assert np.array_equal(bins, bytes_all(b & 0xFF, 3))  # counted without a pass
        assert np.array_equal(bytes_all(b & 0xFF, [3, 0]), [bins, 0 * bins])  # one row a count
        assert intact_of_bytes(bins) == 3 * (w in INTACT) and damaged_of_bytes(bins) == 3 * (
            w is RecordStatus.DAMAGED
        )
    assert intact_of_bytes(status_bytes(wide)) == sum(w in INTACT for w in words)
    assert damaged_of_bytes(status_bytes(wide[:0])) == 0


def test_a_files_counts_from_its_status_bytes_are_the_per_record_rules():
    """`ShardResult.records`, `damaged`, `crc_cut` and verify's words, from one count of each status
    byte (status.status_bytes), agree with the rules record by record, every status byte included."""
    from tfrview.core.analysis.results import ShardResult
    from tfrview.core.tfrecord.index import CRC_CUT
    from tfrview.core.tfrecord.status import WORDS, damaged_mask, intact_mask, status_codes

    rng = np.random.default_rng(19)
    for status in [
        np.arange(256, dtype=np.uint8),
        *(rng.integers(0, 256, n).astype(np.uint8) for n in (0, 1, 40)),
    ]:
        r = ShardResult(0, "x", status=status)
        codes = status_codes(status)
        assert status_counts(status) == {str(w): int((codes == i).sum()) for i, w in enumerate(WORDS)}
        assert r.records == int(intact_mask(status).sum()) and r.damaged == int(damaged_mask(status).sum())
        assert r.crc_cut == int((status & CRC_CUT != 0).sum())
        r.status = status[:1]  # another array: counted again
        assert r.records == int(intact_mask(status[:1]).sum())


def test_a_record_read_through_a_schema_is_a_payload_kind():
    """Review defect 8: `dump --json` and the row worker said "message", a word outside the enum."""
    assert PayloadKind("message") is PayloadKind.MESSAGE
    assert (
        not PayloadKind.MESSAGE.has_features and PayloadKind.MESSAGE.title == "message by the loaded schema"
    )
    assert len({k.title for k in PayloadKind}) == len(PayloadKind)  # each kind its own name
