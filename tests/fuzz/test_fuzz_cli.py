"""The CLI against hostile paths and files, run as a user runs it (a child process): no traceback,
no hang, bounded memory, one-line messages, JSON that always parses, and inputs left unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings

from tests.fuzz import hostile as H
from tests.fuzz.strategies import (
    EXAMPLES,
    compression_bombs,
    damaged_files,
    frame,
    hostile_payloads,
    stripped_cr_files,
)
from tests.helpers import RACCOON, payloads_of

RSS_BUDGET_MB = 300  # beyond the interpreter's own, whatever the input (the promise)
# Every hostile path through every command costs ~0.7 min of make test's five on 2 cores: three
# commands (text, checks, JSON) stay in it; the rest run in `make test-slow` and `bench/fuzz.py`.
_SLOW = pytest.mark.slow
COMMANDS = (
    pytest.param(["info"], id="info"),
    pytest.param(["info", "--json"], id="info --json", marks=_SLOW),
    pytest.param(["verify"], id="verify", marks=_SLOW),
    pytest.param(["verify", "--json"], id="verify --json", marks=_SLOW),
    pytest.param(["verify", "--checks"], id="verify --checks"),
    pytest.param(["verify", "--checks", "--json"], id="verify --checks --json", marks=_SLOW),
    pytest.param(["dump", "--max-values", "3"], id="dump --max-values 3", marks=_SLOW),
    pytest.param(["dump", "--json"], id="dump --json"),
)


@pytest.fixture(scope="module")
def baseline_mb() -> float:
    return H.run_cli(["info", str(RACCOON)])[3]


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None


def check_run(args: list[str], baseline: float, inputs: list[Path] = (), timeout: float = 60) -> tuple:
    """Run one command and assert the contract every command keeps on any input."""
    before = {p: _digest(p) for p in inputs}
    code, out, err, rss, seconds = H.run_cli(args, timeout=timeout)
    what = " ".join(repr(a) for a in args)
    # (bench/fuzz.py counts these)
    assert "internal error" not in err, f"internal error of the CLI: {what}: {err[-600:]}"
    assert code in (0, 1, 2), f"{what}: exit {code} ({err[-300:]})"
    assert "Traceback" not in err, f"{what}: {err[-600:]}"
    for line in err.splitlines():
        assert line.startswith(("tfrview", "not using", "label map:")), f"{what}: stray stderr line {line!r}"
        assert "\x1b" not in line and "\r" not in line, f"{what}: raw control characters on stderr"
    if "--json" in args and args[0] == "verify":
        doc = json.loads(out)  # exactly one object, whatever happened: the files, or why there are none
        assert set(doc) >= {"files"} or set(doc) == {"error"}
    elif "--json" in args and args[0] == "info":
        json.loads(out)
    elif "--json" in args:
        for line in out.splitlines():
            json.loads(line)
    else:
        assert "\x1b" not in out and "\r" not in out, f"{what}: raw control characters on stdout"
    assert rss - baseline < RSS_BUDGET_MB, f"{what}: {rss:.0f} MB peak (baseline {baseline:.0f} MB)"
    for p, d in before.items():
        assert _digest(p) == d, f"{what}: the input {p} changed"
    return code, out, err


# --- hostile paths -------------------------------------------------------------------------------------


@pytest.fixture
def hostile_paths(tmp_path) -> dict[str, Path]:
    good = tmp_path / "good.tfrecord"
    good.write_bytes(b"".join(frame(b"record %d" % i) for i in range(5)))
    loop = tmp_path / "loop.tfrecord"
    os.symlink(loop.name, loop)
    (tmp_path / "dir.tfrecord").mkdir()
    newline = tmp_path / "new\nline\x1b[2J.tfrecord"
    newline.write_bytes(good.read_bytes())
    dangling = tmp_path / "dangling.tfrecord"
    os.symlink("nowhere", dangling)
    return {
        "fifo": H.fifo(tmp_path / "fifo.tfrecord"),
        "loop": loop,
        "dir": tmp_path / "dir.tfrecord",
        "newline": newline,
        "dangling": dangling,
        "zero": Path("/dev/zero"),
        "urandom": Path("/dev/urandom"),
        "missing": tmp_path / "missing.tfrecord",
        "glob": tmp_path / "nothing-*.tfrecord",
        "good": good,
    }


@pytest.mark.parametrize("command", COMMANDS)
def test_hostile_paths_get_one_line_and_no_hang(hostile_paths, baseline_mb, command):
    for name, path in hostile_paths.items():
        code, out, err = check_run([*command, str(path)], baseline_mb, timeout=30)
        if name in ("good", "newline"):
            assert code == 0, err
            continue
        assert code == 2, f"{name}: {err}"
        said = err
        if "--json" in command and command[0] != "dump":  # the error is in the one JSON object
            said = json.loads(out)["files"][0]["error"]
        elif command[0] != "dump" or name not in ("missing",):
            assert len(err.strip().splitlines()) == 1, f"{name}: {err}"
        if name in ("fifo", "zero", "urandom"):
            assert "not a regular file" in said, said


def test_a_fifo_fed_a_valid_file_is_refused_not_reported_empty(tmp_path, baseline_mb):
    fifo = H.fifo(tmp_path / "fed.tfrecord")
    data = b"".join(frame(b"x%d" % i) for i in range(40))

    def feed():
        try:
            fd = os.open(fifo, os.O_WRONLY)
            os.write(fd, data)
            os.close(fd)
        except OSError:
            pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    code, out, err = check_run(["verify", str(fifo)], baseline_mb)
    assert code == 2 and "not a regular file (a named pipe)" in err
    os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # let the feeder go


def test_hostile_output_paths(tmp_path, baseline_mb):
    good = tmp_path / "good.tfrecord"
    good.write_bytes(b"".join(frame(b"r%d" % i) for i in range(3)))
    loop = tmp_path / "loop.out"
    os.symlink(loop.name, loop)
    code, _, err = check_run(["salvage", str(good), "-o", str(loop)], baseline_mb, [good])
    assert code == 2 and "exists" in err  # a symlink loop is a name that exists: never written through
    # 255 bytes, the most a name may have: its temporary name must fit too
    long = tmp_path / ("n" * 246 + ".tfrecord")
    code, out, err = check_run(["salvage", str(good), "-o", str(long)], baseline_mb, [good])
    assert code == 0 and long.is_file(), err
    code, _, err = check_run(["salvage", str(good), "-o", str(tmp_path / "no-such-dir" / "x")], baseline_mb)
    assert code == 2 and "no-such-dir/x: cannot write" in err and ".partial" not in err
    code, _, err = check_run(["salvage", str(good), "-o", str(good), "--force"], baseline_mb, [good])
    assert code == 2 and "input" in err


# --- hostile files ------------------------------------------------------------------------------------


@settings(max_examples=max(3, EXAMPLES // 10), deadline=None)
@given(damaged_files())
def test_damaged_files_through_every_command(tmp_path_factory, baseline_mb, case):
    path = tmp_path_factory.mktemp("d") / "damaged.tfrecord"
    path.write_bytes(case.data)
    for command in (["verify", "--json"], ["dump", "--json"], ["info"]):
        check_run([*command, str(path)], baseline_mb, [path])


@pytest.mark.slow  # make test-slow (the suite stays under 5 min on 2 cores)
@settings(max_examples=max(3, EXAMPLES // 10), deadline=None)
@given(hostile_payloads)
def test_hostile_payloads_through_every_command(tmp_path_factory, baseline_mb, payload):
    path = tmp_path_factory.mktemp("p") / "hostile.tfrecord"
    path.write_bytes(frame(payload) + frame(b""))
    for command in (["verify", "--checks"], ["dump"], ["dump", "--json"], ["info"]):
        check_run([*command, str(path)], baseline_mb, [path])


@pytest.mark.slow  # make test-slow and bench/fuzz.py: the in-process fuzz of the same inputs stays in make test
@settings(max_examples=max(2, EXAMPLES // 20), deadline=None)
@given(stripped_cr_files())
def test_stripped_cr_files_through_the_commands_that_search(tmp_path_factory, baseline_mb, case):
    """Records that lost CR bytes in the counts that made the search explode: the commands that
    reach it answer, and the repair keeps the good records after them."""
    folder = tmp_path_factory.mktemp("s")
    path, out = folder / "stripped.tfrecord", folder / "repaired.tfrecord"
    path.write_bytes(case.data)
    for command in (["info"], ["verify", "--checks", "--json"], ["repair", "-o", str(out)]):
        check_run([*command, str(path)], baseline_mb, [path])
    kept = payloads_of(out)
    assert all(g in kept for g in case.good), case.ops


@pytest.mark.slow  # make test-slow and bench/fuzz.py: the in-process fuzz of the same inputs stays in make test
@settings(max_examples=max(2, EXAMPLES // 30), deadline=None)
@given(compression_bombs())
def test_compression_bombs_through_the_cli_count_their_records(tmp_path_factory, baseline_mb, case):
    """A bomb-shaped stream's records are all counted by every command that counts them."""
    path = tmp_path_factory.mktemp("b") / "bomb.tfrecord.gz"
    path.write_bytes(case.data)
    code, out, err = check_run(["verify", "--json", str(path)], baseline_mb, [path])
    doc = json.loads(out)["files"][0]
    assert (doc["records"], doc["damaged_records"]) == (case.records, 0), f"{case.ops}: {doc}"
    assert code == (0 if case.records else 1), f"{case.ops}: {doc}"  # zeros alone: not a TFRecord
    code, out, err = check_run(["info", "--json", str(path)], baseline_mb, [path])
    assert json.loads(out)["files"][0]["records"] == case.records, case.ops
    if case.records:
        code, out, err = check_run(["dump", "--json", "--records", "-1", str(path)], baseline_mb, [path])
        last = json.loads(out)
        assert last["record"] == case.records - 1 and "status" not in last, f"{case.ops}: {out[:300]}"
