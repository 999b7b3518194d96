"""The analysis pass on a real Dask cluster (issue 11): a scheduler and two workers started
here; the merged answer equals the local pool's, a worker lost mid-run included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import RACCOON, framed, payloads_of
from tests.remote_servers import free_port

pytest.importorskip("distributed", reason="Dask is not installed (pip install -e '.[test]')")
DASK = Path(sys.executable).with_name("dask")


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    """24 shards of raccoon records; two damaged."""
    root = tmp_path_factory.mktemp("dask-split")
    payloads = payloads_of(RACCOON)
    for k in range(24):
        data, offs = framed([payloads[(k + i) % len(payloads)] for i in range(4)])
        b = bytearray(data)
        if k in (5, 17):
            b[offs[2] + 30] ^= 0x04
        (root / f"train-{k:05d}-of-00024.tfrecord").write_bytes(bytes(b))
    return root


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """`dask scheduler` and two `dask worker` processes on this machine; yields (address, workers)."""
    if not DASK.exists():
        pytest.skip(f"{DASK} is missing: the dask extra is not installed here")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    work = tmp_path_factory.mktemp("dask")
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "worker-cache")}
    procs = [
        subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    ]
    workers = []
    for k in range(2):
        w = subprocess.Popen(
            [
                str(DASK),
                "worker",
                address,
                "--nthreads",
                "1",
                "--nworkers",
                "1",
                "--no-dashboard",
                "--local-directory",
                str(work / f"w{k}"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        procs.append(w)
        workers.append(w)
    try:
        from distributed import Client

        with Client(address, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _run(*args, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "tfrview", *args], capture_output=True, text=True, timeout=240, env=env
    )


@pytest.mark.slow  # make test-slow (the suite stays under 5 min on 2 cores)
def test_verify_and_info_on_a_dask_cluster_equal_the_local_pool(shards, cluster, tmp_path):
    address, _ = cluster
    for cmd in (["verify", "--json", "--checks"], ["info", "--json", "--all"]):
        local = _run(*cmd, str(shards), "--jobs", "2", cache=tmp_path / "local")
        on_cluster = _run(*cmd, str(shards), "--dask", address, cache=tmp_path / "cluster")
        assert on_cluster.returncode == local.returncode, on_cluster.stderr
        a, b = json.loads(local.stdout), json.loads(on_cluster.stdout)
        for d in (a, b):
            for f in d["files"]:
                f.pop("analysed_at", None)
        assert a == b
    assert sum(f["damaged_records"] for f in a["files"]) == 2


@pytest.mark.slow  # make test-slow; kept out of make test's five minutes
def test_a_worker_lost_mid_run_changes_nothing(cluster, tmp_path):
    address, workers = cluster
    # shards that take a while each (every image decoded), so a worker is lost mid-task
    slow = tmp_path / "slow"
    slow.mkdir()
    payloads = payloads_of(RACCOON)
    for k in range(12):
        (slow / f"s-{k:05d}-of-00012.tfrecord").write_bytes(
            framed([payloads[i % len(payloads)] for i in range(150)])[0]
        )
    local = _run("verify", "--json", "--checks", str(slow), "--jobs", "2", cache=tmp_path / "local")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cluster")}
    run = subprocess.Popen(
        [sys.executable, "-m", "tfrview", "verify", "--json", "--checks", str(slow), "--dask", address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    from distributed import Client

    with Client(address, timeout="30s") as c:
        deadline = time.monotonic() + 60
        busy = {}
        while time.monotonic() < deadline and run.poll() is None:
            busy = {w: t for w, t in c.processing().items() if t}
            if len(busy) == 2:
                break
            time.sleep(0.05)
        killed_mid_run = len(busy) == 2 and run.poll() is None
        workers[1].kill()  # one of the two, with a task in hand
    out, err = run.communicate(timeout=240)
    assert run.returncode == local.returncode, err
    assert json.loads(out) == json.loads(local.stdout)
    assert killed_mid_run, "the run ended before a worker could be lost"


def test_dask_local_runs_a_cluster_here(shards, tmp_path):
    local = _run("verify", "--json", str(shards), cache=tmp_path / "a")
    here = _run("verify", "--json", str(shards), "--dask", "local", cache=tmp_path / "b")
    assert here.returncode == 1, here.stderr
    assert json.loads(here.stdout) == json.loads(local.stdout)
    shutil.rmtree(tmp_path / "b", ignore_errors=True)
