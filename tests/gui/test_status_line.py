"""The status bar's line as a pure function (issue 18, 8.6): what it says, from plain facts."""

from __future__ import annotations

from collections import Counter

from tfrview.gui.scan_phase import ScanPhase
from tfrview.gui.status_line import StatusFacts, problems_text, status_text


def test_the_status_line_says_each_fact_once_in_its_order():
    f = StatusFacts(
        records=2_000_000,
        size_bytes=3_000_000_000,
        compressions=frozenset({"gzip"}),
        payload_kinds="Example payloads (+2 other kinds)",
        files=128,
        missing=2,
        phase=ScanPhase.VERIFY,
        done_bytes=1_000_000_000,
        total_bytes=3_000_000_000,
        checks="QA checks 40%",
        labels="map.pbtxt",
        page=(0, 49_999_999),
    )
    text = status_text(f)
    assert text.startswith(
        "2,000,000 records in 128 files  ·  3.0 GB  ·  GZIP compressed  ·  Example payloads"
    )
    assert "⚠ 2 shards missing" in text and "verifying 1.0 GB of 3.0 GB" in text
    assert text.endswith(
        "QA checks 40%  ·  labels: map.pbtxt  ·  showing records 0–49,999,999 (Ctrl+G for others)"
    )
    assert "all CRCs checked" not in text


def test_the_status_line_of_a_checked_and_a_stopped_dataset():
    done = status_text(StatusFacts(39, 270_300, frozenset({"none"}), phase=ScanPhase.DONE, checked_at=1.7e9))
    assert done.startswith("39 records  ·  ") and "uncompressed" in done
    assert "all CRCs checked 20" in done and done.endswith("(unchanged since)")
    stopped = status_text(
        StatusFacts(8000, 1, frozenset({"none"}), phase=ScanPhase.CANCELLED, note="cut short")
    )
    assert "⚠ cut short" in stopped and "only partly read (Resume goes on)" in stopped
    assert "Esc stops it" not in stopped and "all CRCs checked" not in stopped


def test_the_problems_count_names_its_two_commonest_kinds():
    assert problems_text(Counter()) == ""
    text = problems_text(Counter({"unexpected_payload": 4, "truncated": 1, "unreadable_bytes": 2, "a<b": 1}))
    assert "⚠ 8 problems</span>: unexpected_payload 4 · unreadable_bytes 2 · …" in text


def test_a_stored_analysis_of_the_same_date_is_said_once():
    import time

    at = 1.7e9
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
    f = StatusFacts(
        39,
        1,
        frozenset({"none"}),
        phase=ScanPhase.DONE,
        checked_at=at,
        checks="QA checks done",
        analysis_note=f"checked {when}",
    )
    assert status_text(f).count(when) == 1 and "QA checks done" in status_text(f)
    other = StatusFacts(
        39, 1, frozenset({"none"}), phase=ScanPhase.DONE, checks="QA checks done", analysis_note="partial"
    )
    assert status_text(other).endswith("QA checks done (partial)")


def test_the_tooltips_list_every_kind_the_unreadable_files_and_the_missing_shards():
    from tfrview.gui.status_line import missing_tip, problems_tip

    tip = problems_tip(Counter({"truncated": 1, "bad_data_crc": 3}), [f"f{i}: gone" for i in range(25)])
    lines = tip.split("\n\n")[0].splitlines()
    assert lines[:2] == ["bad_data_crc: 3", "truncated: 1"] and lines[2:] == [
        f"f{i}: gone" for i in range(20)
    ]
    assert tip.endswith("\n\nF8 / Shift+F8 step through them")
    shards = [f"train-{i:05d}-of-00100" for i in range(60)]
    assert missing_tip(shards).splitlines() == ["Missing shards:", *shards[:50]]


def test_an_arrayrecord_dataset_says_its_chunk_hashes_were_checked():
    """Its frames' CRCs are ours (computed from the decoded bytes): what was checked is its hashes."""
    ar = status_text(StatusFacts(130_027, 10**9, frozenset({"arrayrecord"}), phase=ScanPhase.DONE))
    assert "ArrayRecord" in ar and "all chunk hashes checked" in ar and "CRCs" not in ar
    both = status_text(StatusFacts(10, 10**6, frozenset({"arrayrecord", "none"}), phase=ScanPhase.DONE))
    assert "all CRCs and chunk hashes checked" in both
