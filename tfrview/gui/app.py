"""Starting the window: the QApplication, one window per dataset, the demo dataset when no file is
given, and a clear one-line answer where there is no display."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.tfrecord.dataset import Dataset

APP_ID = "tfrview"
ICON_AFTER_MS = 1500  # the application's icon is set this long after it starts (`make_app`): at 400 ms
# the timer was already due when the event loop first ran (10,000 shards: the window shows ~0.6 s
# after `make_app`), so the icon went in before the first rows; 1.5 s lands after them


def has_display() -> bool:
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


class Windows:
    """Keeps the open windows alive and opens new ones when a window asks."""

    def __init__(self) -> None:
        self.open: list = []
        self.asking = None  # the TFDS config dialog while it is open (`_tfds_chosen`)

    def open_dataset(self, args: list[str], demo: bool = False, replace=None):
        from PySide6.QtWidgets import QMessageBox  # heavy: PySide6 on first use only

        tfdv = self._open_tfdv(args, replace)  # issue 23: TFDV statistics, schema, anomalies files
        if tfdv is not None:
            return tfdv
        try:
            args = self._tfds_chosen(args)
            if args is None:  # the person did not choose a config: nothing opens
                return None
            with _collector_paused():
                from tfrview.gui.main_window import MainWindow  # heavy: PySide6, pyarrow on first use only

                w = MainWindow(Dataset.open(args), demo=demo)
        except TfrviewError as exc:
            if self.open:
                QMessageBox.warning(self.open[-1], "tfrview", str(exc))
                return None
            raise
        return self._shown(w, replace)

    def _shown(self, w, replace):
        from PySide6.QtCore import Qt  # heavy: PySide6 on first use only

        w.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        w.open_requested.connect(lambda paths, src=w: self._requested(src, paths))
        w.destroyed.connect(lambda *_a, win=w: self._forget(win))
        if replace is not None:
            w.setGeometry(replace.geometry())
        w.show()
        w.raise_()
        w.activateWindow()
        self.open.append(w)
        _smoke_hooks(w)
        if replace is not None:
            replace.close()
        return w

    def _open_tfdv(self, args: list[str], replace=None):
        """When every argument is a TFDV file (`core.tfdv.files.kind_of`: by name, or a .pbtxt by its
        first field), a read-only table window for each; else None (a dataset). A file that is not
        what its name says: one line, as for a dataset that cannot be opened."""
        # (a folder, a URL, a missing file is never one: `kind_of`'s first answer, without its import)
        if not args or any(a.startswith("--") or not os.path.isfile(a) for a in args):
            return None
        from PySide6.QtCore import Qt  # heavy: PySide6 on first use only
        from PySide6.QtWidgets import QMessageBox  # heavy: PySide6 on first use only

        from tfrview.core.tfdv.files import kind_of, table

        if any(kind_of(a) is None for a in args):
            return None
        from pathlib import Path

        from tfrview.gui.tfdv_window import TfdvWindow  # heavy: PySide6 on first use only

        w = None
        for a in args:
            try:
                t = table(
                    a
                )  # a small file read whole (limits.MAX_TFDV_FILE_BYTES), as a dataset's listing is
            except TfrviewError as exc:
                if self.open:
                    QMessageBox.warning(self.open[-1], "tfrview", str(exc))
                    continue
                raise
            w = TfdvWindow(Path(a), t)
            w.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            w.open_requested.connect(lambda paths, src=w: self._requested(src, paths))
            w.destroyed.connect(lambda *_a, win=w: self._forget(win))
            w.show()
            self.open.append(w)
        if replace is not None and w is not None:
            replace.close()
        return w

    def _tfds_chosen(self, args: list[str]) -> list[str] | None:
        """Each TFDS folder of several configs (or datasets) named is replaced by the version
        folder the person chooses in `TfdsChoiceDialog`; None when they cancel (with no window
        open yet, the folder's one line is said as any other failure to open)."""
        from tfrview.core.tfds.layout import TfdsChoiceError, version_folder

        out = []
        for a in args:
            if (
                "://" not in a
                and os.path.isdir(a)
                and not os.path.isfile(os.path.join(a, "dataset_info.json"))
            ):
                try:
                    version_folder(Path(a))
                except TfdsChoiceError as exc:
                    from tfrview.gui.tfds_choice import TfdsChoiceDialog

                    dlg = TfdsChoiceDialog(exc, self.open[-1] if self.open else None)
                    self.asking = dlg
                    try:
                        picked = dlg.chosen() if dlg.exec() == dlg.DialogCode.Accepted else None
                    finally:
                        self.asking = None
                    if picked is None:
                        if self.open:
                            return None
                        raise
                    a = str(picked.folder)
            out.append(a)
        return out

    def open_args(self, args: list[str]):
        """Open what a command line names; with nothing named, the built-in demo dataset."""
        if not args:
            from tfrview.demo import build_demo  # heavy: protobuf on first use only

            return self.open_dataset([str(p) for p in build_demo()], demo=True)
        return self.open_dataset(args)

    def _requested(self, source, paths: list[str]) -> None:
        if paths and paths[0] == "--reload":
            self.open_dataset(paths[1:], demo=source.demo, replace=source)
        else:
            self.open_dataset(paths, replace=source if source.demo else None)

    def _forget(self, w) -> None:
        if w in self.open:
            self.open.remove(w)
        # what `_collector_paused` froze may now be garbage in cycles (a closed window's wrappers
        # and the lambdas its signals held): the collector looks at it again
        gc.unfreeze()


@contextlib.contextmanager
def _collector_paused():
    """The cyclic collector paused while a window and its dataset are made (10,000 shards: ~100,000
    long-lived objects, each full collection on the way walking them all again: ~0.1 s of the
    first rows), then what exists frozen out of later collections (they live as long as the
    window: a full collection while the rows grow would walk them again); `_forget` thaws them."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def make_app(argv: list[str] | None = None):
    from PySide6.QtCore import QCoreApplication  # heavy: PySide6 on first use only
    from PySide6.QtWidgets import QApplication  # heavy: PySide6 on first use only

    # (The spare job process, `procs.launch.prewarm`, starts once a window's first rows have
    # painted (`DatasetSession.rows_painted`), not here: on 2 cores its Python start-up and imports,
    # ~0.3-0.5 s of CPU, took a core from the window and the X server while the first rows were
    # made, and no job runs before then.)
    app = QApplication.instance()
    if app is None:
        # Every Qt->Python call (a model's data(), a slot) must win the GIL back from the workers;
        # the default 5 ms switch interval makes each such hand-off a visible stall.
        sys.setswitchinterval(0.0005)
        QCoreApplication.setOrganizationName(APP_ID)
        QCoreApplication.setApplicationName(APP_ID)
        app = QApplication(argv or [APP_ID])
        app.setDesktopFileName(APP_ID)
        from PySide6.QtCore import QTimer  # heavy: PySide6 on first use only

        # the icon's five files read and the SVG plugin loaded after the first rows have painted
        # (~20 ms of the first window's start); a window shown before it takes it when it is set
        QTimer.singleShot(ICON_AFTER_MS, lambda: _set_icon(app))
    return app


def _set_icon(app) -> None:
    from importlib import resources

    from PySide6.QtGui import QIcon  # heavy: PySide6 on first use only

    try:
        base = resources.files("tfrview") / "resources" / "icons"
        icon = QIcon()
        for name in ("tfrview.svg", "tfrview-256.png", "tfrview-64.png", "tfrview-32.png", "tfrview-16.png"):
            p = base / name
            if p.is_file():
                icon.addFile(str(p))
        if not icon.isNull():
            app.setWindowIcon(icon)
    except (ModuleNotFoundError, OSError) as exc:  # the window works without its icon
        logging.getLogger(__name__).debug("no window icon: %s", exc)


def _uses_x11() -> bool:
    platform = (os.environ.get("QT_QPA_PLATFORM") or "xcb").split(":")[0]
    return platform == "xcb" and sys.platform.startswith("linux") and bool(os.environ.get("DISPLAY"))


def run(paths: list[str], verbose: bool = False) -> int:
    if not has_display():
        print(
            "tfrview: no display to open a window on (no DISPLAY or WAYLAND_DISPLAY); "
            "the headless commands work here: tfrview info|verify|dump FILE (tfrview --help)",
            file=sys.stderr,
        )
        return 2
    from tfrview.gui import x11_libs  # start-up of this process

    missing = x11_libs.missing_libraries()
    msg = x11_libs.missing_message(missing) or (
        x11_libs.cannot_connect() if missing == [] and _uses_x11() else None
    )
    if msg:
        print(msg, file=sys.stderr)
        return 2
    from tfrview.core.logs import configure_file  # start-up of this process

    configure_file(verbose=verbose)  # before the spare job process starts: it logs at the same level
    try:
        app = make_app([sys.argv[0]])
    except Exception as exc:  # a Qt that cannot start says why in one line
        print(f"tfrview: cannot start the window ({exc})", file=sys.stderr)
        return 2
    from tfrview.gui.single_instance import InstanceServer, forward  # heavy: PySide6 on first use only

    single = os.environ.get("TFRVIEW_SINGLE_INSTANCE", "1") != "0"
    if single and forward(paths):
        return 0  # the running tfrview opened them in a new window
    windows = Windows()
    try:
        windows.open_args(paths)
    except TfrviewError as exc:
        from tfrview.core.termtext import printable

        print(f"tfrview: {printable(str(exc))}", file=sys.stderr)
        return 2
    if single:
        server = InstanceServer(windows.open_args)
        server.listen()
    return app.exec()


def _smoke_hooks(w) -> None:
    """For end-to-end tests of launching (e.g. a desktop file's Exec line): TFRVIEW_SMOKE_LOG names a
    file that gets a line per window once its index is done; TFRVIEW_SMOKE_EXIT=1 then quits."""
    log = os.environ.get("TFRVIEW_SMOKE_LOG")
    if not log:
        return

    def done() -> None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} indexed {w.model.total()} records of {w.ds.files[0].path}\n")
        if os.environ.get("TFRVIEW_SMOKE_EXIT") == "1":
            from PySide6.QtWidgets import QApplication  # heavy: PySide6 on first use only

            QApplication.closeAllWindows()

    w.session.scan_ended.connect(lambda _progress: done())
