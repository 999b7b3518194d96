"""Writing new files atomically: a temporary file beside the destination, then a rename."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.termtext import printable


def refuse_overwriting_inputs(out: Path, inputs: list[Path]) -> None:
    """tfrview never writes to a file it opened for reading (a URL is never the local file written)."""
    from tfrview.core.tfrecord.remote import is_url  # loads 4 more modules, on first use only

    target = os.path.realpath(out)  # never raises, even on a symlink loop (Path.resolve does)
    for p in inputs:
        if is_url(p):
            continue
        try:
            if os.path.realpath(p) == target or (os.path.lexists(out) and os.path.samefile(p, out)):
                raise TfrviewError(f"{printable(str(out))}: refusing to write over an input file")
        except OSError:
            continue


def output_error(path: Path, exc: OSError) -> TfrviewError:
    """The one-line error for an output that cannot be written, naming the file the person asked
    for, never our temporary file."""
    return TfrviewError(f"{printable(str(path))}: cannot write ({exc.strerror or exc})")


def new_temp_file(path: Path) -> tuple[int, Path]:
    """A temporary file beside `path` (same filesystem, so the final rename is atomic), with the
    permissions a new file gets from the umask rather than mkstemp's private 0600. Its name is
    short whatever `path` is called: a 255-byte name plus a suffix would not fit NAME_MAX."""
    parent = path.parent if str(path.parent) else Path(".")
    stem = path.name.encode("utf-8", "surrogateescape")[:32].decode("utf-8", "ignore")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=".partial", dir=parent)
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


def check_new_output(out: Path, inputs: list[Path], force: bool = False) -> None:
    """Before any work: the output is no input, is not inside an input folder nor holds one, and
    exists only when `force` says replace it (one line each, nothing written)."""
    from tfrview.core.tfrecord.remote import is_url

    refuse_overwriting_inputs(out, inputs)
    target = os.path.realpath(out)
    for p in inputs:
        if is_url(p):
            continue
        real = os.path.realpath(p)
        if os.path.isdir(real) and (target + os.sep).startswith(real.rstrip(os.sep) + os.sep):
            raise TfrviewError(f"{printable(str(out))}: inside the input folder {printable(str(p))}")
        if (real + os.sep).startswith(target.rstrip(os.sep) + os.sep):
            raise TfrviewError(f"{printable(str(out))}: holds the input {printable(str(p))}")
    if os.path.lexists(out) and not force and not (os.path.isdir(out) and not os.listdir(out)):
        raise TfrviewError(f"{printable(str(out))}: exists (use --force to replace it)")


@contextmanager
def atomic_dir(path: Path):
    """A new directory, all or nothing: the block fills a temporary directory beside `path`, which
    replaces `path` only when the block finishes (an older `path` is moved aside first and removed
    after). An error or a stop leaves `path` as it was and no temporary directory behind."""
    import shutil

    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name[:32]}.", suffix=".partial", dir=parent))
    except OSError as exc:
        raise output_error(path, exc) from None
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    try:
        yield tmp
        old = None
        if os.path.lexists(path):
            old = Path(tempfile.mkdtemp(prefix=f".{path.name[:32]}.", suffix=".old", dir=parent))
            os.replace(path, old / "x")
        os.replace(tmp, path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise output_error(path, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def remove_partials(path: Path) -> int:
    """Remove the temporaries a stopped write to `path` left beside it (a job process killed before
    its rename: `new_temp_file`'s and `atomic_dir`'s `.<name>.*.partial`). Returns how many."""
    import glob
    import shutil

    parent = path.parent if str(path.parent) else Path(".")
    n = 0
    for p in parent.glob(f".{glob.escape(path.name[:32])}.*.partial"):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        n += 1
    return n
