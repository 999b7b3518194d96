"""Window figures against the targets of the main-window issue. Makes its own files (cached).

    python bench/bench_gui.py [--dir /tmp/tfrview-bench] [--runs 5] [--busy]
    python bench/bench_gui.py --shards 2048|10000 [--runs 1] [--limit 600] [--shot out.png] [--store DIR]
    python bench/bench_gui.py --big [--limit 600] [--shot out.png]

For each file, a fresh process (python start-up included) opens the window and reports:
- time from process start to the first paint of the table with rows in it, and from the window
  first showing to that paint;
- the lateness of a 5 ms QTimer on the UI thread while the index and verify run (p99 and max), and
  then while the analysis pass runs on every core (each run has an empty analysis cache, so the
  pass really runs); --busy adds one competing busy process for the whole run.
With --shards N: a split of N small shards (cut from one generated file at record boundaries, one
shard damaged; cached under --dir), opened cold (none of this split stored) and warm (the same
store: every shard's results stored; which one a run is, is asked of the store, `stored_state`), reporting from process start the first rows painted, every row's CRC status,
the first QA progress, the first status line whose QA words count records (the analysis's
progress, or what it waits for with the records read so far), the QA findings shown, the UI
thread's lateness (a 5 ms timer, p99 and max), and the Shards panel sorted by damaged records (its time, and whether the bad shard is on top), and
beside each time the window process's CPU then (user + sys of all its threads: the figure to
compare on a busy machine; the job processes' CPU is not in it).
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
from tfrview.core.childproc import one_blas_thread
one_blas_thread()  # as `tfrview DIR` does first (cli.main), before numpy loads
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

CHILD_SPLIT = r"""
import sys, time, json, resource
T0 = float(sys.argv[2])
from tfrview.core.childproc import one_blas_thread
one_blas_thread()  # as `tfrview DIR` does first (cli.main), before numpy loads
from PySide6.QtCore import QObject, QEvent, QTimer, Qt
from tfrview.gui.app import make_app, Windows
from tests.gui.driver import Driver
from tfrview.gui.job_state import Phase
app = make_app()
seen = {}
cpu = {}  # the window process's CPU (user + sys, every thread) when each was seen
def cpu_now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
class Watch(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and "rows" not in seen and win.model.rowCount() > 0:
            seen["rows"] = time.time()
            cpu["rows"] = cpu_now()
        return False
watch = Watch()
app.installEventFilter(watch)
win = Windows().open_dataset([sys.argv[1]])
d = Driver(None, win)
late = [0.0]
last = [time.perf_counter()]
def tick():
    now = time.perf_counter()
    late.append(max(0.0, (now - last[0]) * 1000 - 5.0))
    last[0] = now
timer = QTimer()
timer.setInterval(5)
timer.timeout.connect(tick)
timer.start()
LIMIT = float(sys.argv[3])
def check():
    now = time.time()
    qa_words = win.status_label.text().partition("QA checks")[2]  # the status line's QA words
    for key, ok in (("crc", lambda: d.is_indexed()), ("progress", lambda: d.checks.total),
                    ("qa_words", lambda: "records" in qa_words.partition("  ·  ")[0]),
                    ("findings", lambda: d.is_analysed() and "crc" in seen)):
        if key not in seen and ok():
            seen[key] = now
            cpu[key] = cpu_now()
    if ("findings" in seen and "rows" in seen) or now - T0 > LIMIT:
        timer.stop()
        out = {k: v - T0 for k, v in seen.items()}
        out["cpu"] = cpu
        s = sorted(late)
        out.update(p99=s[min(len(s) - 1, int(0.99 * len(s)))], max=s[-1], records=win.model.total(),
                   phase=str(d.checks.phase), problems=len(d.problems_shown()) if "findings" in seen else -1)
        # the Shards panel: sort by damaged records, the bad shard on top, timed on the UI thread
        sp = win.shards_panel
        sp.dock.show(); sp.dock.raise_(); sp.refresh()
        t = time.perf_counter()
        sp.view.sortByColumn(sp.model.columns.index("damaged"), Qt.SortOrder.DescendingOrder)
        app.processEvents()
        out["sort_ms"] = (time.perf_counter() - t) * 1000
        out["top_shard"] = sp.model.data(sp.model.index(0, 0)) if sp.model.rowCount() else ""
        out["shard_rows"] = sp.model.rowCount()
        if len(sys.argv) > 4:
            app.processEvents()
            win.grab().save(sys.argv[4])
        print(json.dumps(out))
        win.close()
        app.quit()
poll = QTimer()
poll.timeout.connect(check)
poll.start(20)
app.exec()
"""

CHILD_BIG = r"""
import sys, time, json
T0 = float(sys.argv[2])
from tfrview.core.childproc import one_blas_thread
one_blas_thread()  # as `tfrview DIR` does first (cli.main), before numpy loads
from PySide6.QtCore import QTimer, Qt
from PySide6.QtTest import QTest
from tfrview.gui.app import make_app, Windows
from tests.gui.driver import Driver
app = make_app()
win = Windows().open_dataset([sys.argv[1]])
win.show()
d = Driver(None, win)
seen = {}
late = [0.0]
last = [time.perf_counter()]
def tick():
    now = time.perf_counter()
    late.append(max(0.0, (now - last[0]) * 1000 - 5.0))
    last[0] = now
timer = QTimer()
timer.setInterval(5)
timer.timeout.connect(tick)
timer.start()
def watch(state):
    now = time.time() - T0
    seen.setdefault("checks_started", now)
    if state.total:
        seen.setdefault("first_progress", now)
        seen.setdefault("first_progress_words", state.text("QA checks"))
d.analysis_changed.connect(watch)
def on_summary(_s, partial):
    seen.setdefault("first_partial_summary" if partial else "summary", time.time() - T0)
win.session.summary_ready.connect(on_summary)
d.wait_indexed(timeout=600000)
seen["indexed"] = time.time() - T0
def timed(name, fn):
    late.clear(); late.append(0.0); last[0] = time.perf_counter()
    t = time.perf_counter()
    fn()
    for _ in range(20):
        app.processEvents(); time.sleep(0.01)
    seen[name] = (time.perf_counter() - t) * 1000
    seen[name + "_max_late"] = max(late)
win.table.setFocus()
timed("select_all_ms", lambda: QTest.keyClick(win.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier))
seen["selected_ranges"] = len(win.table.selectionModel().selection())
timed("to_gallery_ms", lambda: win.tabs.setCurrentWidget(win.gallery))
timed("to_table_ms", lambda: win.tabs.setCurrentWidget(win.table))
LIMIT = float(sys.argv[3])
end = time.time() + LIMIT
while time.time() < end and not ("summary" in seen and d.is_analysed()):
    app.processEvents(); time.sleep(0.01)
if len(sys.argv) > 4:
    win.summary_dock.show(); win.summary_dock.raise_(); app.processEvents()
    win.grab().save(sys.argv[4])
print(json.dumps({**seen, "records": win.model.total(), "phase": str(d.checks.phase)}))
win.close()
app.quit()
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
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tfrview has its bytecode (bench_split does so)
    env.setdefault("XDG_CONFIG_HOME", "/tmp/tfrview-bench/config")
    env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tfrview-bench-cache-")  # nothing stored: the pass runs
    t0 = time.time()
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), repr(t0), str(job_seconds)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if not lines:
        raise SystemExit(f"child failed: {r.stderr[-2000:]}")
    return json.loads(lines[-1])


def make_split(d: Path, shards: int, records: int) -> tuple[Path, str]:
    """`records` small Examples cut at record boundaries into `shards` files (bench_split's cut),
    one of them with a flipped data byte in its third record: the bad shard the Shards panel must
    find. Cached under `d`; returns the folder and the bad shard's name."""
    from bench.bench_split import cut, make_whole

    folder = cut(make_whole(d, records), d, shards)
    bad = sorted(folder.iterdir())[shards // 2]
    mark = d / f"{folder.name}.damaged"  # beside the folder: bench_split.cut counts the files in it
    if not mark.exists():
        data = bytearray(bad.read_bytes())
        at = 0
        for _ in range(2):
            at += 16 + int.from_bytes(data[at : at + 8], "little")
        data[at + 12 + 3] ^= 0x10  # a byte of the third record's data: its data CRC fails
        bad.write_bytes(bytes(data))
        mark.write_text(bad.name)
    return folder, mark.read_text()


def run_split_child(folder: Path, cache: str, limit: float, shot: str = "") -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tfrview has its bytecode (bench_split does so)
    env.setdefault("XDG_CONFIG_HOME", "/tmp/tfrview-bench/config")
    env["XDG_CACHE_HOME"] = cache
    t0 = time.time()
    args = [sys.executable, "-c", CHILD_SPLIT, str(folder), repr(t0), str(limit)] + ([shot] if shot else [])
    r = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=limit + 120)
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if not lines:
        raise SystemExit(f"child failed: {r.stderr[-2000:]}")
    return json.loads(lines[-1])


STORED_CHECK = r"""
import json, os, sys
from tfrview.core.analysis import cache
from tfrview.core.analysis.shard import plan

folder = sys.argv[1]
paths = sorted(os.path.join(folder, n) for n in os.listdir(folder))
first = {}
for t in plan(paths, True):
    first.setdefault(t.file_no, t)
deep = cache.load_many([first[i] for i in range(len(paths))], index_only=True)
print(json.dumps({"files": len(paths), "stored": sum(r is not None for r in deep), "entries": cache.usage()[0]}))
"""


def stored_state(folder: Path, cache: str) -> tuple[str, bool | None]:
    """What the store `cache` holds of THIS split before a run: its label, and whether the run is
    cold (True: none of its shards' deep results stored), warm (False: every one) or neither (None:
    some; no target applies). Asked of the store itself (its files' stored deep passes, as the
    window's scan asks), not of whether the folder exists: a store that holds other splits, or a
    cold run stopped by --limit, would otherwise be measured as warm."""
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    r = subprocess.run(
        [sys.executable, "-c", STORED_CHECK, str(folder)], capture_output=True, text=True, env=env, cwd=ROOT
    )
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if not lines:
        raise SystemExit(f"store check failed: {r.stderr[-2000:]}")
    v = json.loads(lines[-1])
    held = f"; {v['entries']:,} entries in the store" if v["entries"] else ""
    if v["stored"] == 0:
        return f"cold (this split not stored{held or '; an empty store'})", True
    if v["stored"] == v["files"]:
        return f"warm (every shard's results stored{held})", False
    return f"partly stored ({v['stored']:,} of {v['files']:,} shards{held}): neither cold nor warm", None


def split_main(a) -> None:
    """The window on a split of many small shards: cold (an empty store), then warm (reopened)."""
    import shutil
    import tempfile

    from tfrview.core.childproc import cores as default_jobs

    records = a.records or (2_000_000 if a.shards == 2048 else a.shards * 100)
    t = time.perf_counter()
    folder, bad = make_split(Path(a.dir), a.shards, records)
    print(
        f"{a.shards:,} shards of {records:,} small Examples in {folder} (made or found in "
        f"{time.perf_counter() - t:.1f} s); bad shard {bad}; cores: {default_jobs()}; "
        f"load {os.getloadavg()[0]:.1f}"
    )
    for _ in range(a.runs):
        cache = a.store or tempfile.mkdtemp(prefix="tfrview-bench-cache-")
        try:
            # a run as the store finds this split, then (unless that one was warm) one reopening it
            for k in range(2):
                label, cold = stored_state(folder, cache)
                if k == 1 and cold is not False:
                    print(f"  (no warm run: after the first run the store holds this split {label})")
                    break
                shot = a.shot if cold else a.shot.replace(".png", "-warm.png")
                r = run_split_child(folder, cache, a.limit, shot)
                print(
                    f"  {label}: {r['records']:,} records, {r['shard_rows']:,} shard rows, analysis {r['phase']}"
                )
                for key, target, what in (
                    ("rows", 1.0, "first rows painted"),
                    ("crc", None, "every row's CRC status"),
                    ("progress", 1.0 if cold else None, "first QA progress"),
                    ("qa_words", 1.0 if cold else None, "QA status in records"),
                    ("findings", 1.0 if cold is False else None, "QA findings shown"),
                ):
                    v = r.get(key)
                    val = "never" if v is None else f"{v:7.2f} s"
                    tgt = (
                        f"target <= {target:.1f} s {'PASS' if v is not None and v <= target else 'MISS'}"
                        if target
                        else ""
                    )
                    used = r.get("cpu", {}).get(key)
                    used = f"; window CPU {used:5.2f} s" if used is not None else ""
                    print(f"    {what:<28} {val:>10}  (from process start{used})  {tgt}")
                print(f"    UI timer lateness           p99 {r['p99']:6.1f} ms  max {r['max']:7.1f} ms")
                print(
                    f"    Shards panel sort by damaged {r['sort_ms']:6.1f} ms; top row {r['top_shard']} "
                    f"({'PASS' if r['top_shard'] == bad else 'MISS'})"
                )
                if cold is False:
                    break
        finally:
            if not a.store:
                shutil.rmtree(cache, ignore_errors=True)


def big_main(a) -> None:
    """The window on one 2,000,000-record file of small Examples: Ctrl+A then the Gallery tab and
    back (each timed with the UI thread's worst lateness), the QA checks' first progress and the
    Dataset Summary's first partial figures (from process start, an empty store)."""
    import shutil
    import tempfile

    from tfrview.core.childproc import cores as default_jobs

    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / "whole-2000000.tfrecord"
    if not path.exists():
        from bench.bench_split import make_whole

        path = make_whole(d, 2_000_000)
    print(f"{path.name}: cores {default_jobs()}, load {os.getloadavg()[0]:.1f}")
    cache = tempfile.mkdtemp(prefix="tfrview-bench-cache-")
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tfrview has its bytecode
    env.setdefault("XDG_CONFIG_HOME", "/tmp/tfrview-bench/config")
    try:
        args = [sys.executable, "-c", CHILD_BIG, str(path), repr(time.time()), str(a.limit)] + (
            [a.shot] if a.shot else []
        )
        r = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=a.limit + 900)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if not lines:
        raise SystemExit(f"child failed: {r.stderr[-2000:]}")
    v = json.loads(lines[-1])
    print(f"  {v['records']:,} records, indexed at {v['indexed']:.1f} s; analysis {v['phase']}")
    for key, target in (("select_all_ms", 100), ("to_gallery_ms", 100), ("to_table_ms", 100)):
        ok = v[key] - 200 <= target  # 200 ms of event-loop turns follow each action in the measure
        print(
            f"  {key:<16} {v[key]:8.0f} ms (max UI lateness {v[key + '_max_late']:7.1f} ms)   "
            f"target <= {target} ms + 200 ms of measuring  {'PASS' if ok else 'MISS'}"
        )
    print(f"  selection ranges after Ctrl+A: {v['selected_ranges']}")
    start = v.get("checks_started")
    for key, what in (
        ("first_progress", "first QA progress"),
        ("first_partial_summary", "first partial summary"),
        ("summary", "whole summary"),
    ):
        t = v.get(key)
        since = (
            f"{t - start:6.1f} s after the checks started" if t is not None and start is not None else "never"
        )
        print(
            f"  {what:<24} {since}"
            + (f"  ({v.get('first_progress_words', '')})" if key == "first_progress" else "")
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--busy", action="store_true", help="one competing busy process for the whole run")
    ap.add_argument("--shards", type=int, default=0, help="a split of this many small shards instead")
    ap.add_argument(
        "--records", type=int, default=0, help="records of the split (2 M for 2,048, else 100 a shard)"
    )
    ap.add_argument("--limit", type=float, default=600.0, help="seconds a split's run may take")
    ap.add_argument(
        "--big", action="store_true", help="one 2,000,000-record file: selection, gallery, progress"
    )
    ap.add_argument("--shot", default="", help="save a screenshot of the window at the end (a .png)")
    ap.add_argument(
        "--store",
        default="",
        help="with --shards: the cache folder to use and keep; each run is labelled cold, warm or "
        "partly stored by what it holds of THIS split (a store holding every shard: only the warm "
        "run, reopens measured again and again without the cold pass)",
    )
    a = ap.parse_args()
    busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if a.busy else None
    try:
        split_main(a) if a.shards else big_main(a) if a.big else _main(a)
    finally:
        if busy is not None:
            busy.kill()


def _main(a) -> None:
    from tfrview.core.childproc import cores as default_jobs

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
            print(
                f"  {label:<40} median {statistics.median(vals) * 1000:6.0f} ms  worst {worst * 1000:6.0f} ms"
                f"   target <= {target * 1000:.0f} ms  {'PASS' if worst <= target else 'MISS'}"
            )
        for key, target in (("p99", 16.0), ("max", 50.0)):
            vals = [r[key] for r in res]
            worst = max(vals)
            print(
                f"  UI timer lateness {key:<22} median {statistics.median(vals):6.1f} ms  worst {worst:6.1f} ms"
                f"   target <= {target:.0f} ms  {'PASS' if worst <= target else 'MISS'}"
            )
        print(
            f"  ({sum(r['ticks'] for r in res) // len(res)} timer ticks per run while indexing and verifying)"
        )
        jp, jm = max(r["jobs_p99"] for r in res), max(r["jobs_max"] for r in res)
        ticks = sum(r["jobs_ticks"] for r in res) // len(res)
        print(f"  while the analysis pass runs on every core (up to 10 s, {ticks} ticks per run):")
        print(
            f"    UI timer lateness p99  worst {jp:6.1f} ms   target <= 8 ms   {'PASS' if jp <= 8 else 'MISS'}"
        )
        print(
            f"    UI timer lateness max  worst {jm:6.1f} ms   target <= 30 ms  {'PASS' if jm <= 30 else 'MISS'}"
        )


if __name__ == "__main__":
    random.seed(0)
    main()
