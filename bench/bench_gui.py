"""Window figures against the targets of the main-window issue. Makes its own files (cached).

    python bench/bench_gui.py [--dir /tmp/tfrview-bench] [--runs 5] [--busy]

For each file, a fresh process (python start-up included) opens the window and reports:
- time from process start to the first paint of the table with rows in it, and from the window
  first showing to that paint;
- the lateness of a 5 ms QTimer on the UI thread while the index and verify run (p99 and max), and
  then while the analysis pass runs on every core (each run has an empty analysis cache, so the
  pass really runs); --busy adds one competing busy process for the whole run.
Runs on whatever Qt platform the environment gives (a real X server under Xvfb, or offscreen).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import sys, time, json
T0 = float(sys.argv[2])
import os
from PySide6.QtCore import QObject, QEvent, QTimer
from tfrview.gui.app import make_app, Windows
from tests.gui.driver import Driver  # the page object's supported waits (cwd is the repository)
app = make_app()
shown = {}
class Watch(QObject):
    def eventFilter(self, obj, ev):
        t = ev.type()
        if t == QEvent.Type.Show and "show" not in shown:
            shown["show"] = time.time()
        if t == QEvent.Type.Paint and "rows" not in shown and win.model.rowCount() > 0:
            shown["rows"] = time.time()
        return False
watch = Watch()
app.installEventFilter(watch)
win = Windows().open_dataset([sys.argv[1]])
d = Driver(None, win)
late = []
late_jobs = []
last = [time.perf_counter()]
jobs_started = [None]
def tick():
    now = time.perf_counter()
    l = max(0.0, (now - last[0]) * 1000 - 5.0)
    (late_jobs if d.index_ended() else late).append(l)
    last[0] = now
timer = QTimer()
timer.setInterval(5)
timer.timeout.connect(tick)
timer.start()
JOB_SECONDS = float(sys.argv[3])
def check():
    if not (d.index_ended() and "rows" in shown):
        return
    if jobs_started[0] is None:
        jobs_started[0] = time.perf_counter()
    # keep measuring while the QA checks run in their child process, up to JOB_SECONDS
    if d.checks.running and time.perf_counter() - jobs_started[0] < JOB_SECONDS:
        return
    if True:
        timer.stop()
        j = sorted(late_jobs) or [0.0]
        s = sorted(late[5:]) or [0.0]
        p99 = s[min(len(s) - 1, int(0.99 * len(s)))]
        print(json.dumps({"start_to_rows": shown["rows"] - T0, "show_to_rows": shown["rows"] - shown["show"],
                          "p99": p99, "max": s[-1], "ticks": len(s), "records": win.model.total(),
                          "jobs_p99": j[min(len(j) - 1, int(0.99 * len(j)))], "jobs_max": j[-1], "jobs_ticks": len(j),
                          "phase": d.index_phase}))
        win.close()
        app.quit()
poll = QTimer()
poll.timeout.connect(check)
poll.start(50)
app.exec()
"""


def make_jpeg_file(path: Path, total: int) -> None:
    """~total bytes of Object Detection Examples, each a ~1080p JPEG of ~250 KB with boxes."""
    import numpy as np
    from PIL import Image

    from tfrview.core.tfrecord.framing import encode_record
    from tfrview.demo import _example

    rnd = np.random.default_rng(5)
    payloads = []
    for _ in range(6):
        base = np.linspace(0, 255, 1920, dtype=np.float32)[None, :, None]
        img = (base + rnd.normal(0, 28, (1080, 1920, 3))).clip(0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, "JPEG", quality=70)
        payloads.append(
            _example(
                **{
                    "image/encoded": buf.getvalue(),
                    "image/format": "jpeg",
                    "image/height": 1080,
                    "image/width": 1920,
                    "image/object/bbox/xmin": [0.1, 0.5],
                    "image/object/bbox/ymin": [0.1, 0.4],
                    "image/object/bbox/xmax": [0.3, 0.9],
                    "image/object/bbox/ymax": [0.5, 0.8],
                    "image/object/class/text": ["car", "person"],
                    "image/object/class/label": [3, 1],
                }
            ).SerializeToString()
        )
    framed = [encode_record(p) for p in payloads]
    n = total // len(framed[0])
    tmp = path.with_suffix(".partial")
    with open(tmp, "wb") as f:
        for i in range(n):
            f.write(framed[i % len(framed)])
    tmp.replace(path)


def run_child(path: Path, job_seconds: float = 10.0) -> dict:
    import tempfile

    env = dict(os.environ)
    env.setdefault("XDG_CONFIG_HOME", "/tmp/tfrview-bench/config")
    env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tfrview-bench-cache-")  # nothing stored: the pass runs
    t0 = time.time()
    r = subprocess.run([sys.executable, "-c", CHILD, str(path), repr(t0), str(job_seconds)], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=600)  # fmt: skip
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if not lines:
        raise SystemExit(f"child failed: {r.stderr[-2000:]}")
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--busy", action="store_true", help="one competing busy process for the whole run")
    a = ap.parse_args()
    busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if a.busy else None
    try:
        _main(a)
    finally:
        if busy is not None:
            busy.kill()


def _main(a) -> None:
    from tfrview.core.analysis import default_jobs

    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    small = d / "small-2000000.tfrecord"
    if not small.exists():
        from bench.bench_engine import make_small

        make_small(small, 2_000_000)
    jpeg = d / "jpeg-2GB.tfrecord"
    if not jpeg.exists():
        print(f"making {jpeg} ...", flush=True)
        make_jpeg_file(jpeg, 2 << 30)
    print(
        f"Qt platform: {os.environ.get('QT_QPA_PLATFORM') or 'default'}  DISPLAY={os.environ.get('DISPLAY', '')}"
        f"  cores: {default_jobs()}{'  (+1 busy process competing)' if a.busy else ''}"
    )
    for path in (small, jpeg):
        with open(path, "rb") as f:  # warm the page cache
            while f.read(64 << 20):
                pass
        res = [run_child(path) for _ in range(a.runs)]
        print(
            f"{path.name} ({path.stat().st_size / 1e9:.2f} GB, {res[0]['records']:,} records), {a.runs} runs:"
        )
        for key, target, label in (
            ("start_to_rows", 1.0, "process start to first rows painted"),
            ("show_to_rows", 0.1, "window shown to first rows painted"),
        ):
            vals = [r[key] for r in res]
            worst = max(vals)
            print(f"  {label:<40} median {statistics.median(vals) * 1000:6.0f} ms  worst {worst * 1000:6.0f} ms"
                  f"   target <= {target * 1000:.0f} ms  {'PASS' if worst <= target else 'MISS'}")  # fmt: skip
        for key, target in (("p99", 16.0), ("max", 50.0)):
            vals = [r[key] for r in res]
            worst = max(vals)
            print(f"  UI timer lateness {key:<22} median {statistics.median(vals):6.1f} ms  worst {worst:6.1f} ms"
                  f"   target <= {target:.0f} ms  {'PASS' if worst <= target else 'MISS'}")  # fmt: skip
        print(
            f"  ({sum(r['ticks'] for r in res) // len(res)} timer ticks per run while indexing and verifying)"
        )
        jp, jm = max(r["jobs_p99"] for r in res), max(r["jobs_max"] for r in res)
        ticks = sum(r["jobs_ticks"] for r in res) // len(res)
        print(f"  while the analysis pass runs on every core (up to 10 s, {ticks} ticks per run):")
        print(f"    UI timer lateness p99  worst {jp:6.1f} ms   target <= 8 ms   {'PASS' if jp <= 8 else 'MISS'}")
        print(f"    UI timer lateness max  worst {jm:6.1f} ms   target <= 30 ms  {'PASS' if jm <= 30 else 'MISS'}")


if __name__ == "__main__":
    random.seed(0)
    main()
