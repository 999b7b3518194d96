"""Writing new files and folders atomically: a temporary beside the destination, then a rename.

The one rule for every output (export, salvage, repair, rewrite, the COCO re-import, the training
formats): `check_new_output` before any work (an output is never an input, never inside an input
folder and never holds an input; it exists only when `--force` replaces it; a folder output never
replaces a file), one wording for each refusal; a file through `new_temp_file`/`atomic_file`, a
folder through `new_temp_dir` and `swap_in` (`atomic_dir` for a block that fills it), each named
`.<name>.<pid>.<random>.partial` beside it (`temp_prefix`): the name says its writer's process id
(nothing is written inside a folder but its content: no bookkeeping can end up in the output), so a
write killed before its rename, a file or a folder, is removed by the next look beside it once that process is gone (`clean_stale`), and a
temporary another writer is still filling is left alone.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.termtext import printable


def refuse_overwriting_inputs(out: Path, inputs: list[Path]) -> None:
    """tfrview never writes to a file it opened for reading (a URL is never the local file written)."""
    _refuse_overwriting(out, os.path.realpath(out), _real_inputs(inputs))


def _real_inputs(inputs) -> list[tuple[object, str]]:
    """Each local input with its real path, resolved once (`os.path.realpath` never raises, even on
    a symlink loop, as Path.resolve does); URLs are never a local file written."""
    from tfrview.core.tfrecord.remote import is_url  # loads 4 more modules, on first use only

    return [(p, os.path.realpath(p)) for p in inputs if not is_url(str(p))]


def _refuse_overwriting(out: Path, target: str, reals: list[tuple[object, str]]) -> None:
    exists = os.path.lexists(out)
    for p, real in reals:
        try:
            if real == target or (exists and os.path.samefile(p, out)):
                raise TfrviewError(f"{printable(str(out))}: refusing to write over an input file")
        except OSError:
            continue


def output_error(path: Path, exc: OSError) -> TfrviewError:
    """The one-line error for an output that cannot be written, naming the file the person asked
    for, never our temporary file."""
    return TfrviewError(f"{printable(str(path))}: cannot write ({exc.strerror or exc})")


class AtomicOutput:
    """A file written under a temporary name (`RecordWriter`, `arwriter.ArrayRecordOut`): as a
    context, `close()` (renamed into place) when the block ends well, else `abort()` (nothing left),
    an OSError said as `output_error` of the file asked for (e.g. the disk filled up)."""

    path: Path

    def close(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
            return
        self.abort()
        if isinstance(exc, OSError) and not isinstance(exc, TfrviewError):
            raise output_error(self.path, exc) from None


def new_temp_file(path: Path) -> tuple[int, Path]:
    """A temporary file beside `path` (same filesystem, so the final rename is atomic), with the
    permissions a new file gets from the umask rather than mkstemp's private 0600. Its name is
    short whatever `path` is called: a 255-byte name plus a suffix would not fit NAME_MAX."""
    parent = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path) + f"{os.getpid()}.", suffix=PARTIAL, dir=parent)
    except OSError as exc:
        raise output_error(path, exc) from None
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    return fd, Path(tmp)


@contextmanager
def atomic_file(path: Path, mode: str = "w"):
    """Write a new file: the block writes to a temporary file, renamed into place only if it finishes."""
    fd, tmp = new_temp_file(path)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise output_error(path, exc) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    with atomic_file(path, "w") as fh:
        fh.write(text)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with atomic_file(path, "wb") as fh:
        fh.write(data)


PARTIAL = ".partial"  # the suffix of every temporary beside an output


def temp_prefix(path: Path) -> str:
    """What every temporary beside `path` is named from: `.<name>.`, the name cut to 32 bytes (a
    255-byte name plus a suffix would not fit NAME_MAX); then the writer's pid, a random part and
    `PARTIAL`."""
    stem = Path(path).name.encode("utf-8", "surrogateescape")[:32].decode("utf-8", "ignore")
    return f".{stem}."


def _owner_in_name(name: str) -> int | None:
    """The writer's process id a temporary's name says (`.<name>.<pid>.<random>.partial`), or None
    (a name from before the pid was in it)."""
    parts = name[: -len(PARTIAL)].rsplit(".", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def _inside(a: str, b: str) -> bool:
    """Whether real path `a` is `b` or inside it."""
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep)


def check_new_output(out: Path, inputs: list, force: bool = False, *, folder: bool = False) -> None:
    """Before any work: the output is no input file, is not an input folder nor inside one, holds
    no input, and exists only when `force` says replace it (an empty folder is free); a `folder`
    output never replaces a file, even with `force`. One line each, nothing written."""
    target = os.path.realpath(out)
    reals = _real_inputs(inputs)  # each input's real path once, for the three checks
    for p, real in reals:
        if os.path.isdir(real) and _inside(target, real):
            raise TfrviewError(f"{printable(str(out))}: is inside the input folder {printable(str(p))}")
    _refuse_overwriting(Path(out), target, reals)
    for p, real in reals:
        if _inside(real, target):
            raise TfrviewError(f"{printable(str(out))}: holds the input {printable(str(p))}")
    if not os.path.lexists(out):
        return
    is_folder = os.path.isdir(out) and not os.path.islink(out)
    if folder and not is_folder:
        raise TfrviewError(f"{printable(str(out))}: exists and is no folder")
    if not force and not (is_folder and not any(os.scandir(out))):
        raise TfrviewError(f"{printable(str(out))}: exists (use --force to replace it)")


def new_temp_dir(path: Path) -> Path:
    """A temporary folder beside `path` (its parent made if missing; same filesystem: one rename
    at the end), empty, with the permissions a new folder gets from the umask; its name says this
    process's id (`clean_stale`)."""
    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(path) + f"{os.getpid()}.", suffix=PARTIAL, dir=parent))
    except OSError as exc:
        raise output_error(path, exc) from None
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    return tmp


def swap_in(tmp: Path, path: Path, force: bool) -> None:
    """The finished temporary folder renamed to `path`; an existing `path` (an empty folder, or any
    with `force`) moved aside first and removed after, or put back if the rename fails. `path` is
    looked at again: another writer may have made it since the check. OSError is the caller's."""
    import shutil

    _fsync_dir(tmp)
    old = None
    if os.path.lexists(path):
        is_folder = os.path.isdir(path) and not os.path.islink(path)
        if not force and not (is_folder and not any(os.scandir(path))):
            raise TfrviewError(f"{printable(str(path))}: appeared while writing (use --force to replace it)")
        old = Path(tempfile.mkdtemp(prefix=temp_prefix(path), suffix=".old", dir=tmp.parent))
        os.replace(path, old / "x")
    try:
        os.replace(tmp, path)
    except BaseException:
        if old is not None:
            os.replace(old / "x", path)
            shutil.rmtree(old, ignore_errors=True)
        raise
    _fsync_dir(tmp.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_dir(path: Path, force: bool = True):
    """A new directory, all or nothing: the block fills a temporary directory beside `path`, which
    replaces `path` only when the block finishes (`swap_in`: an older `path` is moved aside first
    and removed after; one that appeared meanwhile only with `force`). An error or a stop leaves
    `path` as it was and no temporary directory behind."""
    import shutil

    tmp = new_temp_dir(path)
    try:
        yield tmp
        swap_in(tmp, path, force)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise output_error(path, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(path: Path) -> list[Path]:
    """Remove the temporaries, files and folders, a killed writer left beside `path` (its process
    is gone: the pid in the name); the ones removed. A temporary whose writer is alive is another
    write still going on, left alone; one whose writer cannot be told (a name without a pid) is left
    alone too, and said in the log."""
    import logging
    import shutil

    log = logging.getLogger(__name__)
    parent = Path(os.path.realpath(path)).parent
    removed = []
    prefix = temp_prefix(path)
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(prefix) and e.name.endswith(PARTIAL)]
    except OSError:
        return []
    for e in entries:
        folder = e.is_dir(follow_symlinks=False)
        pid = _owner_in_name(e.name)
        if pid is None:
            log.info("%s: a temporary of no known writer; left alone", e.path)
            continue
        if _alive(pid):
            continue
        if folder:
            shutil.rmtree(e.path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(e.path)
        removed.append(Path(e.path))
        log.info("removed %s, left by writer process %d", e.path, pid)
    return removed
