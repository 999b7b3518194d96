"""A TFDS prepared split of 2,048 tiny shards (DROID's `…-train.tfrecord-00000-of-02048` layout),
built here with tfrview's own writer: names, splits and counts from its dataset_info.json, before
any shard is read.

    python bench/bench_tfds.py [--shards 2048] [--runs 5]

Target (issue 22): <= 0.5 s for each of: the library's answer (`tfds.layout.find` with a cold
memo, then the shard paths that are there), what `tfrview info DIR` does before its first line
(naming the files, their splits, the datasets), and `tfrview info DIR` as a new process up to its
metadata lines (interpreter start-up included).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.timing import best
from tfrview.core.output.writer import write_records
from tfrview.core.tfds import layout
from tfrview.core.tfrecord.dataset import name_files, tfds_datasets
from tfrview.core.tfrecord.splits import split_of_files
from tfrview.core.tfrecord.tfdsfiles import present

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.5


def build(where: Path, shards: int) -> Path:
    root = where / "droid" / "1.0.0"
    root.mkdir(parents=True)
    lengths = [3 + i % 5 for i in range(shards)]
    for i, n in enumerate(lengths):
        write_records(root / f"droid-train.tfrecord-{i:05d}-of-{shards:05d}", [b"step" * 4] * n)
    info = {
        "name": "droid",
        "version": "1.0.0",
        "fileFormat": "tfrecord",
        "description": "bench",
        "splits": [
            {
                "filepathTemplate": "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}",
                "name": "train",
                "numBytes": str(16 * sum(lengths)),
                "shardLengths": [str(n) for n in lengths],
            }
        ],
    }
    (root / "dataset_info.json").write_text(json.dumps(info, indent=2))
    return root


def library(folder: Path) -> None:
    layout._memo.clear()
    ds = layout.find(folder)
    here, _ = present(ds)
    assert ds.info.num_examples and len(here) == len(ds.paths())


def before_first_line(folder: Path) -> None:
    layout._memo.clear()
    _, paths = name_files([str(folder)])
    split_of_files(paths)
    tfds_datasets([str(folder)])


def cli_first_lines(folder: Path) -> float:
    """Seconds from starting `tfrview info DIR` to its metadata's split lines on stdout."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TFRVIEW_NO_SPARE="1")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfrview", "info", str(folder), "-j", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        for line in proc.stdout:
            if line.startswith("    train "):  # the last metadata line of a one-split dataset
                return time.perf_counter() - t0
        raise SystemExit("tfrview info printed no split line")
    finally:
        proc.kill()
        proc.wait()


def start_up() -> float:
    """Seconds a new process takes to start and import the CLI (`tfrview --version`): the floor
    under the last figure, said beside it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TFRVIEW_NO_SPARE="1")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tfrview", "--version"], capture_output=True, env=env, check=False)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=2048)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        root = build(Path(tmp), a.shards)
        print(
            f"{a.shards:,} shards built in {time.perf_counter() - t0:.1f} s; {os.cpu_count()} cores; "
            f"load {os.getloadavg()[0]:.1f}; best of {a.runs}"
        )
        rows = [
            ("library: layout.find + shards present", best(lambda: library(root.parent), a.runs)),
            ("info's work before its first line", best(lambda: before_first_line(root.parent), a.runs)),
            (
                "`tfrview info DIR` to its split lines",
                min(cli_first_lines(root.parent) for _ in range(a.runs)),
            ),
        ]
        floor = min(start_up() for _ in range(a.runs))
        for what, s in rows:
            print(
                f"  {what:<44} {s * 1000:8.1f} ms   target <= {TARGET * 1000:.0f} ms   {'OK' if s <= TARGET else 'MISSED'}"
            )
        print(
            f"  (a new process's start-up alone, `tfrview --version`: {floor * 1000:.1f} ms, in the last figure)"
        )


if __name__ == "__main__":
    main()
