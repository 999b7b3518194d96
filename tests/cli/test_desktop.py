"""Desktop integration against a temporary XDG_DATA_HOME / XDG_CONFIG_HOME, with the real xdg-mime."""

import os
import shutil
import subprocess
import sys
import time

import pytest

from tests.helpers import PENGUIN, RACCOON
from tfrview import desktop

needs_xdg = pytest.mark.skipif(
    shutil.which("xdg-mime") is None or shutil.which("update-mime-database") is None,
    reason="xdg-utils / shared-mime-info not installed (make test installs them with apt-get when root)",
)


@pytest.fixture
def xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("XDG_CURRENT_DESKTOP", raising=False)
    monkeypatch.delenv("DESKTOP_SESSION", raising=False)
    return tmp_path


def split_exec(line: str) -> list[str]:
    """Split an Exec value per the Desktop Entry spec: in double quotes, a backslash escapes
    one of " ` $ \\ (shlex only knows " and \\)."""
    words, cur, i, quoted, started = [], [], 0, False, False
    while i < len(line):
        c = line[i]
        if quoted:
            if c == "\\" and i + 1 < len(line) and line[i + 1] in '"`$\\':
                cur.append(line[i + 1])
                i += 1
            elif c == '"':
                quoted = False
            else:
                cur.append(c)
        elif c == '"':
            quoted = started = True
        elif c == " ":
            if cur or started:
                words.append("".join(cur))
            cur, started = [], False
        else:
            cur.append(c)
            started = True
        i += 1
    if cur or started:
        words.append("".join(cur))
    return words


def exec_argv(desktop_file, files):
    """The argv a file manager would run: the Exec line unescaped and unquoted per the spec, %F expanded."""
    line = next(x for x in desktop_file.read_text().splitlines() if x.startswith("Exec="))[5:]
    words = split_exec(line.replace("\\\\", "\\"))
    out = []
    for w in words:
        out.extend(files) if w == "%F" else out.append(w)
    return out


def test_install_writes_files_and_manifest_and_is_idempotent(xdg):
    lines = desktop.install(cmd=["/opt/tf view/bin/tfrview"])
    data = xdg / "data"
    assert (data / "applications" / "tfrview.desktop").is_file()
    assert (data / "mime" / "packages" / "tfrview.xml").is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "tfrview.svg").is_file()
    assert (data / "icons" / "hicolor" / "48x48" / "apps" / "tfrview.png").is_file()
    assert any(x.startswith("set default") for x in lines)
    entry = (data / "applications" / "tfrview.desktop").read_text()
    assert 'Exec="/opt/tf view/bin/tfrview" %F' in entry
    assert "MimeType=application/x-tfrecord;" in entry and "StartupWMClass=tfrview" in entry
    again = desktop.install(cmd=["/opt/tf view/bin/tfrview"])
    assert all(not x.startswith("write ") or x.endswith("installed.json") for x in again)
    assert any(x.startswith("unchanged") for x in again)


def test_exec_quoting_roundtrips_awkward_paths(xdg):
    awkward = '/tmp/a "quoted" $dir\\with`tick/tfrview'
    desktop.install(cmd=[awkward])
    argv = exec_argv(xdg / "data" / "applications" / "tfrview.desktop", ["/x y/z.tfrecord"])
    assert argv == [awkward, "/x y/z.tfrecord"]


def test_dry_run_changes_nothing(xdg):
    lines = desktop.install(dry_run=True)
    assert lines and not (xdg / "data").exists() and not (xdg / "config").exists()
    assert desktop.uninstall(dry_run=True)[0].startswith("nothing to remove")


def test_does_not_override_another_default_unless_forced(xdg):
    cfg = xdg / "config"
    cfg.mkdir()
    (cfg / "mimeapps.list").write_text(
        "[Default Applications]\napplication/x-tfrecord=other.desktop;\ntext/plain=ed.desktop;\n"
    )
    lines = desktop.install()
    assert any("kept the default" in x for x in lines)
    assert desktop.current_default() == "other.desktop"
    desktop.install(force=True)
    assert desktop.current_default() == "tfrview.desktop"
    desktop.uninstall()
    assert desktop.current_default() == "other.desktop"  # restored
    assert "text/plain=ed.desktop;" in (cfg / "mimeapps.list").read_text()


def test_uninstall_removes_exactly_what_was_installed(xdg):
    apps = xdg / "data" / "applications"
    apps.mkdir(parents=True)
    (apps / "someone-else.desktop").write_text("[Desktop Entry]\nName=x\n")
    desktop.install()
    desktop.uninstall()
    left = sorted(str(p.relative_to(xdg)) for p in xdg.rglob("*") if p.is_file())
    assert "data/applications/someone-else.desktop" in left
    assert not any("tfrview" in p for p in left)
    assert desktop.current_default() is None
    assert desktop.uninstall()[0].startswith("nothing to remove")  # idempotent


def test_cli_install_desktop_dry_run(xdg, capsys):
    from tfrview.cli import main

    assert main(["install-desktop", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would write" in out and "tfrview.desktop" in out
    assert not (xdg / "data").exists()


@needs_xdg
def test_xdg_mime_knows_the_type_and_the_default(xdg):
    desktop.install()
    env = dict(os.environ)
    names = [
        "a.tfrecord",
        "b.tfrecords",
        "c.tfrec",
        "d.record",
        "e.tfrecord.gz",
        "f.tfrecords.gz",
        "g.tfrecord-00001-of-00004",
        "train-00003-of-00016",
    ]
    for name in names:
        p = xdg / name
        p.write_bytes(b"")
        r = subprocess.run(["xdg-mime", "query", "filetype", str(p)], capture_output=True, text=True, env=env)
        assert r.stdout.strip() == "application/x-tfrecord", (name, r.stdout, r.stderr)
    r = subprocess.run(
        ["xdg-mime", "query", "default", "application/x-tfrecord"], capture_output=True, text=True, env=env
    )
    assert r.stdout.strip() == "tfrview.desktop"


@needs_xdg
def test_exec_line_opens_a_path_with_spaces(xdg):
    desktop.install()
    target = xdg / "my data" / "raccoon test.tfrecord"
    target.parent.mkdir()
    shutil.copy(RACCOON, target)
    log = xdg / "smoke.log"
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        TFRVIEW_SMOKE_LOG=str(log),
        TFRVIEW_SMOKE_EXIT="1",
        TFRVIEW_INSTANCE=f"tfrview-test-{os.getpid()}-exec",
    )
    argv = exec_argv(xdg / "data" / "applications" / "tfrview.desktop", [str(target)])
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"indexed 12 records of {target}" in log.read_text()


def test_second_launch_opens_in_the_running_process(tmp_path):
    log = tmp_path / "smoke.log"
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        TFRVIEW_SMOKE_LOG=str(log),
        TFRVIEW_INSTANCE=f"tfrview-test-{os.getpid()}-single",
    )
    env.pop("TFRVIEW_SMOKE_EXIT", None)
    cmd = [sys.executable, "-m", "tfrview"]
    first = subprocess.Popen(
        [*cmd, str(RACCOON)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and "raccoon" in log.read_text()):
            assert time.monotonic() < deadline and first.poll() is None, "first instance did not start"
            time.sleep(0.1)
        t = time.monotonic()
        second = subprocess.run([*cmd, str(PENGUIN)], env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 0, second.stderr
        assert time.monotonic() - t < 10
        while "penguin" not in log.read_text():
            assert time.monotonic() < deadline, "the running instance did not open the second file"
            time.sleep(0.1)
        pids = {line.split()[0] for line in log.read_text().splitlines()}
        assert pids == {str(first.pid)}  # both opened by the first process
    finally:
        first.terminate()
        first.wait(timeout=30)
