"""Desktop integration on Linux (freedesktop): a .desktop entry, the application/x-tfrecord MIME
type and the icon, installed for the current user so a double-click opens tfrview.

Everything installed is listed in a manifest, so `uninstall` removes exactly that and nothing else.
Both are idempotent and have a dry run. No Qt here: the CLI runs this headless.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import DESKTOP_TOOL_SECONDS
from tfrview.core.output.atomic import atomic_write_bytes, atomic_write_text

MIME_TYPE = "application/x-tfrecord"
DESKTOP_ID = "tfrview.desktop"
ICON_SIZES = (16, 32, 48, 64, 128, 256)
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def manifest_path() -> Path:
    return data_home() / "tfrview" / "installed.json"


def _resource(name: str) -> bytes:
    return (resources.files("tfrview") / "resources" / name).read_bytes()


def quote_exec_arg(arg: str) -> str:
    """Quote one Exec argument per the Desktop Entry spec (then escape backslashes for the file)."""
    if arg and not (_RESERVED & set(arg)):
        return arg
    inner = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return ('"' + inner + '"').replace("\\", "\\\\")


def launcher() -> list[str]:
    """The absolute command that starts tfrview, working from a virtual environment not on PATH."""
    here = Path(sys.executable).parent / "tfrview"
    if here.is_file() and os.access(here, os.X_OK):
        return [str(here.absolute())]
    found = shutil.which("tfrview")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "tfrview"]


def desktop_entry(cmd: list[str]) -> str:
    text = _resource("tfrview.desktop.in").decode()
    return text.replace("@EXEC@", " ".join(quote_exec_arg(a) for a in cmd)).replace("@TRYEXEC@", cmd[0])


@dataclass(frozen=True)
class Planned:
    path: Path
    data: bytes


def planned_files(cmd: list[str] | None = None) -> list[Planned]:
    d = data_home()
    files = [
        Planned(d / "applications" / DESKTOP_ID, desktop_entry(cmd or launcher()).encode()),
        Planned(d / "mime" / "packages" / "tfrview.xml", _resource("tfrview-mime.xml")),
        Planned(
            d / "icons" / "hicolor" / "scalable" / "apps" / "tfrview.svg", _resource("icons/tfrview.svg")
        ),
    ]
    for n in ICON_SIZES:
        files.append(
            Planned(
                d / "icons" / "hicolor" / f"{n}x{n}" / "apps" / "tfrview.png",
                _resource(f"icons/tfrview-{n}.png"),
            )
        )
    return files


# --- mimeapps.list ---------------------------------------------------------------------------------


def _read_defaults(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return out
    section = None
    for line in lines:
        s = line.strip()
        if s.startswith("["):
            section = s
        elif section == "[Default Applications]" and "=" in s:
            k, v = s.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def current_default() -> str | None:
    """The user's default application for TFRecord files, per ~/.config/mimeapps.list."""
    v = _read_defaults(config_home() / "mimeapps.list").get(MIME_TYPE)
    return v.split(";")[0] if v else None


def _set_default(path: Path, desktop_id: str | None) -> None:
    """Set (or with None remove) the MIME type's line under [Default Applications], keeping the rest."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    out: list[str] = []
    section = None
    done = False
    for line in lines:
        s = line.strip()
        if s.startswith("["):
            if section == "[Default Applications]" and not done and desktop_id:
                out.append(f"{MIME_TYPE}={desktop_id};")
                done = True
            section = s
        elif section == "[Default Applications]" and s.split("=", 1)[0].strip() == MIME_TYPE:
            if desktop_id and not done:
                out.append(f"{MIME_TYPE}={desktop_id};")
                done = True
            continue
        out.append(line)
    if desktop_id and not done:
        if section != "[Default Applications]":
            if "[Default Applications]" in (x.strip() for x in out):
                # the section exists but was not the last one and had no line for us
                i = [x.strip() for x in out].index("[Default Applications]")
                out.insert(i + 1, f"{MIME_TYPE}={desktop_id};")
                done = True
            else:
                out.append("[Default Applications]")
        if not done:
            out.append(f"{MIME_TYPE}={desktop_id};")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "\n".join(out) + "\n")


# --- install / uninstall ----------------------------------------------------------------------------


def _refresh_databases(dry_run: bool) -> list[str]:
    lines = []
    d = data_home()
    for tool, target in (
        ("update-mime-database", d / "mime"),
        ("update-desktop-database", d / "applications"),
    ):
        exe = shutil.which(tool)
        if exe is None:
            lines.append(f"skip {tool} (not installed)")
            continue
        lines.append(f"run {tool} {target}")
        if not dry_run and target.is_dir():
            subprocess.run([exe, str(target)], capture_output=True, check=False, timeout=DESKTOP_TOOL_SECONDS)
    return lines


def install(dry_run: bool = False, force: bool = False, cmd: list[str] | None = None) -> list[str]:
    if not sys.platform.startswith("linux") and "bsd" not in sys.platform:
        raise TfrviewError(
            "install-desktop is for Linux desktops (freedesktop); see docs/desktop-integration.md"
        )
    lines: list[str] = []
    written: list[str] = []
    for f in planned_files(cmd):
        try:
            same = f.path.read_bytes() == f.data
        except OSError:
            same = False
        written.append(str(f.path))
        if same:
            lines.append(f"unchanged {f.path}")
            continue
        lines.append(f"{'would write' if dry_run else 'write'} {f.path}")
        if not dry_run:
            f.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(f.path, f.data)
    lines += _refresh_databases(dry_run)
    mapps = config_home() / "mimeapps.list"
    before = current_default()
    old = _read_manifest()
    we_set = bool(old.get("default_set"))
    if before in (None, DESKTOP_ID) or force:
        if before != DESKTOP_ID:
            lines.append(
                f"{'would set' if dry_run else 'set'} default for {MIME_TYPE}: {DESKTOP_ID} in {mapps}"
            )
            if not dry_run:
                _set_default(mapps, DESKTOP_ID)
            we_set = True
            previous = before
        else:
            lines.append(f"default for {MIME_TYPE} is already {DESKTOP_ID}")
            previous = old.get("previous_default")
    else:
        lines.append(f"kept the default for {MIME_TYPE}: {before} (use --force to make tfrview the default)")
        previous = None
    if not dry_run:
        manifest = {
            "files": written,
            "default_set": we_set,
            "previous_default": previous,
            "mimeapps": str(mapps),
        }
        manifest_path().parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(manifest_path(), json.dumps(manifest, indent=1) + "\n")
        lines.append(f"write {manifest_path()}")
    return lines


def _read_manifest() -> dict:
    try:
        return json.loads(manifest_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def uninstall(dry_run: bool = False) -> list[str]:
    m = _read_manifest()
    if not m:
        return [f"nothing to remove (no {manifest_path()})"]
    lines = []
    for name in m.get("files", []):
        p = Path(name)
        if p.exists():
            lines.append(f"{'would remove' if dry_run else 'remove'} {p}")
            if not dry_run:
                p.unlink()
    mapps = Path(m.get("mimeapps") or config_home() / "mimeapps.list")
    if m.get("default_set") and _read_defaults(mapps).get(MIME_TYPE, "").split(";")[0] == DESKTOP_ID:
        prev = m.get("previous_default")
        lines.append(
            f"{'would restore' if dry_run else 'restore'} default for {MIME_TYPE}: {prev or '(none)'}"
        )
        if not dry_run:
            _set_default(mapps, prev)
    lines += _refresh_databases(dry_run)
    lines.append(f"{'would remove' if dry_run else 'remove'} {manifest_path()}")
    if not dry_run:
        manifest_path().unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            manifest_path().parent.rmdir()
    return lines
