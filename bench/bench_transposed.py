"""Riegeli transposed chunks ('t'): one chunk of ~64 MiB of small tf.train.Examples, written by the
official array-record writer (group_size large enough for one chunk, `transpose:true`), decoded by
tfrview's own decoder (core/arrayrecord/transposed.py); beside it the same records as one simple
chunk ('r'), and the 1 GB simple-chunk file of bench_arrayrecord.py read whole where it is cached.

    python bench/bench_transposed.py [--dir /tmp/tfrview-bench] [--mib 64] [--runs 3] [--chunks 1]

Targets (issue 22, task brief), printed beside the figures with the core count: a 64 MiB chunk of
~675,000 small Examples decoded in <= 1 s of CPU on one core; peak memory (tracemalloc) <= 3x the
chunk's decoded size; a file of such chunks read whole at a rate within 2x of the simple-chunk
file of the same records (--chunks 16 writes ~1 GB files: slow to make, cached). Files are cached
under --dir; skipped with a reason where the wheel cannot be imported.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from timing import best  # noqa: E402


def _examples(mib: float) -> list[bytes]:
    from tfrview.core.records.proto import example_pb2

    rnd = random.Random(0)
    out = []
    total = 0
    while total < mib * (1 << 20):
        ex = example_pb2.Example()
        f = ex.features.feature
        f["label"].int64_list.value.append(rnd.randrange(1000))
        f["id"].bytes_list.value.append(f"item-{len(out):08d}".encode())
        f["score"].float_list.value.extend([rnd.random() for _ in range(rnd.randrange(1, 5))])
        f["tokens"].int64_list.value.extend([rnd.randrange(50_000) for _ in range(rnd.randrange(0, 12))])
        data = ex.SerializeToString()
        out.append(data)
        total += len(data)
    return out


def _make(path: Path, options: str, recs: list[bytes]) -> None:
    try:
        from array_record.python import array_record_module as m
    except ImportError as exc:
        sys.exit(f"skipped: the official array-record wheel cannot be imported here ({exc})")
    tmp = path.with_suffix(".part")
    w = m.ArrayRecordWriter(str(tmp), options)
    for r in recs:
        w.write(r)
    w.close()
    tmp.rename(path)


def _one_chunk(path: Path):
    from tfrview.core.arrayrecord.reader import open_arrayrecord
    from tfrview.core.arrayrecord.riegeli import read_chunk_header, read_logical

    with open_arrayrecord(path) as f:
        h = read_chunk_header(f.read, int(f.chunks.begin[0]))
        return h, read_logical(f.read, h.data_begin, h.data_size), len(f.chunks)


def _whole(path: Path) -> tuple[float, float, int]:
    """Every chunk of the file read and decoded as the reader does: (wall s, CPU s, bytes)."""
    from tfrview.core.arrayrecord.reader import open_arrayrecord

    with open_arrayrecord(path) as f:
        t, c = time.perf_counter(), time.process_time()
        n = sum(len(f.chunk(k)[0]) for k in range(len(f.chunks)))
        return time.perf_counter() - t, time.process_time() - c, n


def _cpu(fn) -> float:
    """CPU seconds of one call (the machine may be shared: wall time then counts the others)."""
    t = time.process_time()
    fn()
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--mib", type=float, default=64)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chunks", type=int, default=1, help="chunks per file (the same records again)")
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    tail = f"x{args.chunks}" if args.chunks > 1 else ""
    paths = {
        kind: d / f"examples-{args.mib:g}mib{tail}-{kind}.array_record" for kind in ("transposed", "simple")
    }
    recs = None
    for kind, path in paths.items():
        if not path.exists():
            recs = recs or _examples(args.mib)
            opts = f"group_size:{len(recs)},zstd:3" + (",transpose:true" if kind == "transposed" else "")
            t = time.perf_counter()
            _make(path, opts, recs * args.chunks)
            print(
                f"made {path.name} ({len(recs) * args.chunks:,} records) in {time.perf_counter() - t:.1f} s"
            )
    from tfrview.core.arrayrecord.transposed import chunk_records

    print(f"os.cpu_count() = {os.cpu_count()}; load {os.getloadavg()[0]:.1f} (the decoder uses one core)")
    rates = {}
    for kind, path in paths.items():
        h, data, nchunks = _one_chunk(path)
        values, offsets = chunk_records(h, data)
        assert len(offsets) == h.num_records + 1
        del values, offsets
        dt = best(lambda h=h, data=data: chunk_records(h, data), args.runs)
        cpu = min(_cpu(lambda h=h, data=data: chunk_records(h, data)) for _ in range(args.runs))
        tracemalloc.start()
        chunk_records(h, data)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        ratio = peak / max(h.decoded_size, 1)
        target = "target <= 1 s CPU, peak <= 3x" if kind == "transposed" else "(reference)"
        print(
            f"{kind:10s} chunk: {h.decoded_size / (1 << 20):6.1f} MiB, {h.num_records:,} records "
            f"({len(data) / (1 << 20):.1f} MiB stored): {dt:6.3f} s wall, {cpu:6.3f} s CPU, "
            f"{h.decoded_size / dt / 1e6:6.0f} MB/s; peak {peak / (1 << 20):5.0f} MiB = {ratio:.1f}x "
            f"the decoded size   {target}"
        )
        rates[kind] = _whole(path)
        print(
            f"{kind:10s} file read whole ({nchunks} chunk(s), ArrayRecordFile.chunk): "
            f"{rates[kind][0]:6.2f} s wall, {rates[kind][1]:6.2f} s CPU, "
            f"{rates[kind][2] / rates[kind][1] / 1e6:6.0f} MB/s of records a CPU second"
        )
    slower = rates["transposed"][1] / max(rates["simple"][1], 1e-9)
    print(f"transposed file / simple file, CPU: {slower:.1f}x   target <= 2x")
    big = d / "arrayrecord-1g.array_record"  # bench_arrayrecord.py's file (simple chunks, group size 1)
    if big.exists():
        from tfrview.core.arrayrecord.reader import open_arrayrecord

        with open_arrayrecord(big) as f:
            t = time.perf_counter()
            n = sum(len(f.chunk(c)[0]) for c in range(len(f.chunks)))
            dt = time.perf_counter() - t
        print(
            f"1 GB simple-chunk file read whole: {dt:6.2f} s, {n / dt / 1e6:6.0f} MB/s of records "
            f"({len(f.chunks):,} chunks)   (reference)"
        )
    else:
        print(f"(no {big}: run bench/bench_arrayrecord.py first for the 1 GB simple-chunk figure)")


if __name__ == "__main__":
    main()
