"""Starting the window on a machine that lacks Qt's X11 libraries: one line naming the packages."""

import os
import subprocess
import sys

from tfrview.gui import x11_libs

LDD = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f2d)
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f2d)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-randr.so.0 => not found
\tlibxcb-icccm.so.4 => not found
"""


def test_ldd_not_found_lines_are_read_once_each():
    assert x11_libs.not_found(LDD) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-randr.so.0"]


def test_the_message_names_debian_and_fedora_packages_in_one_line():
    msg = x11_libs.missing_message(x11_libs.not_found(LDD))
    assert "\n" not in msg
    assert "sudo apt install libxcb-icccm4 libxcb-keysyms1 libxcb-randr0" in msg
    assert "sudo dnf install xcb-util-wm xcb-util-keysyms libxcb" in msg
    assert "xcb-cursor" not in msg  # Qt's own message names this one whatever is missing
    assert x11_libs.missing_message([]) is None


def test_missing_libraries_asks_the_linker_only_for_x11(monkeypatch):
    monkeypatch.setenv("DISPLAY", ":42")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if x11_libs.xcb_plugin() is not None:
        got = x11_libs.missing_libraries(ldd=lambda p: LDD)
        assert got[:3] == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-randr.so.0"]
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert x11_libs.missing_libraries(ldd=lambda p: LDD) == []


def test_the_window_on_a_broken_x11_setup_says_one_line_and_exits(tmp_path):
    """No X server at the display (and, on a machine without them, missing libraries): one line, exit 2,
    never Qt's multi-line abort."""
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.update(DISPLAY=":97", TFRVIEW_SINGLE_INSTANCE="0", XDG_RUNTIME_DIR=str(tmp_path))
    r = subprocess.run(
        [sys.executable, "-m", "tfrview.cli", str(tmp_path / "x.tfrecord")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tfrview: "), r.stderr
    assert "apt install" in lines[0] or "cannot connect to the X server" in lines[0]
