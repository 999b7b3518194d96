"""Where `logging` goes (core/logs.py): the CLI's stderr one line a record (`-v` adds debug), the
window's rotating file in the user's state directory, a child's stderr at its parent's level."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from tfrview.core import logs


@pytest.fixture(autouse=True)
def restored(monkeypatch):
    """Each test's configuration is undone: tfrview's logger, its level and the children's level."""
    monkeypatch.setenv(logs.LEVEL_ENV, "WARNING")  # recorded, so the value the test sets is undone
    monkeypatch.delenv(logs.LEVEL_ENV)
    root = logging.getLogger("tfrview")
    level, handlers = root.level, list(root.handlers)
    yield
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
            h.close()
    root.setLevel(level)


def _bad() -> None:
    raise ValueError("line one\nline two")


def test_the_cli_says_warnings_in_one_line_and_no_traceback(capsys):
    logs.configure_cli(verbose=False)
    log = logging.getLogger("tfrview.core.somewhere")
    log.debug("not shown")
    log.warning("a child said:\nsomething")
    try:
        _bad()
    except ValueError:
        log.exception("reading failed")
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "tfrview: WARNING: a child said: something",
        "tfrview: ERROR: reading failed (ValueError: line one line two)",
    ]


def test_verbose_shows_debug_and_tracebacks(capsys):
    logs.configure_cli(verbose=True)
    log = logging.getLogger("tfrview.core.somewhere")
    log.debug("the spare was busy")
    try:
        _bad()
    except ValueError:
        log.exception("reading failed")
    err = capsys.readouterr().err
    assert err.startswith("tfrview: DEBUG: the spare was busy\ntfrview: ERROR: reading failed\nTraceback")
    assert "in _bad" in err
    assert logs.os.environ[logs.LEVEL_ENV] == "DEBUG"  # what the child processes log at


def test_the_cli_flag_before_the_command(tmp_path):
    """`tfrview -v COMMAND` logs debug to stderr; without it, a clean run says nothing there."""
    from tests.helpers import framed, payloads

    path = tmp_path / "a.tfrecord"
    path.write_bytes(framed(payloads(3))[0])
    env = {**logs.os.environ, "PYTHONPATH": str(__import__("pathlib").Path(__file__).parents[2])}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "tfrview.cli", *args], capture_output=True, text=True, env=env
        )

    quiet, loud = run("verify", str(path)), run("-v", "verify", str(path))
    assert quiet.returncode == loud.returncode == 0 and quiet.stdout == loud.stdout
    assert quiet.stderr == ""
    assert f"tfrview: DEBUG: tfrview {__import__('tfrview').__version__}: verify {path}" in loud.stderr


def test_the_window_logs_to_a_rotating_file_that_names_its_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(logs, "LOG_FILE_BYTES", 2000)
    path = logs.configure_file()
    assert path == tmp_path / "state" / "tfrview" / "tfrview.log" == logs.window_log_path()
    log = logging.getLogger("tfrview.gui.somewhere")
    log.debug("not kept without verbose")
    for i in range(40):
        log.info("line %d of what the window did", i)
    text = path.read_text()
    assert "not kept" not in text and "line 39 of what the window did" in text
    assert text.startswith("log rotated at LOG_FILE_BYTES (2,000 bytes)")
    assert (tmp_path / "state" / "tfrview" / "tfrview.log.1").exists()
    assert not (
        tmp_path / "state" / "tfrview" / "tfrview.log.3"
    ).exists()  # LOG_FILES_KEPT older ones at most


def test_an_unwritable_state_dir_falls_back_to_stderr(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # a file where a directory should be
    assert logs.configure_file() is None
    assert capsys.readouterr().err.startswith(
        f"tfrview: WARNING: no log file at {blocker}/tfrview/tfrview.log"
    )


def test_a_child_logs_at_its_parents_level(capfd):
    logs.configure_cli(verbose=True)
    code = "import logging; from tfrview.core.logs import configure_child; configure_child(); "
    code += "logging.getLogger('tfrview.x').debug('child debug'); logging.getLogger('tfrview.x').info('child info')"
    env = {**logs.os.environ, "PYTHONPATH": str(__import__("pathlib").Path(__file__).parents[2])}
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stderr
    assert "DEBUG tfrview.x: child debug" in err and "INFO tfrview.x: child info" in err
    env[logs.LEVEL_ENV] = "WARNING"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stderr == ""


def test_a_pool_worker_logs_at_its_parents_level():
    """`childproc.worker_start`, the pool's initializer, configures a worker's logging too."""
    logs.configure_cli(verbose=False)
    code = "import logging; from tfrview.core.childproc import worker_start; worker_start(); "
    code += "logging.getLogger('tfrview.core.analysis.x').info('not at warning level'); "
    code += "logging.getLogger('tfrview.core.analysis.x').warning('the store is busy\\nsecond line')"
    env = {**logs.os.environ, "PYTHONPATH": str(__import__("pathlib").Path(__file__).parents[2])}
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stderr
    assert err.endswith("WARNING tfrview.core.analysis.x: the store is busy second line\n")
    assert "not at warning level" not in err and err.count("\n") == 1
