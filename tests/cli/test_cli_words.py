"""Issue 18.7: the CLI says why, in one line: `dump` of a file that is no TFRecord, a mistyped
command taken for a file name; and every `--json` output ends with a newline."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import payloads
from tfrview.cli import main, unknown_command
from tfrview.core.output.writer import write_records


def test_dump_of_a_text_file_says_why_it_exits_1(capsys, tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("hello world\nthis is text\n")
    assert main(["dump", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"tfrview: {path}: not_tfrecord: not a TFRecord file: it looks like text")
    assert err.count("\n") == 1


def test_a_mistyped_command_is_said_so_not_opened_as_a_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["frobnicate", "x"]) == 2  # ("evlauate" was this word: `evaluate` is a command now)
    err = capsys.readouterr().err
    assert err.startswith("tfrview: unknown command 'frobnicate' (commands: info, verify, dump,")
    assert main(["verfiy", "x"]) == 2
    assert (
        capsys.readouterr().err
        == "tfrview: unknown command 'verfiy' (did you mean verify?); no file of that name either\n"
    )
    (tmp_path / "verfiy").write_bytes(b"")  # a file of that name: it is opened, not refused
    assert unknown_command("verfiy") is None
    assert unknown_command("missing.tfrecord") is None  # a path: the window says it is missing
    assert unknown_command("train-*") is None and unknown_command("gs://bucket/x") is None


@pytest.mark.parametrize(
    "args",
    [["verify", "--json"], ["verify", "--json", "--checks"], ["info", "--json"], ["dump", "--json"]],
)
def test_every_json_output_ends_with_a_newline(tmp_path, args):
    path = tmp_path / "good.tfrecord"
    write_records(path, payloads(3))
    r = subprocess.run([sys.executable, "-m", "tfrview", *args, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("\n") and not r.stdout.endswith("\n\n")
    for line in r.stdout.splitlines():
        json.loads(line)


def test_repair_json_ends_with_a_newline(tmp_path):
    path = tmp_path / "good.tfrecord"
    write_records(path, payloads(3))
    r = subprocess.run(
        [sys.executable, "-m", "tfrview", "repair", "--json", str(path), "-o", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and r.stdout.endswith("}\n") and json.loads(r.stdout)["written"] == 3
