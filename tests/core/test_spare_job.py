"""The spare job process (procs.launch.prewarm): the next job runs in it, with the environment a new
one would get; one of another environment is never used; an unused one ends when dropped."""

from __future__ import annotations

import pytest

from tests.helpers import framed, payloads
from tfrview.core.procs import launch
from tfrview.core.procs.messages import Done, Summary, encode
from tfrview.core.procs.requests import AnalyzeRequest


@pytest.fixture
def spare_allowed(monkeypatch):
    monkeypatch.delenv(launch.NO_SPARE_ENV, raising=False)
    launch.drop_spare()
    yield
    launch.drop_spare()


def _request(tmp_path) -> AnalyzeRequest:
    path = tmp_path / "s.tfrecord"
    path.write_bytes(framed(payloads(50))[0])
    return AnalyzeRequest(paths=(str(path),), files=(0,), counts=(50,), label_map=None, jobs=1)


def _run(proc) -> list:
    return list(launch.read_lines(proc))


def test_the_next_job_runs_in_the_spare(spare_allowed, tmp_path):
    launch.prewarm()
    spare = launch._spare[0]
    proc = launch.spawn(_request(tmp_path))
    assert proc is spare and launch._spare is None
    out = _run(proc)
    assert out[-1] == Done() and any(isinstance(o, Summary) and not o.partial for o in out)


def test_a_spare_of_another_environment_is_not_used(spare_allowed, tmp_path, monkeypatch):
    launch.prewarm()
    spare = launch._spare[0]
    monkeypatch.setenv("TFRVIEW_SOMETHING_CHANGED", "1")
    proc = launch.spawn(_request(tmp_path))
    assert proc is not spare and spare.wait(timeout=10) is not None  # killed, never fed
    assert encode(_run(proc)[-1]) == '{"type": "done"}\n'


def test_an_unused_spare_ends_when_dropped(spare_allowed):
    launch.prewarm()
    spare = launch._spare[0]
    launch.drop_spare()
    assert spare.wait(timeout=10) == 0  # its stdin closed before any request: it ends quietly


def test_no_spare_when_the_environment_says_so(monkeypatch):
    monkeypatch.setenv(launch.NO_SPARE_ENV, "1")
    launch.drop_spare()
    launch.prewarm()
    assert launch._spare is None
