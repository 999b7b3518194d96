"""A big file's deep pass runs in parts, each framing the file itself: a file that grows between
them must be said to have changed while it was read, not crash the merge (issue 26.5: a broadcast
ValueError in merge._joined reached the CLI as an internal error)."""

from __future__ import annotations

import json
import threading
import time

from tests.fuzz import hostile as H
from tests.helpers import framed, payloads
from tfrview.core.analysis.merge import merge
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard
from tfrview.core.tfrecord.framing import encode_record


def test_parts_framed_on_two_versions_of_a_file_merge_to_one_line_error(tmp_path):
    data, _ = framed(payloads(120))
    path = tmp_path / "grows.tfrecord"
    path.write_bytes(data)
    tasks = [
        ShardTask(str(path), 0, deep=True, read_cache=False, write_cache=False, part=k, parts=2)
        for k in (0, 1)
    ]
    first = analyze_shard(tasks[0])
    with open(path, "ab") as fh:  # a writer appends between the two parts
        fh.write(b"".join(encode_record(b"appended %d" % i) for i in range(50)))
    second = analyze_shard(tasks[1])
    assert (len(first.offsets), len(second.offsets)) == (120, 170)
    (joined,) = merge([second, first]).shards
    assert joined.error == (
        f"{path}: the file changed while it was read (one part of its pass framed 120 records, "
        "another 170); read it again"
    )
    assert joined.deep is None and joined.problems == []
    again = merge([analyze_shard(t) for t in tasks]).shards[0]  # read again: one answer
    assert again.error is None and again.records == 170 and again.deep is not None


def test_the_cli_says_a_file_grew_while_its_parts_were_read(tmp_path):
    """A 160 MB sparse record (two parts of the deep pass; no disk) that a writer appends to while
    `verify --checks` and `info --all` read it: one line, exit 2, no traceback."""
    path = H.big_sparse_record(tmp_path / "grows.tfrecord", 160 << 20)
    stop = threading.Event()

    def append() -> None:
        with open(path, "ab", buffering=0) as fh:
            i = 0
            while not stop.is_set():
                fh.write(encode_record(b"appended %d" % i))
                i += 1
                time.sleep(0.002)

    writer = threading.Thread(target=append, daemon=True)
    writer.start()
    try:
        for command in (["verify", "--checks"], ["info", "--all"], ["verify", "--checks", "--json"]):
            code, out, err, _, _ = H.run_cli([*command, "-j", "1", str(path)], timeout=120)
            said = json.loads(out)["files"][0]["error"] if "--json" in command else err.strip()
            assert code == 2 and "Traceback" not in err and "internal error" not in err, (command, err)
            assert "the file changed while it was read" in said and "\n" not in said, (command, said)
    finally:
        stop.set()
        writer.join()
