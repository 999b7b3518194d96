"""Datasets where they live (issue 11): the same answers over HTTP and S3 as from local files,
against real servers started here (an HTTP server with Range requests; moto's S3 server)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import PENGUIN, RACCOON, framed, payloads_of
from tests.remote_servers import http_requests, http_server, s3_server

pytest.importorskip("fsspec", reason="the remote extras are not installed (pip install -e '.[test]')")

TFRVIEW = [sys.executable, "-m", "tfrview"]


@pytest.fixture(scope="module")
def split(tmp_path_factory) -> Path:
    """A split of 4 shards: two clean, one with a bad data CRC, one cut short; and a GZIP file."""
    root = tmp_path_factory.mktemp("split")
    payloads = payloads_of(RACCOON)
    for k in range(4):
        data, offs = framed(payloads[3 * k : 3 * k + 3])
        b = bytearray(data)
        if k == 1:
            b[offs[1] + 40] ^= 0x01
        if k == 3:
            b = b[: len(b) - 500]
        (root / f"train-{k:05d}-of-00004.tfrecord").write_bytes(bytes(b))
    shutil.copy(PENGUIN, root / PENGUIN.name)
    return root


def _run(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*TFRVIEW, *args], capture_output=True, text=True, timeout=180, env={**os.environ, **(env or {})}
    )


def _json_without_paths(out: str, base: str) -> dict:
    d = json.loads(out)
    for f in d["files"]:
        f["path"] = f["path"].replace(base, "").rsplit("/", 1)[-1]
    for g in d["datasets"]:
        g["files"] = [p.replace(base, "").rsplit("/", 1)[-1] for p in g["files"]]
    return d


def test_verify_over_http_equals_verify_of_the_local_files(split):
    local = _run("verify", "--json", "--checks", str(split))
    assert local.returncode == 1 and local.stdout
    with http_server(split) as base:
        remote = _run("verify", "--json", "--checks", f"{base}/", "--jobs", "2")
        assert remote.returncode == 1, remote.stderr
        assert "Traceback" not in remote.stderr
    assert _json_without_paths(remote.stdout, base) == _json_without_paths(local.stdout, str(split))


def test_a_remote_shard_is_read_in_a_few_streaming_requests(split):
    from tfrview.core.tfrecord.dataset import Dataset

    with http_server(split) as base:
        before = http_requests(base)["requests"]
        with Dataset.open([f"{base}/train-00000-of-00004.tfrecord"]) as ds:
            for _ in ds.scan():
                pass
            n = ds.count
            assert n == 3 and ds.read(2)
            assert ds.files[0].source.remote
        used = http_requests(base)["requests"] - before
    assert used <= 4  # its size, its first bytes, one read of the rest (the file is small)


@pytest.mark.slow  # make test-slow (the suite stays under 5 min on 2 cores)
def test_verify_over_s3_equals_verify_of_the_local_files(split):
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("s3fs")
    pytest.importorskip("moto")
    local = _run("verify", "--json", str(split / "train-?????-of-00004.tfrecord"))
    with s3_server() as env:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            fs = fsspec.filesystem("s3", skip_instance_cache=True)
            fs.mkdir("data")
            for f in sorted(split.glob("train-*")):
                fs.put_file(str(f), f"data/split/{f.name}")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        remote = _run("verify", "--json", "s3://data/split/train-*-of-00004.tfrecord", env=env)
        assert remote.returncode == 1 and "Traceback" not in remote.stderr, remote.stderr
        assert _json_without_paths(remote.stdout, "s3://data/split") == _json_without_paths(
            local.stdout, str(split)
        )
        # a bucket that is not there is said as such, in one line, not called damage
        missing = _run("verify", "s3://no-such-bucket/x.tfrecord", env=env)
        assert missing.returncode != 0 and "Traceback" not in missing.stderr
        assert "not found" in (missing.stdout + missing.stderr)


def test_network_failures_are_one_line_errors_never_damage(split, tmp_path):
    (tmp_path / "forbidden").mkdir()
    shutil.copy(split / "train-00000-of-00004.tfrecord", tmp_path / "forbidden" / "a.tfrecord")
    with http_server(tmp_path) as base:
        for url, words in [
            (f"{base}/nope.tfrecord", "not found (404)"),
            (f"{base}/forbidden/a.tfrecord", "access denied (403)"),
        ]:
            r = _run("verify", "--json", url)
            text = r.stdout + r.stderr
            assert r.returncode != 0 and words in text and "Traceback" not in text, text
            assert "bad_data_crc" not in text and "not_tfrecord" not in text
    r = _run("verify", "gs://bucket/x.tfrecord")
    if shutil.which("gcsfs") is None and not _has("gcsfs"):
        assert "pip install 'tfrview[gcs]'" in r.stdout + r.stderr and "Traceback" not in r.stderr


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_a_crc_that_fails_over_the_network_is_fetched_again_before_it_is_damage(split, tmp_path):
    shutil.copy(split / "train-00000-of-00004.tfrecord", tmp_path / "flaky-00000.tfrecord")
    with http_server(tmp_path) as base:
        r = _run("verify", "--json", f"{base}/flaky-00000.tfrecord")
        d = json.loads(r.stdout)
        assert r.returncode == 0 and d["files"][0]["ok"] and d["files"][0]["records"] == 3, r.stdout


def test_reopening_an_analysed_remote_split_downloads_no_record_data(split, tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    with http_server(split) as base:
        checked = _run("verify", "--checks", "--json", f"{base}/", env=env)  # the analysis, stored
        assert checked.returncode == 1, checked.stderr
        before = http_requests(base)
        again = _run("info", "--json", f"{base}/", env=env)
        after = http_requests(base)
    files = json.loads(again.stdout)["files"]
    assert [f["records"] for f in files] == [234, 3, 3, 3, 3] and all("analysed_at" in f for f in files)
    assert files[0]["sampled_records"] == 234  # the stored pass decoded every record, so the look shows all
    assert after["ranges"] == before["ranges"]  # a listing, sizes and ETags only: no record data again


def test_the_rows_on_screen_are_fetched_in_one_batched_request(split):
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.core.tfrecord.remote import trim_kept

    with http_server(split) as base:
        url = f"{base}/train-00000-of-00004.tfrecord"
        with Dataset.open([url]) as framed_ds:
            for _ in framed_ds.scan():
                pass
            index = framed_ds.files[0].index
            trim_kept(0)  # nothing kept: the next dataset starts from the network
            with Dataset.open([url]) as ds:
                ds.files[0].index = index
                before = http_requests(base)["ranges"]
                ds.prefetch(range(3))
                after_prefetch = http_requests(base)["ranges"]
                payloads = [ds.read(n) for n in range(3)]
                after_reads = http_requests(base)["ranges"]
    assert after_prefetch - before == 1 and after_reads == after_prefetch
    assert all(payloads)
