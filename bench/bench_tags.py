"""The person's tags (issue 23, core/tags): tagging 1,000,000 records in one action, and the filter
`tag == "drop"` over the 2,048-shard split (2,000,000 small records), each figure beside its target.

    python bench/bench_tags.py [--dir /tmp/tfrview-bench-split] [--records 1000000] [--shards 2048]

The data are bench_split's (the same small Examples; made there if missing, reused if present):
`head-1000000.tfrecord` and the 2,000,000 records cut into 2,048 shards. Each store is a fresh
one in a temporary folder (never the person's).

One action of a million records, as the window's Edit › Tag › Filter Result does it: each record's
stored data CRC read (one 4-byte read a record), then the store's one transaction; then the file's
tags read back as arrays (what the window does when it shows the file) and the action undone (one
transaction). The filter: the tag join as the filter job does it (`jobs._tag_codes`: each shard's
key, its tags, their codes at its offsets; `rows_by_word`), and `vfilter.match` of `tag == "drop"`
over a 2,000,000-row fact table with those rows (the rest of the job, reading the stored facts, is
the same with or without tags and is bench_analysis's).

Targets (this work's own; the issue names none for tags): a million records tagged in one action
within 15 s on this 2-core machine (the window asks before it starts such an action: ASK_ABOVE);
a file's million tags read back within 1 s; the filter's tag join over 2,048 shards within 2 s, its
match within 100 ms ("1,000,000 records in tens of ms", analysis.vfilter).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.bench_split import cut, head_file, make_whole


def line(name: str, seconds: float, target: float) -> None:
    ok = "OK" if seconds <= target else "MISSED"
    print(f"  {name:<58} {seconds:8.3f} s   target <= {target:g} s   {ok}", flush=True)


def frame(path: Path):
    from tfrview.core.tfrecord.report import index_and_verify
    from tfrview.core.tfrecord.source import open_source

    src = open_source(path)
    idx, _ = index_and_verify(src)
    return src, idx


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench-split")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--shards", type=int, default=2048)
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    print(f"tags: {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f} (1 min)")

    from tfrview.core.tags import Marks, TagStore, TagWord, file_key, rows_by_word, stored_crcs
    from tfrview.core.tags.history import TagHistory

    tmp = Path(tempfile.mkdtemp(prefix="tfrview-bench-tags-"))
    os.environ["XDG_DATA_HOME"] = str(tmp / "data")  # the filter job's store: never the person's

    # --- one action over a million records ------------------------------------------------------
    big = d / f"head-{a.records}.tfrecord"
    if not big.exists():
        whole = make_whole(d, max(a.records, 2_000_000))
        big = head_file(whole, d, a.records)
    src, idx = frame(big)
    n = idx.count
    offs = np.asarray(idx.offsets[:n], np.int64)
    lens = np.asarray(idx.lengths[:n], np.int64)
    print(f"{big.name}: {n:,} records, {big.stat().st_size / 1e6:.0f} MB")
    t0 = time.perf_counter()
    crcs = stored_crcs(src.read, offs, lens)
    t_crc = time.perf_counter() - t0
    key = file_key(big)
    with TagStore.open(tmp / "one.sqlite") as store:
        history = TagHistory(store)
        t0 = time.perf_counter()
        history.did(store.tag([Marks(key, str(big), offs, lens, crcs)], TagWord.DROP))
        t_tag = time.perf_counter() - t0
        line(f"read {n:,} stored CRCs (records close together read together)", t_crc, 5)
        line(f"tag {n:,} records drop: one transaction", t_tag, 10)
        line(f"  both: the window's one action over {n:,} records", t_crc + t_tag, 15)
        t0 = time.perf_counter()
        ft = store.file_tags(big, key, src.read)
        line(f"read a file's {len(ft):,} tags back as arrays", time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        history.undo()
        line(f"undo the action ({n:,} rows): one transaction", time.perf_counter() - t0, 10)
        assert len(store.tags_of(key)) == 0
    src.close()
    print(f"  store size after: {(tmp / 'one.sqlite').stat().st_size / 1e6:.0f} MB (undone: free pages kept)")

    # --- the filter tag == "drop" over the 2,048-shard split ------------------------------------
    folder = d / f"shards-{a.shards}-of-whole-2000000"
    if not folder.is_dir() or len(list(folder.iterdir())) != a.shards:
        folder = cut(make_whole(d, 2_000_000), d, a.shards)
    paths = sorted(str(p) for p in folder.iterdir())
    offsets = []
    with TagStore.open() as store:  # the filter job opens the default store: the temporary one
        marks = []
        rng = np.random.default_rng(0)
        for p in paths:
            s, i = frame(Path(p))
            o = np.asarray(i.offsets[: i.count], np.int64)
            ln = np.asarray(i.lengths[: i.count], np.int64)
            offsets.append(o)
            pick = np.sort(rng.choice(len(o), max(1, len(o) // 10), replace=False))
            marks.append(Marks(file_key(p), p, o[pick], ln[pick], stored_crcs(s.read, o[pick], ln[pick])))
            s.close()
        t0 = time.perf_counter()
        store.tag(marks, TagWord.DROP)
        tagged = sum(len(m.offsets) for m in marks)
        print(
            f"{folder.name}: {sum(len(o) for o in offsets):,} records; {tagged:,} tagged drop in one action"
        )
        line(
            f"  (tag {tagged:,} records over {len(paths):,} shards: one transaction)",
            time.perf_counter() - t0,
            10,
        )

    from tfrview.core.procs import jobs

    jobs._emit = lambda msg: None  # the job's notes go nowhere here
    t0 = time.perf_counter()
    codes = jobs._tag_codes(paths, offsets)
    by_word = rows_by_word(codes)
    line(f"filter's tag join over {len(paths):,} shards (keys, tags, codes)", time.perf_counter() - t0, 2)
    shared = len(by_word["drop"]) - tagged  # byte-identical shards share their tags (one content)
    print(f"    ({len(by_word['drop']):,} rows drop: {shared:,} more in shards of the same content)")

    import pyarrow as pa

    from tfrview.core.analysis.filterexpr import parse
    from tfrview.core.analysis.vfilter import match

    total = len(codes)
    table = pa.table({"n": np.arange(total, dtype=np.int64), "size": np.full(total, 40, np.int64)})
    node = parse('tag == "drop"')
    t0 = time.perf_counter()
    hits, _ = match(table, node, {}, by_word)
    line(f'vfilter.match tag == "drop" over {total:,} rows', time.perf_counter() - t0, 0.1)
    assert len(hits) == len(by_word["drop"])
    t0 = time.perf_counter()
    hits, _ = match(table, parse("not tag"), {}, by_word)
    line(f"vfilter.match not tag over {total:,} rows", time.perf_counter() - t0, 0.1)
    assert len(hits) == total - len(by_word["drop"])


if __name__ == "__main__":
    main()
