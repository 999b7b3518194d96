"""Smaller defects of issue 26.7: `index --check` compares in chunks and escapes its error text once;
label maps beside the data are searched within a bound, said when it bites; `--json` prints its one
object even when the command fails."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.fuzz import hostile as H
from tfrview.core.limits import LABEL_MAP_CANDIDATE_BYTES, LABEL_MAP_CANDIDATES
from tfrview.core.output.writer import write_records
from tfrview.core.records.labelmap import find_label_map
from tfrview.core.units import human_bytes


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "tfrview", *args], capture_output=True, text=True, timeout=120
    )


def _data(path, n: int = 2):
    write_records(path, [b"record %d" % i for i in range(n)])
    return path


def test_index_check_of_a_long_index_of_short_lines_stays_small(tmp_path):
    data = _data(tmp_path / "d.tfrecord")
    small = tmp_path / "small.idx"
    small.write_text("0 24\n24 24\n")
    big = tmp_path / "big.idx"
    lines = 2_000_000  # 10 MB of 5-byte lines: ~140 MB more than two lines when read whole, ~50 MB in chunks
    with open(big, "wb") as fh:
        for _ in range(lines // 1_000_000):
            fh.write(b"0 16\n" * 1_000_000)
    code, out, err, base_mb, _ = H.run_cli(["index", str(data), "--check", str(small)])
    assert code == 0 and "matches" in out, err
    code, out, err, peak_mb, _ = H.run_cli(["index", str(data), "--check", str(big)])
    assert code == 1, err
    assert out.splitlines()[1:4] == [
        f"  index lists {lines} records, the file has 2",
        "  line 1: index says offset 0 size 16, record 0 is at 0 size 24",
        "  line 2: index says offset 0 size 16, record 1 is at 24 size 24",
    ]
    assert peak_mb - base_mb < 100, (
        f"index --check peaked at {peak_mb:.0f} MB, {base_mb:.0f} MB for two lines"
    )


def test_index_check_says_a_bad_line_escaped_once(tmp_path):
    data = _data(tmp_path / "d.tfrecord")
    idx = tmp_path / "d.idx"
    idx.write_bytes(b"0 24\n12 \x1b[31m\\n\n")
    r = _run("index", str(data), "--check", str(idx))
    assert r.returncode == 2
    assert r.stderr == f"tfrview: {idx}:2: expected 'offset size', got '12 \\x1b[31m\\\\n'\n"


def test_verify_json_with_a_bad_label_map_prints_an_error_object(tmp_path):
    data = _data(tmp_path / "d.tfrecord")
    bad = tmp_path / "bad.pbtxt"
    bad.write_text("item { id: 1 name: ")
    r = _run("verify", "--checks", "--json", "--label-map", str(bad), str(data))
    assert r.returncode == 2
    said = r.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(f"tfrview: {bad}: not a label map (")
    assert json.loads(r.stdout) == {"error": said[0].removeprefix("tfrview: ")}


def test_label_map_candidates_are_bounded_in_count_and_bytes(tmp_path):
    data = _data(tmp_path / "d.tfrecord")
    real = "item { id: 1 name: 'cat' }\n"
    for i in range(LABEL_MAP_CANDIDATES + 4):  # none of these is a label map; each is parsed to know
        (tmp_path / f"a{i:02d}.pbtxt").write_text("# not a label map\n")
    (tmp_path / "zz.pbtxt").write_text(real)  # the last by name: past the count
    notes: list[str] = []
    assert find_label_map([data], notes) is None
    assert notes == [
        f"label map: 5 of the {LABEL_MAP_CANDIDATES + 5} .pbtxt files beside the data were not tried (at most "
        f"{LABEL_MAP_CANDIDATES} files of {human_bytes(LABEL_MAP_CANDIDATE_BYTES)} together: limits.LABEL_MAP_CANDIDATES, LABEL_MAP_CANDIDATE_BYTES); "
        "give one with --label-map"
    ]
    r = _run("verify", "--checks", str(data))
    assert f"tfrview: {notes[0]}" in r.stderr.splitlines()

    other = tmp_path / "bytes"
    other.mkdir()
    data = _data(other / "d.tfrecord")
    share = LABEL_MAP_CANDIDATE_BYTES * 3 // 4
    for name in ("big_label_a.pbtxt", "big_label_b.pbtxt"):  # tried first ('label' in the name), not maps
        (other / name).write_bytes(b"# " + b"x" * (share - 3) + b"\n")
    (other / "label_map.pbtxt").write_text(real)  # the second big one would pass the bytes: skipped
    notes = []
    assert find_label_map([data], notes) == other / "label_map.pbtxt" and notes == []


def test_the_label_map_search_reuses_the_listing_of_an_unchanged_folder_only(tmp_path):
    """A folder the dataset listed is not listed again for its .pbtxt names (10,000 shards) while
    its mtime holds; a label map written beside the data after the listing is still found."""
    import os

    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.core.tfrecord.paths import label_names

    write_records(tmp_path / "a.tfrecord", [b"x"])
    (tmp_path / ".hidden.pbtxt").write_text('item { id: 1 name: "no" }\n')
    files = [f.path for f in Dataset.open([str(tmp_path)]).files]
    assert label_names(str(tmp_path)) == () and find_label_map(files) is None
    (tmp_path / "labels.pbtxt").write_text('item { id: 1 name: "cat" }\n')
    st = os.stat(tmp_path)
    os.utime(tmp_path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # (a coarse clock: moved on)
    assert label_names(str(tmp_path)) is None and find_label_map(files) == tmp_path / "labels.pbtxt"
    files = [f.path for f in Dataset.open([str(tmp_path)]).files]
    assert (
        label_names(str(tmp_path)) == ("labels.pbtxt",) and find_label_map(files) == tmp_path / "labels.pbtxt"
    )
