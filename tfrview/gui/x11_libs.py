"""Which system libraries Qt's X11 platform plugin lacks, said in one line before Qt can abort.

Qt prints a multi-line message naming libxcb-cursor0 (which it loads at run time) and aborts, even
when what is missing is something else the plugin links against. So we ask the dynamic linker
(`ldd` on the plugin) what it cannot find, check the one library Qt loads by itself, and name the
packages to install. No Qt is imported here: this runs before the QApplication exists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tfrview.core.limits import LDD_SECONDS

# soname prefix -> (Debian/Ubuntu package, Fedora package)
PACKAGES = {
    "libxcb-cursor.so": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so": ("libxcb-util1", "xcb-util"),
    "libxkbcommon-x11.so": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb.so": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so": ("libx11-6", "libX11"),
    "libSM.so": ("libsm6", "libSM"),
    "libICE.so": ("libice6", "libICE"),
    "libEGL.so": ("libegl1", "libglvnd-egl"),
    "libGL.so": ("libgl1", "libglvnd-glx"),
    "libOpenGL.so": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig.so": ("libfontconfig1", "fontconfig"),
    "libfreetype.so": ("libfreetype6", "freetype"),
    "libdbus-1.so": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so": ("libglib2.0-0", "glib2"),
}


def packages_for(soname: str) -> tuple[str, str]:
    """(Debian/Ubuntu, Fedora) package names that provide a shared library."""
    for prefix, pkgs in PACKAGES.items():
        if soname.startswith(prefix):
            return pkgs
    m = re.match(r"libxcb-([a-z0-9-]+)\.so\.(\d+)", soname)
    if m:  # the core xcb extensions: libxcb-randr0, libxcb-shape0, ... (Fedora: all in libxcb)
        return f"libxcb-{m[1]}{m[2]}", "libxcb"
    if soname.startswith("libxcb.so"):
        return "libxcb1", "libxcb"
    return soname, soname


def not_found(ldd_output: str) -> list[str]:
    """The sonames `ldd` says it cannot find, each once, in order."""
    return list(dict.fromkeys(re.findall(r"^\s*(\S+)\s+=>\s+not found", ldd_output, re.MULTILINE)))


def xcb_plugin() -> Path | None:
    try:
        import importlib.util  # optional dependency

        spec = importlib.util.find_spec("PySide6")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    p = Path(spec.origin).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return p if p.is_file() else None


def _ldd(path: Path) -> str:
    try:
        r = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=LDD_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return ""
    return r.stdout


def missing_libraries(ldd=_ldd) -> list[str]:
    """Sonames the X11 plugin needs and this system lacks (empty where X11 is not what Qt will use)."""
    platform = (os.environ.get("QT_QPA_PLATFORM") or "xcb").split(":")[0]
    if platform != "xcb" or (os.environ.get("WAYLAND_DISPLAY") and not os.environ.get("QT_QPA_PLATFORM")):
        return []
    if not (sys.platform.startswith("linux") and os.environ.get("DISPLAY")):
        return []
    plugin = xcb_plugin()
    missing = not_found(ldd(plugin)) if plugin is not None else []
    import ctypes.util  # standard library, used here only

    if ctypes.util.find_library("xcb-cursor") is None and not any(
        s.startswith("libxcb-cursor") for s in missing
    ):
        missing.append("libxcb-cursor.so.0")  # loaded by Qt itself at run time, not linked
    return missing


def missing_message(missing: list[str]) -> str | None:
    """One line naming the packages to install, or None when nothing is missing."""
    if not missing:
        return None
    debian = " ".join(dict.fromkeys(packages_for(s)[0] for s in missing))
    fedora = " ".join(dict.fromkeys(packages_for(s)[1] for s in missing))
    return (
        f"tfrview: Qt cannot open a window on X11: this system lacks {', '.join(missing)}. "
        f"Install them (Debian/Ubuntu: sudo apt install {debian}; Fedora: sudo dnf install {fedora}); "
        "the headless commands work without them (tfrview --help)"
    )


def cannot_connect() -> str | None:
    """One line when no X server answers at $DISPLAY (Qt would print several lines and abort)."""
    import ctypes  # standard library, used here only
    import ctypes.util  # standard library, used here only

    name = ctypes.util.find_library("xcb")
    if not name or not os.environ.get("DISPLAY"):
        return None
    try:
        xcb = ctypes.CDLL(name)
        xcb.xcb_connect.restype = ctypes.c_void_p
        xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
        xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
        conn = xcb.xcb_connect(None, None)
        failed = xcb.xcb_connection_has_error(conn)
        xcb.xcb_disconnect(conn)
    except (OSError, AttributeError):
        return None
    if failed:
        return (
            f"tfrview: cannot connect to the X server at DISPLAY={os.environ['DISPLAY']}; "
            "the headless commands work without one (tfrview --help)"
        )
    return None
