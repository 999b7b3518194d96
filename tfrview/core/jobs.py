"""Whole-dataset jobs run in a child process, streaming JSON lines, so a window's GIL stays free.

    python -m tfrview.core.jobs '{"job": "checks", "paths": [...], "label_map": {...}}'

Each output line is one JSON object: {"progress": [phase, done, total]}, a job's results, or
{"error": message}. The child opens the same files in the same order as the window, so its record
numbers (local per file) are the window's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

from .checks import CheckTarget, run_checks
from .dataset import Dataset
from .framing import HEADER_SIZE
from .index import verify
from .report import intact_numbers


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _ticker(every: float = 0.1):
    last = [0.0]

    def tick(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= every:
            last[0] = now
            _emit({"progress": [phase, done, total]})

    return tick


def _open_verified(paths: list[str]) -> Dataset:
    ds = Dataset.open(paths)
    for _ in ds.scan():
        pass
    for f in ds.files:
        if f.source is not None:
            for _ in verify(f.source, f.index):
                pass
    return ds


def job_checks(spec: dict) -> None:
    label_map = {int(k): v for k, v in (spec.get("label_map") or {}).items()} or None
    ds = _open_verified(spec["paths"])
    targets, files = [], []
    for fi, f in enumerate(ds.files):
        if f.source is None:
            continue
        o, ln, src = f.index.offsets, f.index.lengths, f.source
        targets.append(CheckTarget(str(f.path), lambda n, s=src, o=o, ln=ln: s.read(int(o[n]) + HEADER_SIZE, int(ln[n])),
                                   o, ln, intact_numbers(f.index)))  # fmt: skip
        files.append(fi)
    for ti, p in run_checks(targets, label_map, _ticker()):
        _emit({"file": files[ti], "problem": p.to_json()})
    ds.close()


JOBS = {"checks": job_checks}


def child_main(arg: str) -> int:
    try:
        spec = json.loads(arg)
        JOBS[spec["job"]](spec)
        _emit({"done": True})
    except BrokenPipeError:
        return 0
    except Exception as exc:  # reported to the window, which says so
        _emit({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    return 0


def spawn(spec: dict) -> subprocess.Popen:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.Popen(
        [sys.executable, "-m", "tfrview.core.jobs", json.dumps(spec)],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, text=True,
    )  # fmt: skip


def read_lines(proc: subprocess.Popen) -> Iterator[dict]:
    for line in proc.stdout:
        try:
            yield json.loads(line)
        except ValueError:
            continue


if __name__ == "__main__":
    raise SystemExit(child_main(sys.argv[1]))
