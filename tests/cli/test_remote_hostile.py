"""Servers that misbehave (issues 25 and 26): every command ends within its timeout with a one-line
message that names the URL and what went wrong, never a hang, a traceback or runaway memory. The
servers are real ones on 127.0.0.1 (tests/remote_servers.py), started and stopped here."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fuzz import hostile as H
from tests.helpers import RACCOON, RACCOON_RECORDS
from tests.remote_servers import HostileHTTPServer

pytest.importorskip("aiohttp", reason="the remote extras are not installed (pip install -e '.[test]')")

QUICK = {"TFRVIEW_NET_TIMEOUT": "1"}  # the environment's own way to wait less: 1 s instead of 30
KILL_AFTER = 60  # far past any timeout here: a command still running then is a hang
RSS_BUDGET_MB = 300  # beyond the interpreter's own (tests/fuzz/test_fuzz_cli.py)


def _run(args: list[str], env: dict | None = None) -> tuple[int | None, str, str, float]:
    code, out, err, rss, _ = H.run_cli(args, timeout=KILL_AFTER, env={**os.environ, **QUICK, **(env or {})})
    return code, out, err, rss


def _said(code, out: str, err: str, command: str) -> str:
    """The one line a failed command said: the JSON error of `verify --json`, else stderr."""
    assert code == 2, f"{command}: exit {code} ({err[-300:]})"
    assert "Traceback" not in err and "internal error" not in err, err
    if command == "verify":
        files = json.loads(out)["files"]
        assert len(files) == 1 and not files[0]["ok"]
        return files[0]["error"]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tfrview: "), err
    return lines[0].removeprefix("tfrview: ")


def _commands(url: str, tmp: Path) -> dict[str, list[str]]:
    return {
        "info": ["info", url],
        "verify": ["verify", "--checks", "--json", url],
        "dump": ["dump", "--json", url],
        "salvage": ["salvage", url, "-o", str(tmp / "salvaged.tfrecord")],
        "repair": ["repair", url, "-o", str(tmp / "repaired.tfrecord")],
        "index": ["index", url, "-o", str(tmp / "data.idx")],
        "export": ["export", url, "--parquet", str(tmp / "facts.parquet")],
    }


def test_export_parquet_reads_a_url(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "facts.parquet"
    with HostileHTTPServer(RACCOON.read_bytes()) as srv:
        code, stdout, err, _ = _run(["export", srv.url(), "--parquet", str(out)])
    assert code == 0, err
    assert f"wrote {RACCOON_RECORDS} records" in stdout
    local = tmp_path / "data.tfrecord"
    local.write_bytes(RACCOON.read_bytes())
    code, _, err, _ = _run(["export", str(local), "--parquet", str(tmp_path / "local.parquet")])
    assert code == 0, err
    table, expected = pq.read_table(out), pq.read_table(tmp_path / "local.parquet")
    assert table.num_rows == RACCOON_RECORDS
    assert table.column("record").to_pylist() == list(range(RACCOON_RECORDS))
    assert set(table.column("file").to_pylist()) == {"data.tfrecord"}
    assert table.column_names == expected.column_names
    for name in ("offset", "size", "crc", "image_width", "image_height"):
        assert table.column(name).to_pylist() == expected.column(name).to_pylist(), name
