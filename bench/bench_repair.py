"""The repair targets of the QA issue, on files it makes itself:

    python bench/bench_repair.py [--records 20]

- one flipped data bit in every record, records of 1 KB to 1 MB: share restored byte-exact
  (target 100 %) and the slowest record's repair (target <= 1 s);
- line-ending conversions both ways (dos2unix: CR LF -> LF; unix2dos: LF -> CR LF) of a file of
  tf.Examples holding JPEGs of 5-500 KB and small text records: records restored against the
  records whose original bytes are provable (their lost CR bytes can be placed in at most
  limits.PROOF_SPACE ways: beyond, the data CRC's 32 bits cannot single one placement out; and
  searched in at most limits.PROOF_WORK steps);
  target: every provable record restored, nothing else written;
- both kinds in one file, repaired by one command.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import framed  # noqa: E402
from tfrview.core.limits import PROOF_SPACE, PROOF_WORK  # noqa: E402
from tfrview.core.output.repair import repair, repair_record  # noqa: E402
from tfrview.core.tfrecord.framing import HEADER_SIZE  # noqa: E402
from tfrview.core.tfrecord.lineendings import search_steps, ways_within  # noqa: E402
from tfrview.core.tfrecord.report import verify_source  # noqa: E402
from tfrview.core.tfrecord.source import open_source, source_from_bytes  # noqa: E402


def examples(rnd: random.Random, n: int) -> list[bytes]:
    """tf.Examples with a JPEG of 5-500 KB (noise compresses badly: sizes like photos'), and some
    small records of text and numbers."""
    import numpy as np
    from PIL import Image

    from tfrview.demo import _example

    out = []
    for i in range(n):
        if i % 4 == 3:
            out.append(
                _example(
                    **{"text": f"caption {i}\nline two\r\nline three", "label": i % 7}
                ).SerializeToString()
            )
            continue
        side = rnd.choice([48, 96, 160, 260, 420])  # 420: ~500 KB, past what a data CRC can prove
        arr = np.asarray(np.random.default_rng(i).integers(0, 255, (side, side, 3)), dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, "JPEG", quality=90)
        out.append(
            _example(
                **{
                    "image/encoded": buf.getvalue(),
                    "image/format": "jpeg",
                    "image/object/class/label": [1, 2],
                }
            ).SerializeToString()
        )
    return out


def repaired(data: bytes) -> tuple[list[bytes], object, float]:
    from tfrview.core.tfrecord.index import RecordIndex, scan

    with tempfile.TemporaryDirectory() as d:
        src_path, out = Path(d) / "in.tfrecord", Path(d) / "out.tfrecord"
        src_path.write_bytes(data)
        t = time.perf_counter()
        with open_source(str(src_path)) as src:
            idx, _ = verify_source(src, None, None)
            res = repair(src, idx, out)
        took = time.perf_counter() - t
        with open_source(str(out)) as o:
            ix = RecordIndex()
            for c in scan(o):
                ix.apply(c)
            got = [o.read(int(ix.offsets[k]) + HEADER_SIZE, int(ix.lengths[k])) for k in range(ix.count)]
    return got, res, took


def provable(pls: list[bytes]) -> int:
    """Records whose lost CR bytes could be put back in at most PROOF_SPACE ways, searched in at
    most PROOF_WORK steps (the limits a repair keeps)."""
    n = 0
    for p in pls:
        k, m = p.count(b"\r\n"), p.count(b"\n")
        n += k == 0 or (ways_within(m, k, PROOF_SPACE) is not None and search_steps(m, k) <= PROOF_WORK)
    return n


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=20, help="records of each size with a flipped bit")
    a = ap.parse_args()
    rnd = random.Random(12)
    ok = True
    print(f"cores: {os.cpu_count()}")

    # one flipped data bit per record
    times, restored, total = [], 0, 0
    for size in (1 << 10, 10 << 10, 100 << 10, 1 << 20):
        pls = [rnd.randbytes(size) for _ in range(a.records)]
        data, offs = framed(pls)
        b = bytearray(data)
        for k, p in enumerate(pls):
            b[offs[k] + HEADER_SIZE + rnd.randrange(len(p))] ^= 1 << rnd.randrange(8)
        src = source_from_bytes(bytes(b))
        for k, p in enumerate(pls):
            t = time.perf_counter()
            fixed = repair_record(src, offs[k], len(p))
            times.append((time.perf_counter() - t, size))
            restored += fixed is not None and fixed[0] == p
            total += 1
    slowest = max(times)
    share = 100 * restored / total
    v1, v2 = share == 100, slowest[0] <= 1.0
    ok &= v1 and v2
    print(
        f"flipped bits: {restored}/{total} records restored byte-exact = {share:.0f} % (target 100 %: "
        f"{'PASS' if v1 else 'MISS'}); slowest {slowest[0] * 1000:.0f} ms for {slowest[1] >> 10} KB, median "
        f"{statistics.median(t for t, _ in times) * 1000:.1f} ms (target <= 1 s each: {'PASS' if v2 else 'MISS'})"
    )

    # line-ending conversions
    pls = examples(rnd, 200)
    data, offs = framed(pls)
    conversions = {
        "dos2unix (CR LF -> LF)": data.replace(b"\r\n", b"\n"),
        "unix2dos (LF -> CR LF)": re.sub(rb"(?<!\r)\n", b"\r\n", data),
    }
    want = provable(pls)
    for name, conv in conversions.items():
        got, res, took = repaired(conv)
        exact = sum(1 for g in got if g in set(pls))
        wrong = len(got) - exact
        verdict = exact == want and wrong == 0
        ok &= verdict
        print(
            f"{name}: {exact}/{len(pls)} records restored byte-exact, {want} provable, {wrong} wrong "
            f"(target: every provable one, nothing wrong: {'PASS' if verdict else 'MISS'}); "
            f"{len(res.repaired)} needed CR bytes back; {took:.2f} s for {len(conv) / 1e6:.1f} MB"
        )

    # both kinds in one file: a flipped bit before a unix2dos transfer
    b = bytearray(data)
    flips = [k for k in range(len(pls)) if k % 4 != 3][:10]
    for k in flips:
        b[offs[k] + HEADER_SIZE + 100] ^= 0x10
    both = re.sub(rb"(?<!\r)\n", b"\r\n", bytes(b))
    got, res, took = repaired(both)
    flipped_back = sum(1 for k in flips if pls[k] in set(got))
    exact = sum(1 for g in got if g in set(pls))
    verdict = flipped_back == sum(1 for k in flips if pls[k].count(b"\r\n") == 0) and exact == len(got)
    ok &= verdict
    print(
        f"both (10 flipped bits, then unix2dos), one command: {exact}/{len(pls)} restored, {flipped_back}/10 "
        f"flipped records back ({'PASS' if verdict else 'MISS'}: every flipped record without a CR LF of its own, "
        f"nothing wrong); {took:.2f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
