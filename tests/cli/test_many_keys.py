"""Keys without end (issue 25.4): Examples of thousands of distinct keys each. The schema, the
statistics, the signatures and the fact table track a bounded number of keys (limits.TRACKED_KEYS,
limits.FACT_KEYS); the rest are counted as other keys and said once. Each command runs as its own
process, so its peak memory is its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.helpers import PEAK_RSS_KB
from tfrview.core.analysis.facts import key_of
from tfrview.core.limits import FACT_KEYS, TRACKED_KEYS
from tfrview.core.output.writer import write_records
from tfrview.core.records.proto import example_pb2

RECORDS, KEYS = 5, 5_000  # 25,000 distinct keys: past both limits from the first record on
PEAK_MB = 400  # the issue measured 1.4-2.8 GB for 100 x 10,000


def _examples():
    for r in range(RECORDS):
        ex = example_pb2.Example()
        f = ex.features.feature
        for i in range(KEYS):
            if i % 2:
                f[f"k{r:02d}/{i:05d}"].bytes_list.value.append(b"v%d" % i)
            else:
                f[f"k{r:02d}/{i:05d}"].int64_list.value.append(i)
        yield ex.SerializeToString()


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    path = d / "keys.tfrecord"
    write_records(path, _examples())
    return path


_RUN = (
    "import resource, sys; from tfrview.cli import main; code = main(sys.argv[1:]); "
    f"print({PEAK_RSS_KB}, file=sys.stderr); sys.exit(code)"
)


def tfrview(cache: Path, *args: str) -> tuple[int, str, int]:
    """Exit code, stdout and peak RSS (MB) of one `tfrview` command in its own process."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "TFRVIEW_NO_SPARE": "1"}
    r = subprocess.run(
        [sys.executable, "-c", _RUN, *args, "-j", "1"], capture_output=True, text=True, env=env, timeout=300
    )
    peak = int(r.stderr.strip().splitlines()[-1]) // 1024
    return r.returncode, r.stdout, peak


def test_info_lists_the_tracked_keys_and_counts_the_others(many, tmp_path):
    code, out, peak = tfrview(tmp_path, "info", "--json", str(many))
    assert code == 0 and peak < PEAK_MB
    info = json.loads(out)["files"][0]
    assert len(info["features"]) == TRACKED_KEYS
    assert info["other_keys"] == RECORDS * KEYS - TRACKED_KEYS  # each key in one record
    assert "k00/00000" in info["features"] and "k01/00000" not in info["features"]  # the first seen
    code, text, _ = tfrview(tmp_path, "info", str(many))
    assert text.count("other keys") == 1 and f"{RECORDS * KEYS - TRACKED_KEYS:,} features" in text


def test_verify_says_the_limit_once(many, tmp_path):
    code, out, peak = tfrview(tmp_path, "verify", "--checks", "--json", str(many))
    assert code == 1 and peak < PEAK_MB
    problems = json.loads(out)["files"][0]["problems"]
    said = [p for p in problems if p["kind"] == "limit_exceeded"]
    assert len(said) == 1 and said[0]["record"] == 0, problems[:3]
    assert "limits.TRACKED_KEYS" in said[0]["message"] and "limits.FACT_KEYS" in said[0]["message"]
    assert f"{RECORDS * KEYS - TRACKED_KEYS:,} features of further keys" in said[0]["message"]
    assert [p["kind"] for p in problems] == ["limit_exceeded"]  # no key said missing for lack of tracking


def test_export_parquet_keeps_at_most_fact_keys(many, tmp_path):
    out = tmp_path / "keys.parquet"
    code, text, peak = tfrview(tmp_path, "export", "--parquet", str(out), str(many))
    assert code == 0 and peak < PEAK_MB
    t = pq.read_table(out)
    keys = {key_of(c)[0] for c in t.column_names if key_of(c) is not None}
    assert len(keys) == FACT_KEYS and t.num_rows == RECORDS
    assert f"{t.num_columns} columns" in text
    row0 = t.slice(0, 1).to_pylist()[0]
    assert row0["k00/00000"] == 0 and row0["k00/00001"] == "v1"  # the kept keys keep their values
    assert t.column("k00/00000").null_count == RECORDS - 1
