"""Servers that misbehave (issues 25 and 26): every command ends within its timeout with a one-line
message that names the URL and what went wrong, never a hang, a traceback or runaway memory. The
servers are real ones on 127.0.0.1 (tests/remote_servers.py), started and stopped here."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from tests.fuzz import hostile as H
from tests.helpers import RACCOON, RACCOON_RECORDS, framed, payloads
from tests.remote_servers import FullBacklogServer, HostileHTTPServer, SilentServer

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


@pytest.mark.parametrize("command", ["info", "verify", "dump", "salvage", "repair", "index", "export"])
def test_a_server_that_never_answers_is_a_timeout_naming_its_limit(tmp_path, command):
    with SilentServer() as srv:
        url = srv.url()
        code, out, err, _ = _run(_commands(url, tmp_path)[command])
        assert srv.accepted >= 1  # it was asked, and kept silent
    said = _said(code, out, err, command)
    assert said.startswith(f"{url}: timed out") and "limits.NET_READ_TIMEOUT" in said, said
    assert "not found" not in said
    assert not any(tmp_path.iterdir())  # nothing written, not even a temporary file


def test_a_connection_never_made_is_a_connect_timeout():
    with FullBacklogServer() as srv:
        url = srv.url()
        code, out, err, _ = _run(["info", url])
    said = _said(code, out, err, "info")
    assert said.startswith(f"{url}: timed out") and "limits.NET_CONNECT_TIMEOUT" in said, said


def test_a_server_that_stalls_mid_body_is_a_read_timeout(tmp_path):
    with HostileHTTPServer(RACCOON.read_bytes(), "stall_body") as srv:
        code, out, err, _ = _run(["info", srv.url()])
    assert _said(code, out, err, "info") == (
        f"{srv.url()}: timed out: the server sent nothing for 1 s (limits.NET_READ_TIMEOUT; TFRVIEW_NET_TIMEOUT sets it)"
    )


def test_s3_on_a_silent_endpoint_is_a_timeout_too():
    pytest.importorskip("s3fs")
    with SilentServer() as srv:
        env = {
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{srv.port}",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        code, out, err, _ = _run(["info", "s3://bucket/x.tfrecord"], env)
    said = _said(code, out, err, "info")
    assert said.startswith("s3://bucket/x.tfrecord: timed out") and "limits.NET_" in said, said


def test_the_timeout_comes_from_the_environment_and_a_bad_value_is_ignored(monkeypatch, caplog):
    from tfrview.core import limits

    monkeypatch.setenv("TFRVIEW_NET_TIMEOUT", "2.5")
    assert limits.net_timeouts() == (2.5, 2.5, limits.NET_REQUEST_TIMEOUT)
    monkeypatch.setenv("TFRVIEW_NET_TIMEOUT", "600")  # a slow link: the connect timeout stays as it was
    assert limits.net_timeouts() == (limits.NET_CONNECT_TIMEOUT, 600.0, 600.0)
    for bad in ("soon", "0", "-1", "nan"):
        monkeypatch.setenv("TFRVIEW_NET_TIMEOUT", bad)
        with caplog.at_level(logging.WARNING, logger="tfrview.core.limits"):
            caplog.clear()
            assert limits.net_timeouts() == (
                limits.NET_CONNECT_TIMEOUT,
                limits.NET_READ_TIMEOUT,
                limits.NET_REQUEST_TIMEOUT,
            )
        assert "TFRVIEW_NET_TIMEOUT" in caplog.text


@pytest.mark.parametrize("data", [RACCOON.read_bytes(), framed(payloads(5))[0]], ids=["833KB", "255B"])
def test_a_size_the_server_does_not_serve_is_said_in_bounded_memory(data):
    baseline = _run(["info", str(RACCOON)])[3]
    claim = 1 << 50
    with HostileHTTPServer(data, "lie_size", claim=claim) as srv:
        url = srv.url()
        for command in (["info"], ["verify", "--json"], ["dump", "--json"]):
            code, out, err, rss = _run([*command, url])
            said = _said(code, out, err, command[0])
            assert said == f"{url}: the server claims {claim:,} bytes but serves {len(data):,}", said
            assert rss - baseline < RSS_BUDGET_MB, (
                f"{command}: {rss:.0f} MB peak (baseline {baseline:.0f} MB)"
            )


def test_a_short_read_from_a_server_that_holds_the_claimed_bytes_is_not_called_a_lie():
    """The claim is checked, not assumed wrong: a server that has the last claimed byte sent a short
    answer for another reason (the object changed, a proxy cut it)."""
    from tfrview.core.tfrecord.remote import RemoteBytes, RemoteInfo, short_answer

    data = framed(payloads(50))[0]
    with HostileHTTPServer(data) as srv:
        rb = RemoteBytes(RemoteInfo(srv.url(), len(data), "etag=x"))
        exc = short_answer(rb.url, rb.fs, rb.path, len(data), 100, 1000, 100)
        rb.close()
    assert (
        str(exc)
        == f"{srv.url()}: the server sent 100 bytes for a range of 1,000; the object may have changed since it was opened"
    )


def test_a_large_object_from_a_server_that_ignores_ranges_is_refused_at_its_headers():
    """Each read would bring the whole object again (a scan: the object times the fetches); one
    under the limit is read whole, as before."""
    import tracemalloc

    from tfrview.core.limits import NET_WHOLE_OBJECT_BYTES
    from tfrview.core.tfrecord.dataset import Dataset

    data = framed([b"%07d" % i + b"z" * 1000 for i in range(NET_WHOLE_OBJECT_BYTES // 1000 + 100)])[0]
    with HostileHTTPServer(data, "ignore_range") as srv:
        tracemalloc.start()
        try:
            with Dataset.open([srv.url()]) as ds:
                error = ds.files[0].error
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert srv.gets == 1  # not tried again
    assert error == (
        f"{srv.url()}: the server ignores byte ranges: it sends the whole object ({len(data):,} bytes) for "
        "each read, over the 16 MB tfrview accepts so (limits.NET_WHOLE_OBJECT_BYTES)"
    )
    assert peak < len(data) // 2  # the body was never read

    small = framed(payloads(200))[0]
    with HostileHTTPServer(small, "ignore_range") as srv, Dataset.open([srv.url()]) as ds:
        assert ds.files[0].error is None and sum(1 for _ in ds.scan()) >= 1 and ds.count == 200
        assert ds.read(199) == payloads(200)[199]


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


def test_a_refused_port_is_connection_refused_not_404():
    from tests.remote_servers import free_port

    url = f"http://127.0.0.1:{free_port()}/data.tfrecord"  # nothing listens there
    for command in (["info"], ["verify", "--json"]):
        code, out, err, _ = _run([*command, url])
        said = _said(code, out, err, command[0])
        assert said.startswith(f"{url}: connection refused") and "404" not in said, said
