"""The window says where it logs (About), and a failure it is told of lands in that file."""

from __future__ import annotations

import logging

from tests.helpers import framed, payloads


def test_about_names_the_log_file_and_a_failed_job_is_logged(qtbot, open_window, tmp_path, monkeypatch):
    from tfrview.core import logs
    from tfrview.core.procs.messages import Failed
    from tfrview.core.procs.requests import SeriesRequest
    from tfrview.gui.workers.jobs import JobWorker

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv(logs.LEVEL_ENV, "WARNING")  # recorded, so the value the test sets is undone
    monkeypatch.delenv(logs.LEVEL_ENV)
    path = tmp_path / "a.tfrecord"
    path.write_bytes(framed(payloads(5))[0])
    w = open_window([path])
    assert str(tmp_path / "state" / "tfrview" / "tfrview.log") in w.about_box().text()
    root = logging.getLogger("tfrview")
    level, before = root.level, list(root.handlers)
    try:
        log_path = logs.configure_file()
        other = tmp_path / "never-analysed.tfrecord"  # the window's own file may be analysed by now
        other.write_bytes(framed(payloads(4))[0])
        job = JobWorker(SeriesRequest(key="size", paths=(str(other),), counts=(4,)))
        got = []
        job.result.connect(got.extend)
        job.start()
        qtbot.waitUntil(lambda: job.isFinished() and bool(got), timeout=120000)
        assert got == [Failed("the analysis is not stored yet: plots come from it", "NotStored")]
        text = log_path.read_text()
        assert (
            "WARNING tfrview.gui.workers.jobs: series job failed (NotStored): the analysis is not stored"
            in text
        )
    finally:
        for h in list(root.handlers):
            if h not in before:
                root.removeHandler(h)
                h.close()
        root.setLevel(level)
