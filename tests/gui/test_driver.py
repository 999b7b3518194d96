"""The page object's supported waits (issue 25.7): 'indexed' and 'analysed', in a pytest-qt test
and in a script without pytest-qt (a fuzz campaign, a child process that measures the window)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.gui.driver import Driver
from tfrview.core.output.writer import write_records
from tfrview.gui.job_state import Phase

ROOT = Path(__file__).resolve().parents[2]  # the repository: child processes import tests from it


def _file(path, n: int):
    write_records(path, (b"record %d" % i for i in range(n)))
    return path


def test_waits_for_indexed_and_analysed_in_a_test(qtbot, open_window, tmp_path):
    w = open_window([_file(tmp_path / "a.tfrecord", 25)], wait=False)
    d = Driver(qtbot, w)
    ended, states = [], []
    d.scan_ended.connect(ended.append)  # before the event loop runs: nothing is missed
    d.analysis_changed.connect(states.append)
    d.wait_indexed()
    assert d.is_indexed() and d.shown_records() == list(range(25))
    assert [p.phase for p in ended] == ["done"]
    state = d.wait_analysed()
    assert d.is_analysed() and state.phase is Phase.DONE and states[-1] == state
    assert d.summary is not None and d.summary["records"] == 25


def test_waits_for_indexed_and_analysed_in_a_script(tmp_path):
    path = _file(tmp_path / "b.tfrecord", 40)
    code = textwrap.dedent(
        """
        import sys
        from tests.gui.driver import Driver
        from tfrview.core.tfrecord.dataset import Dataset
        from tfrview.gui.app import make_app
        from tfrview.gui.main_window import MainWindow
        app = make_app(["tfrview"])
        w = MainWindow(Dataset.open([sys.argv[1]]))
        w.show()
        d = Driver(None, w)  # no qtbot: the driver runs the event loop while it waits
        d.wait_indexed()
        state = d.wait_analysed()
        print(len(d.shown_records()), state.phase.name, d.summary["records"])
        w.shutdown()
        """
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-800:]
    assert r.stdout.split() == ["40", "DONE", "40"]
