"""Test-wide set-up: Qt offscreen and isolated settings/cache, before anything imports Qt."""

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_home = tempfile.mkdtemp(prefix="tfrview-test-home-")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_home, "config")
os.environ["XDG_CACHE_HOME"] = os.path.join(_home, "cache")
os.environ["XDG_DATA_HOME"] = os.path.join(_home, "data")
os.environ["XDG_STATE_HOME"] = os.path.join(_home, "state")  # the window's log (core/logs.py)
# No spare job process (procs.launch.prewarm): each costs ~0.5 s of CPU, and a test's window rarely
# runs the second job that would use it; tests/core/test_spare_job.py tests the spare itself.
os.environ["TFRVIEW_NO_SPARE"] = "1"
