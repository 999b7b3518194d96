import gzip
import json
import subprocess
import sys

import pytest

from tests.helpers import PENGUIN, RACCOON, framed, payloads
from tfrview.cli import main
from tfrview.core.output.writer import write_records


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "good.tfrecord"
    write_records(p, payloads(12))
    return p


@pytest.fixture
def bad(tmp_path):
    data, offs = framed(payloads(12))
    b = bytearray(data)
    b[offs[2] + 13] ^= 1  # bad data CRC in record 2
    p = tmp_path / "bad.tfrecord"
    p.write_bytes(bytes(b) + b"trailing junk")
    return p


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_clean_exit_0(capsys, good):
    code, out, _ = run(capsys, "verify", str(good))
    assert code == 0 and "OK  12 records" in out


def test_verify_problems_exit_1_and_json_schema(capsys, good, bad):
    code, out, _ = run(capsys, "verify", "--json", str(good), str(bad))
    assert code == 1
    doc = json.loads(out)
    assert set(doc) == {"files", "datasets", "totals"}
    f0, f1 = doc["files"]
    assert f0 == {
        "path": str(good),
        "compression": "none",
        "records": 12,
        "damaged_records": 0,
        "bytes": good.stat().st_size,
        "ok": True,
        "problems": [],
        "dataset": "good.tfrecord",
        "record_status": {"ok": 12, "damaged": 0, "header_damaged": 0, "unverified": 0},
    }
    assert doc["datasets"] == [
        {"name": "good.tfrecord", "files": [str(good)]},
        {"name": "bad.tfrecord", "files": [str(bad)]},
    ]
    assert doc["totals"] == {
        "files": 2,
        "unreadable_files": 0,
        "records": 23,
        "damaged_records": 1,
        "bytes": good.stat().st_size + bad.stat().st_size,
        "files_with_problems": 1,
        "problems": 2,
        "record_status": {"ok": 23, "damaged": 1, "header_damaged": 0, "unverified": 0},
    }
    assert f1["ok"] is False and f1["records"] == 11 and f1["damaged_records"] == 1
    kinds = [(p["kind"], p["record"]) for p in f1["problems"]]
    assert kinds == [("bad_data_crc", 2), ("trailing_bytes", None)]
    for p in f1["problems"]:
        assert set(p) - {"cause"} == {
            "kind",
            "offset",
            "length",
            "record",
            "message",
        }  # a cause where the bytes show one


def test_verify_missing_file_exit_2_one_line(capsys, good, tmp_path):
    code, out, err = run(capsys, "verify", str(good), str(tmp_path / "missing.tfrecord"))
    assert code == 2
    assert err.strip().count("\n") == 0 and "no such file" in err and "Traceback" not in err


def test_verify_gzip_offsets_are_stream_positions(capsys, tmp_path):
    data, offs = framed(payloads(5))
    b = bytearray(data)
    b[offs[3] + 13] ^= 1
    p = tmp_path / "x.gz"
    p.write_bytes(gzip.compress(bytes(b)))
    code, out, _ = run(capsys, "verify", "--json", str(p))
    f = json.loads(out)["files"][0]
    assert code == 1 and f["compression"] == "gzip"
    assert f["problems"][0]["offset"] == offs[3] + 12


def test_info_json(capsys):
    code, out, _ = run(capsys, "info", "--json", str(RACCOON))
    assert code == 0
    info = json.loads(out)["files"][0]
    assert info["records"] == 12 and info["payload_kinds"] == {"example": 12}
    assert info["features"]["image/encoded"]["types"] == ["bytes"]
    assert info["features"]["image/object/bbox/xmin"]["values_max"] == 2


def test_info_text_gzip(capsys):
    code, out, _ = run(capsys, "info", str(PENGUIN))
    assert code == 0 and "compression   gzip" in out and "records       234" in out
    assert "species" in out


def test_dump_json_lines(capsys):
    code, out, _ = run(capsys, "dump", "--json", "--records", "3:5", str(RACCOON))
    lines = [json.loads(x) for x in out.splitlines()]
    assert [d["record"] for d in lines] == [3, 4]
    d = lines[0]
    assert set(d) >= {"record", "offset", "length", "kind", "features"}
    assert d["kind"] == "example"
    assert d["features"]["image/object/class/text"] == {"type": "bytes_list", "values": ["raccoon"]}
    assert "base64" in d["features"]["image/encoded"]["values"][0]


def test_dump_text_elides_long_values(capsys, tmp_path):
    from tests.core.test_payload import make_example

    p = tmp_path / "long.tfrecord"
    write_records(p, [make_example(v=list(range(100)))])
    code, out, _ = run(capsys, "dump", str(p))
    assert "int64_list[100] 0 1 2 3 4 5 6 7 … 92 more" in out


def test_dump_bad_range(capsys, good):
    code, _, err = run(capsys, "dump", "--records", "x:y", str(good))
    assert code == 2 and "--records" in err


def test_index_write_and_check(capsys, good, tmp_path):
    out = tmp_path / "good.idx"
    code, text, _ = run(capsys, "index", str(good), "-o", str(out))
    assert code == 0 and out.exists() and len(out.read_text().splitlines()) == 12
    code, text, _ = run(capsys, "index", str(good), "--check", str(out))
    assert code == 0 and "matches" in text
    code, _, err = run(capsys, "index", str(good), "-o", str(out))
    assert code == 2 and "exists" in err


def test_salvage_cli(capsys, bad, tmp_path):
    out = tmp_path / "fixed.tfrecord"
    before = bad.read_bytes()
    code, text, _ = run(capsys, "salvage", str(bad), "-o", str(out))
    assert code == 0 and "wrote 11 intact records" in text
    assert bad.read_bytes() == before
    code, _, _ = run(capsys, "verify", str(out))
    assert code == 0


def test_salvage_refuses_input_as_output(capsys, bad):
    code, _, err = run(capsys, "salvage", str(bad), "-o", str(bad), "--force")
    assert code == 2 and "refusing" in err


def test_help_has_examples_for_every_command(capsys):
    for cmd in ("info", "verify", "dump", "index", "salvage", "install-desktop", "uninstall-desktop"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        out, _ = capsys.readouterr()
        assert "examples:" in out and f"tfrview {cmd}" in out


def test_headless_commands_never_import_qt(good):
    code = (
        "import sys; from tfrview.cli import main; rc = main(['verify', sys.argv[1]]);"
        "assert not [m for m in sys.modules if m.startswith('PySide6')], 'Qt loaded'; sys.exit(rc)"
    )
    r = subprocess.run([sys.executable, "-c", code, str(good)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_command_s_own_process_ends_at_once_with_its_code_its_output_and_its_store_closed(
    good, bad, tmp_path, capsys
):
    """`python -m tfrview` ends by os._exit once its answer is said (cli._exit_now): the exit code
    and every line of output arrive, piped; the result was stored and the store closed (its log
    checkpointed into the file, none left beside it)."""
    import os
    import sqlite3

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    r = subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", "-j", "1", "--json", str(good), str(bad)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert [f["ok"] for f in doc["files"]] == [True, False]
    store = tmp_path / "cache" / "tfrview" / "analysis"
    (db,) = store.glob("*.sqlite3")
    assert not list(store.glob("*-wal")) and not list(store.glob("*-journal"))
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM entries").fetchone()[0] == 2
    assert main(["verify", "--json", str(good), str(bad)]) == 1
    assert doc == json.loads(capsys.readouterr().out)  # what the in-process command says


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and "tfrview 0." in capsys.readouterr().out


def test_verify_checks_json_uses_the_same_problem_objects(capsys, tmp_path):
    from tests.core.test_payload import make_example

    p = tmp_path / "qa.tfrecord"
    pls = [
        make_example(
            **{
                "image/object/bbox/xmin": [0.1],
                "image/object/bbox/ymin": [0.1],
                "image/object/bbox/xmax": [0.5],
                "image/object/bbox/ymax": [0.5],
            }
        )
        for _ in range(6)
    ]
    pls[3] = make_example(
        **{
            "image/object/bbox/xmin": [0.1],
            "image/object/bbox/ymin": [0.1],
            "image/object/bbox/xmax": [1.5],
            "image/object/bbox/ymax": [0.5],
        }
    )
    write_records(p, pls)
    code, out, _ = run(capsys, "verify", "--json", str(p))
    assert code == 0 and json.loads(out)["files"][0]["ok"]
    code, out, _ = run(capsys, "verify", "--json", "--checks", str(p))
    f = json.loads(out)["files"][0]
    assert code == 1 and f["ok"] is False and f["records"] == 6
    (prob,) = f["problems"]
    assert set(prob) - {"cause"} == {"kind", "offset", "length", "record", "message"}
    assert prob["kind"] == "box_out_of_bounds" and prob["record"] == 3


def test_ctrl_c_while_the_command_loads_is_one_line(tmp_path):
    """A Ctrl-C before the command runs (the `tfrview` script still importing) says the one line
    and exits 130; a program that merely imports the package keeps Python's own Ctrl-C."""
    import signal
    import subprocess
    import sys

    body = (
        "import os, signal, time\n"
        "from tfrview.cli import _interrupt\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(10)\n"
    )
    for name, own in (("tfrview", True), ("other_program", False)):
        script = tmp_path / name
        script.write_text(body)
        done = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=60)
        if own:
            assert done.returncode == 130 and done.stderr == b"\rtfrview: interrupted\n", done.stderr
        else:
            assert done.returncode in (-signal.SIGINT, 1) and b"KeyboardInterrupt" in done.stderr
