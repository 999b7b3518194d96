"""TFDV statistics, schema inference and validation from a stored analysis (issue 23 part 4).

    python bench/bench_tfdv.py [--records 200000] [--shards 4]

Writes a TFX-style root (Split-train/, Split-eval/) of plain Examples (an int label, two floats, a
colour of 5 words, an id string unique a record, a list of 1-20 ints), analyses it once (stored,
as `verify --checks` or the window would), then times what the TFDV commands add on top: the
statistics (`export --stats`), schema inference and validation of every record, each the best of
3 runs. The issue sets no target for these; the figure to watch is their time beside the pass's
(they must not be a second pass over the data).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.timing import best


def make(root: Path, records: int, shards: int) -> list[str]:
    from tfrview.core.output.writer import write_records
    from tfrview.core.records.proto import example_pb2

    colours = [b"red", b"green", b"blue", b"cyan", b"grey"]
    paths = []
    for split, share in (("train", 0.8), ("eval", 0.2)):
        d = root / f"Split-{split}"
        d.mkdir(parents=True)
        n = int(records * share) // shards
        for s in range(shards):
            recs = []
            for i in range(n):
                e = example_pb2.Example()
                f = e.features.feature
                f["label"].int64_list.value.append(i % 10)
                f["x"].float_list.value.append(i * 0.001)
                f["y"].float_list.value.append((i % 97) / 97)
                f["colour"].bytes_list.value.append(colours[i % 5])
                f["id"].bytes_list.value.append(b"%s-%d-%d" % (split.encode(), s, i))
                f["tokens"].int64_list.value.extend(range(1 + i % 20))
                recs.append(e.SerializeToString())
            p = d / f"data_tfrecord-{s:05d}-of-{shards:05d}.gz"
            write_records(p, recs, "gzip")
            paths.append(str(p))
    return paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--shards", type=int, default=4)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        from tfrview.core.analysis import analyze
        from tfrview.core.tfdv.anomalies import validate
        from tfrview.core.tfdv.columns import splits_of, whole
        from tfrview.core.tfdv.schema import infer
        from tfrview.core.tfdv.stats import from_splits, statistics

        paths = make(Path(tmp) / "root", a.records, a.shards)
        t0 = time.perf_counter()
        analyze(paths, deep=True)  # stored, as verify --checks or the window leaves it
        first = time.perf_counter() - t0
        stored = best(lambda: analyze(paths, deep=True), 3)
        analysis = analyze(paths, deep=True)
        stats = best(lambda: statistics(analysis), 3)
        gather = best(lambda: splits_of(analysis), 3)
        data = whole(splits_of(analysis))
        schema = infer(from_splits([data]))
        inferred = best(lambda: infer(from_splits([whole(splits_of(analysis))])), 3)
        checked = best(lambda: validate(schema, whole(splits_of(analysis))), 3)
        print(f"cores: {os.cpu_count()}  records: {data.examples:,} in {len(paths)} gzip shards")
        print(f"deep analysis, first time:         {first:7.2f} s")
        print(f"deep analysis, stored results:     {stored:7.2f} s")
        print(f"fact tables read and gathered:     {gather:7.2f} s")
        print(
            f"export --stats (statistics):       {stats:7.2f} s   target: none set; a small share of the first pass"
        )
        print(
            f"schema infer:                      {inferred:7.2f} s   target: none set; a small share of the first pass"
        )
        print(
            f"validate every record:             {checked:7.2f} s   target: none set; a small share of the first pass"
        )


if __name__ == "__main__":
    main()
