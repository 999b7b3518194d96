"""Remote splits of many small objects (issue 19.5): a task's objects are fetched many at a time
(`remote.fetch_ahead`), against real servers started here (moto's S3 behind a latency, the Range
HTTP server, hostile servers). The answers are those of the sequential path; a failure is its own
object's; a stalling server still times out; memory stays within in flight x object size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

from tests.helpers import RACCOON, framed, payloads_of
from tests.remote_servers import (
    HostileHTTPServer,
    SilentServer,
    http_requests,
    http_server,
    s3_requests,
    s3_server,
)

pytest.importorskip("fsspec", reason="the remote extras are not installed (pip install -e '.[test]')")

TFRVIEW = [sys.executable, "-m", "tfrview"]
SHARDS = 24


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    """24 small shards of raccoon Examples (each shard its own records); shard 5 has a bad data CRC."""
    root = tmp_path_factory.mktemp("many")
    payloads = payloads_of(RACCOON)
    for k in range(SHARDS):
        data, offs = framed([payloads[(k + j) % len(payloads)] for j in range(2 + k % 3)])
        b = bytearray(data)
        if k == 5:
            b[offs[1] + 40] ^= 0x01
        (root / f"train-{k:05d}-of-{SHARDS:05d}.tfrecord").write_bytes(bytes(b))
    return root


def _run(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*TFRVIEW, *args], capture_output=True, text=True, timeout=180, env={**os.environ, **(env or {})}
    )


def _without_paths(out: str) -> dict:
    d = json.loads(out)
    for f in d["files"]:
        f["path"] = f["path"].rsplit("/", 1)[-1]
    for g in d["datasets"]:
        g["files"] = [p.rsplit("/", 1)[-1] for p in g["files"]]
    return d


def _s3(env: dict):
    """An s3fs client of the server `env` points at (this process's environment left alone)."""
    import fsspec

    return fsspec.filesystem(
        "s3",
        skip_instance_cache=True,
        endpoint_url=env["AWS_ENDPOINT_URL"],
        key=env["AWS_ACCESS_KEY_ID"],
        secret=env["AWS_SECRET_ACCESS_KEY"],
    )


def _upload(env: dict, root: Path, prefix: str) -> None:
    fs = _s3(env)
    fs.mkdir(prefix.split("/")[0])
    files = sorted(root.iterdir())
    fs.put([str(p) for p in files], [f"{prefix}/{p.name}" for p in files])


@pytest.mark.parametrize("jobs", ["1", pytest.param("2", marks=pytest.mark.slow)])  # 2: make test-slow
def test_many_small_objects_on_s3_answer_as_the_local_files_with_one_request_each(many, tmp_path, jobs):
    local = _run("verify", "--json", str(many))
    assert local.returncode == 1 and local.stdout
    with s3_server(latency=0.05) as env:
        _upload(env, many, "bucket/split")
        before = s3_requests(env)
        remote = _run(
            "verify",
            "--json",
            "s3://bucket/split/",
            "--jobs",
            jobs,
            env={**env, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        )
        after = s3_requests(env)
    assert remote.returncode == 1, remote.stderr
    assert _without_paths(remote.stdout) == _without_paths(local.stdout)
    # no size asked (the listing said it), each object read whole once, and the bad record once more
    assert after.get("HEAD", 0) == before.get("HEAD", 0)
    assert after["GET range"] - before.get("GET range", 0) == SHARDS + 1
    assert after["in_flight_max"] > 1  # many in flight, not one round trip after another


def test_a_failure_among_many_is_said_for_that_object_alone(many, monkeypatch, tmp_path):
    """An object listed, then gone before it is read: its own 404, in the words of the sequential
    path; every other object of the task read whole."""
    from tfrview.core.analysis.pool import run_tasks
    from tfrview.core.analysis.shard import _analyze, plan
    from tfrview.core.tfrecord import remote
    from tfrview.core.tfrecord.dataset import expand_paths

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with s3_server(latency=0.0) as env:
        _upload(env, many, "gone/split")
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        paths = [str(p) for p in expand_paths(["s3://gone/split/"])]
        victim = paths[7]
        _s3(env).rm(victim[len("s3://") :])
        tasks = plan(paths, False, read_cache=False, write_cache=False)
        before = s3_requests(env)
        sent = remote.direct_gets
        results = {r.path: r for r in run_tasks(tasks, jobs=1)}
        after = s3_requests(env)
        direct = remote.direct_gets - sent
        alone = _analyze(tasks[7])  # the sequential path: no fetch ahead for one file
        _odd_keys_by_direct_gets(env, many, monkeypatch)
    # each once, the one gone too, and shard 5's bad record once more (fetched again before it is damage)
    assert after["GET range"] - before.get("GET range", 0) == SHARDS + 1
    assert after.get("HEAD", 0) == before.get("HEAD", 0)
    assert results[victim].error == alone.error
    assert results[victim].error.startswith(victim) and "not found (404)" in results[victim].error
    others = [r for p, r in results.items() if p != victim]
    assert len(others) == SHARDS - 1 and all(r.error is None and r.records >= 1 for r in others)
    assert direct == SHARDS  # every object by a direct GET (botocore's signer, not its client)


def _odd_keys_by_direct_gets(env: dict, many: Path, monkeypatch) -> None:
    """The direct GETs reach every key as botocore would: spaces, '+', '%', '=', '~', non-ASCII
    and a deep prefix; each object once, its bytes whole, no request through s3fs; a key gone
    since its listing is said not found, in the sequential path's words. Fetched again, the kept
    bytes answer (read from their files when none is held open: past limits.REMOTE_HANDED_MAX)."""
    from tfrview.core.tfrecord import remote

    names = [
        "a b.tfrecord",
        "c+d.tfrecord",
        "e%20f.tfrecord",
        "g=h~i.tfrecord",
        "ünï-çødé.tfrecord",
        "j/k/l.tfrecord",
    ]
    data = {n: (many / f"train-{k:05d}-of-{SHARDS:05d}.tfrecord").read_bytes() for k, n in enumerate(names)}
    fs = _s3(env)
    fs.mkdir("odd")
    for n, b in data.items():
        fs.pipe(f"odd/x/{n}", b)
    gone = "s3://odd/x/gone.tfrecord"
    fs.pipe(gone[5:], b"0" * 20)
    urls = [f"s3://odd/x/{n}" for n in names]
    remote.expand("s3://odd/x/**")  # listed: sizes and ETags, no HEAD
    fs.rm(gone[5:])
    before, sent = s3_requests(env), remote.direct_gets
    with remote.fetch_ahead([(u, None) for u in [*urls, gone]]):
        got = [remote.fetched_whole(u) for u in urls]
        with pytest.raises(remote.NetworkError) as missing:
            remote.fetched_whole(gone)
    after = s3_requests(env)
    assert [g[1] if g else None for g in got] == [data[n] for n in names]
    assert remote.direct_gets - sent == len(urls) + 1  # every object by a direct GET
    assert after["GET range"] - before.get("GET range", 0) == len(urls) + 1  # and nothing asked twice
    assert after.get("HEAD", 0) == before.get("HEAD", 0)
    assert str(missing.value) == f"{gone}: not found (404)"
    monkeypatch.setattr(remote, "REMOTE_HANDED_MAX", 0)
    with remote.fetch_ahead([(u, None) for u in urls]):
        again = [remote.fetched_whole(u) for u in urls]
    assert [g[1] if g else None for g in again] == [data[n] for n in names]
    assert s3_requests(env)["GET range"] == after["GET range"]  # nothing asked: every byte kept


@pytest.mark.parametrize("server", ["stall_body", "silent"])
def test_a_stalling_server_times_out_with_many_in_flight(server, monkeypatch, tmp_path):
    """40 objects of a server that stalls: each fails with the timeout that names its limit, and
    the task ends (each request within its own timeout, many at once), never hangs."""
    from tfrview.core.analysis.results import ShardTask
    from tfrview.core.analysis.shard import analyze_batch

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TFRVIEW_NET_TIMEOUT", "1")
    data, _ = framed(payloads_of(RACCOON)[:3])
    srv = HostileHTTPServer(data, "stall_body") if server == "stall_body" else SilentServer()
    with srv:
        tasks = [
            ShardTask(srv.url(f"s{k:03d}.tfrecord"), k, read_cache=False, write_cache=False)
            for k in range(40)
        ]
        done: list = []
        worker = threading.Thread(target=lambda: done.append(analyze_batch(tasks)), daemon=True)
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), "the task hung on a stalling server"
        asked = srv.gets if server == "stall_body" else srv.accepted
    results = done[0]
    assert len(results) == 40
    # each object asked once (a silent server: one size request, HEAD then GET), never again by its reader
    assert asked <= (40 if server == "stall_body" else 80)
    for t, r in zip(tasks, results, strict=True):
        assert r.error is not None and r.error.startswith(t.path), r.error
        assert ": timed out: " in r.error and "(limits.NET_" in r.error  # its limit named


def test_memory_in_flight_is_bounded_by_requests_times_object_size(tmp_path, monkeypatch):
    """24 objects of 1 MB with 4 in flight: the fetched bytes held at once stay near 4 MB, not 24;
    an object over limits.NET_SMALL_OBJECT_BYTES is not fetched ahead (it is read as it is scanned)."""
    from tfrview.core import limits
    from tfrview.core.tfrecord.remote import RemoteBytes, fetch_ahead, info_of

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(limits, "NET_IN_FLIGHT", 4)
    monkeypatch.setattr(limits, "NET_SMALL_OBJECT_BYTES", 2 << 20)
    root = tmp_path / "objects"
    root.mkdir()
    for k in range(24):
        (root / f"o{k:02d}.bin").write_bytes(os.urandom(1 << 20))
    (root / "big.bin").write_bytes(os.urandom(3 << 20))
    with http_server(root, latency=0.05) as base:
        urls = [f"{base}/o{k:02d}.bin" for k in range(24)] + [f"{base}/big.bin"]
        info_of(urls[0])  # the back-end's client made before the measure
        tracemalloc.start()
        try:
            with fetch_ahead([(u, None) for u in urls]):
                firsts = [RemoteBytes(info_of(u)).pread(0, 4) for u in urls[:24]]
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        stats = http_requests(base)
    assert firsts == [(root / f"o{k:02d}.bin").read_bytes()[:4] for k in range(24)]
    # the server counts a request until its handler returns, which on a loaded machine can trail the
    # client's last byte past the next request's start: one over at most, never the 24 of an unbounded fetch
    assert stats["in_flight_max"] <= 4 + 1
    assert stats["ranges"] == 24  # each small object once, whole; the big one not fetched ahead
    assert peak < 10 << 20, f"{peak / 2**20:.1f} MB held at once"


def test_a_remembered_filesystem_gives_the_paths_fsspec_gives(monkeypatch):
    """`remote.filesystem` remembers a back-end by scheme and host (fsspec's lookup costs ~0.7 ms,
    twice an object): the paths are fsspec's own, and a URL that carries options is fsspec's alone."""
    import fsspec.core

    from tfrview.core.tfrecord import remote

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    urls = [
        "s3://bucket/a/x-00000-of-00002.tfrecord",
        "s3://bucket/a/x-00001-of-00002.tfrecord",
        "s3://other/b.tfrecord",
        "http://127.0.0.1:9/d/e.tfrecord",
        "https://example.org",
    ]
    got = [remote.filesystem(u) for u in urls]
    assert [p for _, p in got] == [
        "bucket/a/x-00000-of-00002.tfrecord",
        "bucket/a/x-00001-of-00002.tfrecord",
        "other/b.tfrecord",
        "http://127.0.0.1:9/d/e.tfrecord",
        "https://example.org",
    ]
    assert got[0][0] is got[1][0]
    for u, (fs, path) in zip(urls, got, strict=True):
        assert remote.filesystem(u) == (fs, path)
        assert path == fsspec.core.url_to_fs(u)[1]
    versioned = "s3://bucket/a/x.tfrecord?versionId=3"
    remembered = dict(remote._fs_memo)
    assert (
        remote.filesystem(versioned)[1] == fsspec.core.url_to_fs(versioned, **remote._timeouts_for("s3"))[1]
    )
    assert remote._fs_memo == remembered  # asked of fsspec, not remembered


def test_a_second_s3_server_in_one_process_is_the_one_asked(tmp_path, monkeypatch, capsys):
    """fsspec keeps each filesystem it makes, keyed by its arguments alone: a second server (another
    AWS_ENDPOINT_URL) was asked through the first one's instance ("connection refused" once that
    one had stopped). Two servers, one after the other, each on its own port, each holding its own
    file under the same bucket and name (a plain HTTP server of a folder answers S3's path-style
    HEAD and ranged GET of an object, as moto would, without moto's seconds of start-up)."""
    pytest.importorskip("s3fs")
    from tests.cli.test_cli import run
    from tfrview.core.output.writer import write_records

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    said = []
    for n in (3, 5):  # a file of n records on each server
        root = tmp_path / f"server{n}"
        (root / "data").mkdir(parents=True)
        write_records(root / "data" / "x.tfrecord", [b"r%d" % i for i in range(n)])
        with http_server(root) as base:
            monkeypatch.setenv("AWS_ENDPOINT_URL", base)
            code, out, err = run(capsys, "verify", "--json", "s3://data/x.tfrecord")
        assert code == 0 and "Traceback" not in err, err
        said.append(json.loads(out)["files"][0]["records"])
    assert said == [3, 5]


def test_a_listing_answers_only_its_own_endpoint_for_a_while_and_a_bounded_count(tmp_path, monkeypatch):
    """What a listing said of an object (`remote._listed`) is keyed as `filesystem` is: the same
    URL under another endpoint or other credentials is not answered from it. An answer older than
    limits.REMOTE_LISTED_SECONDS is asked again (the object rewritten since is seen as it is now),
    and at most limits.REMOTE_LISTED_MAX answers are kept, the oldest dropped first."""
    from tfrview.core.output.writer import write_records
    from tfrview.core.tfrecord import remote

    monkeypatch.setattr(remote, "_listed", {})
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    remote.note_listed("s3://b/x.tfrecord", 30, "v1")
    assert remote.listed_claim("s3://b/x.tfrecord") == (30, "v1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:10")  # another server, the same URL
    assert remote.listed_claim("s3://b/x.tfrecord") is None
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    assert remote.listed_claim("s3://b/x.tfrecord") == (30, "v1")

    monkeypatch.setattr(remote, "REMOTE_LISTED_MAX", 4)
    for k in range(6):
        remote.note_listed(f"s3://b/{k}.tfrecord", k, "v")
    assert [remote.listed_claim(f"s3://b/{k}.tfrecord") for k in range(6)] == [None, None] + [
        (k, "v") for k in range(2, 6)
    ]
    assert len(remote._listed) == 4

    write_records(tmp_path / "x.tfrecord", [b"r%d" % i for i in range(3)])
    with http_server(tmp_path) as base:
        url = f"{base}/x.tfrecord"
        (listed,) = remote.expand(url)
        write_records(tmp_path / "x.tfrecord", [b"r%d" % i for i in range(5)])  # rewritten since
        assert remote.info_of(url).size == listed.size  # within the listing's lifetime
        monkeypatch.setattr(remote, "REMOTE_LISTED_SECONDS", 0.0)
        assert remote.info_of(url).size == (tmp_path / "x.tfrecord").stat().st_size != listed.size
