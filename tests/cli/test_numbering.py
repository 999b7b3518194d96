"""Issue 18: what the trial found hidden. A split with a missing shard is never called clean."""

from __future__ import annotations

import json

from tests.helpers import framed, payloads
from tfrview.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _split_without_2(tmp_path):
    data, _ = framed(payloads(3))
    d = tmp_path / "p"
    d.mkdir()
    for i in (0, 1, 3):
        (d / f"train-{i:05d}-of-00004").write_bytes(data)
    return d


def test_verify_names_a_missing_shard_in_text_json_and_exit_status(capsys, tmp_path):
    d = _split_without_2(tmp_path)
    code, out, _ = run(capsys, "verify", "-j", "1", str(d))
    assert code == 1
    lines = out.splitlines()
    assert sum(" OK " in x for x in lines) == 3
    assert f"{d / 'train-00002-of-00004'}: MISSING  1 problem" in lines
    assert any(x.startswith("  missing_shard: train-00002-of-00004 is not there") for x in lines)

    code, out, _ = run(capsys, "verify", "-j", "1", "--json", str(d))
    assert code == 1
    files = json.loads(out)["files"]
    gone = [f for f in files if not f["ok"]]
    assert [f["path"] for f in gone] == [str(d / "train-00002-of-00004")]
    assert gone[0]["missing"] is True and gone[0]["records"] == 0
    (p,) = gone[0]["problems"]
    assert p["kind"] == "missing_shard" and p["record"] is None and "4 shards" in p["message"]
    assert sum(f["records"] for f in files) == 9


def test_a_whole_split_is_clean_and_info_and_dump_name_the_gap(capsys, tmp_path):
    d = _split_without_2(tmp_path)
    (d / "train-00002-of-00004").write_bytes(framed(payloads(3))[0])
    code, out, _ = run(capsys, "verify", "-j", "1", "--json", str(d))
    assert code == 0 and all(f["ok"] for f in json.loads(out)["files"])
    (d / "train-00002-of-00004").unlink()

    code, out, _ = run(capsys, "info", "-j", "1", "--json", str(d))
    files = json.loads(out)["files"]
    assert [f["problems"][0]["kind"] for f in files if f.get("missing")] == ["missing_shard"]
    code, out, _ = run(capsys, "info", "-j", "1", str(d))
    assert "train-00002-of-00004 is not there" in out

    code, out, err = run(capsys, "dump", "--json", str(d))
    assert code == 1 and len(out.splitlines()) == 9
    assert "train-00002-of-00004 is not there" in err
