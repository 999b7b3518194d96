"""Run the fuzz suite's strategies for as long as asked and print what they found.

    python bench/fuzz.py --minutes 30 [--examples 2000] [--out /tmp/tfrview-fuzz]

The same tests `make test` runs with a small fixed budget (tests/fuzz/), here with fresh random
seeds round after round: framing damage, compression damage, reads of undamaged GZIP/ZLIB files in
any order against a sequential read, compression bombs whose records must all be counted, hostile
payloads and records that lost CR bytes in-process, the CLI on hostile paths, files, payloads,
bombs and such records in child processes, and remote reading against hostile servers on 127.0.0.1
(in-process and through the CLI, with TFRVIEW_NET_TIMEOUT=1). A failing input is saved under --out
and named in the report; a CLI run that ended in "internal error" is a failure of its own, counted
apart. Not a test: it prints, and exits 1 if anything was found.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = {  # name -> (test node, share of --examples it runs per round)
    "framing": ("tests/fuzz/test_fuzz_framing.py::test_damaged_plain_files_lose_no_untouched_record", 1.0),
    "compressed": (
        "tests/fuzz/test_fuzz_framing.py::test_damaged_compressed_files_keep_everything_before_the_damage",
        1.0,
    ),
    "reads": (
        "tests/fuzz/test_fuzz_framing.py::test_compressed_reads_in_any_order_equal_a_sequential_read",
        0.1,
    ),
    "bombs": ("tests/fuzz/test_fuzz_framing.py::test_compression_bombs_hold_the_records_they_hold", 0.1),
    "payloads": (
        "tests/fuzz/test_fuzz_payloads.py::test_hostile_payloads_are_decoded_within_the_limits",
        0.5,
    ),
    # records that lost CR bytes in the counts that made the search explode (k close to m, k near
    # m / 2, huge m, a length past the end): a walk within its budget that keeps the good records
    "lineendings": ("tests/fuzz/test_fuzz_lineendings.py", 0.25),
    "cli": ("tests/fuzz/test_fuzz_cli.py", 1.0),  # runs EXAMPLES // 10 inputs through every command
    # hostile servers on 127.0.0.1 (stalling, lying about sizes, cutting bodies, ignoring Range,
    # changing between fetches): EXAMPLES // 10 in-process, EXAMPLES // 60 through the CLI
    "remote": ("tests/fuzz/test_fuzz_remote.py::test_hostile_servers_end_with_a_line_or_a_true_report", 0.5),
    "remote-cli": ("tests/fuzz/test_fuzz_remote.py::test_hostile_servers_through_the_cli", 0.5),
}


def run_round(name: str, node: str, examples: int, seed: int, out: Path) -> tuple[bool, str, float, int]:
    """One pytest run: (passed, what failed and its saved input, seconds, CLI runs that ended in
    "internal error": tests/fuzz/test_fuzz_cli.check_run names them so)."""
    save = out / f"{name}-{seed}"
    env = dict(
        os.environ,
        FUZZ_EXAMPLES=str(examples),
        FUZZ_RANDOM="1",
        FUZZ_SAVE_DIR=str(save),
        QT_QPA_PLATFORM="offscreen",
    )
    t0 = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            f"--hypothesis-seed={seed}",
            "--hypothesis-show-statistics",
            "-m",
            "slow or not slow",  # the tests make test leaves to make test-slow are fuzzed here too
            node,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - t0
    internal = sum(
        1 for line in r.stdout.splitlines() if line.startswith("E  ") and "internal error of the CLI" in line
    )
    ok = r.returncode == 0 and not internal
    if ok:
        return True, "", seconds, 0
    errors = [line for line in r.stdout.splitlines() if line.startswith("E  ") and "Error" in line]
    saved = ", ".join(str(p) for p in sorted(save.glob("*"))) or "(no input saved)"
    return (
        False,
        f"{errors[0].strip() if errors else r.stdout[-800:]}\n      input: {saved}",
        seconds,
        internal,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--examples", type=int, default=2000, help="examples per test per round")
    ap.add_argument("--out", default="/tmp/tfrview-fuzz", help="where failing inputs are saved")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"fuzzing for {args.minutes:g} minutes on {os.cpu_count()} cores; {args.examples} examples per test per round"
    )
    deadline = time.monotonic() + args.minutes * 60
    found: list[str] = []
    counts = dict.fromkeys(TESTS, 0)
    internal_errors = 0
    rnd = random.Random()
    rounds = 0
    while time.monotonic() < deadline:
        rounds += 1
        for name, (node, share) in TESTS.items():
            if time.monotonic() >= deadline:
                break
            seed = rnd.randrange(1 << 30)
            n = max(10, int(args.examples * share))
            ok, report, seconds, internal = run_round(name, node, n, seed, out)
            internal_errors += internal
            if name == "cli":
                # the cli file's generated-input tests: n // 10 (twice), n // 20 and n // 30 inputs
                inputs = 2 * max(3, n // 10) + max(2, n // 20) + max(2, n // 30)
            elif name == "remote":
                inputs = max(4, n // 10)
            elif name == "remote-cli":
                inputs = max(1, n // 60)
            else:
                inputs = n
            counts[name] += inputs
            status = "ok" if ok else "FOUND"
            print(
                f"round {rounds} {name:10} seed {seed:<10} {inputs:>6} inputs {seconds:6.1f} s  {status}",
                flush=True,
            )
            if not ok:
                found.append(f"{name} (seed {seed}): {report}")
                print(f"      {report}", flush=True)
    print()
    print("examples run: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + f" ({rounds} rounds)")
    print(f"CLI runs that ended in an internal error: {internal_errors}")
    if found:
        print(f"found {len(found)}:")
        for f in found:
            print(f"  - {f}")
        return 1
    print("found nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
