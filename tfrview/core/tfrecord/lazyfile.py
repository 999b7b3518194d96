"""Files of a dataset opened when first read, with a bounded number of descriptors held at once.

A split of 10,000 shards used to be opened whole before the window showed a row: a descriptor,
a sniffing read and a compression guess per file (7.2 s). A `LazySource` knows its path, size and
identity from the listing (one `stat` a file); its descriptor is opened, and its compression read
from its first bytes, when it is first framed or read. At most `limits.OPEN_FILES_HELD`
descriptors are held by such files in a process (many systems start with `ulimit -n` at 1,024);
past that the least recently used idle one is closed, and opened again if read again. A file
opened again that is no longer the file listed (`st_dev`, `st_ino`) is said to have been replaced.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path

from tfrview.core import limits
from tfrview.core.arrayrecord.signature import is_riegeli
from tfrview.core.errors import SourceError
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import Compression
from tfrview.core.tfrecord.source import (
    _DETECT_BYTES,
    FileBytes,
    Source,
    detect_compression,
    not_regular,
    open_error,
    open_regular,
)

log = logging.getLogger(__name__)


def _soft_limit() -> int | None:
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


class _Held:
    """The descriptors lazily opened files hold in this process, least recently used first."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lru: OrderedDict[int, LazyFileBytes] = OrderedDict()  # id(file) -> file
        self.opened = 0  # descriptors opened so far (tests count them; a log line says the total)

    def bound(self) -> int:
        """limits.OPEN_FILES_HELD, or a quarter of a lower soft limit on open files."""
        soft = _soft_limit()
        return max(4, min(limits.OPEN_FILES_HELD, soft // 4 if soft else limits.OPEN_FILES_HELD))

    def use(self, f: LazyFileBytes) -> int:
        """The file's descriptor, opened if need be, held until `done(f)`."""
        with self.lock:
            if f._fd is None:
                self._trim(self.bound() - 1)
                try:
                    f._fd = f._open()
                except SourceError as exc:
                    if "too many files" not in str(exc):
                        raise
                    self._trim(len(self.lru) // 2)  # the process is out of descriptors: free some
                    f._fd = f._open()
                self.opened += 1
                self.lru[id(f)] = f
            else:
                self.lru.move_to_end(id(f))
            f._busy += 1
            return f._fd

    def done(self, f: LazyFileBytes) -> None:
        with self.lock:
            f._busy -= 1

    def forget(self, f: LazyFileBytes) -> None:
        with self.lock:
            self.lru.pop(id(f), None)
            if f._fd is not None:
                os.close(f._fd)
                f._fd = None

    def _trim(self, keep: int) -> None:
        """Close idle descriptors, least recently used first, until at most `keep` are held (one
        being read is never closed: past the bound while all are busy, logged)."""
        extra = len(self.lru) - keep
        if extra <= 0:
            return
        idle = []
        for key, f in self.lru.items():  # least recently used first: usually the first one will do
            if f._busy == 0:
                idle.append(key)
                if len(idle) == extra:
                    break
        for key in idle:
            f = self.lru.pop(key)
            os.close(f._fd)
            f._fd = None
        if len(self.lru) > keep:
            log.info("open files: %d held, all in use (OPEN_FILES_HELD %d)", len(self.lru), self.bound())


HELD = _Held()


class LazyFileBytes(FileBytes):
    """`FileBytes` whose descriptor is opened on the first read and may be closed between reads
    (HELD's bound); every read holds it open while it runs."""

    def __init__(self, path: Path, size: int, identity: tuple[int, int]) -> None:  # no super(): no fd yet
        self.size = size
        self.path = path
        self.identity = identity
        self._fd: int | None = None
        self._busy = 0

    @property
    def fd(self) -> int:
        """The descriptor while a read holds it (`HELD.use`)."""
        if self._fd is None:
            raise SourceError(f"{self.path}: not open")
        return self._fd

    def _open(self) -> int:
        fd, st = open_regular(self.path)
        if (st.st_dev, st.st_ino) != self.identity:
            os.close(fd)
            raise SourceError(
                f"{printable(str(self.path))}: the file was replaced since it was opened; reload it"
            )
        return fd

    def readinto(self, offset: int, out: memoryview) -> None:
        HELD.use(self)
        try:
            super().readinto(offset, out)
        finally:
            HELD.done(self)

    def pread(self, offset: int, n: int) -> bytes:
        if n <= 0 or offset >= self.size:
            return b""
        HELD.use(self)
        try:
            return super().pread(offset, n)
        finally:
            HELD.done(self)

    def seek_data(self, pos: int) -> int:
        HELD.use(self)
        try:
            return super().seek_data(pos)
        finally:
            HELD.done(self)

    def close(self) -> None:
        HELD.forget(self)


_AR_ATTRS = frozenset(
    {"ar", "starts", "lengths", "record_count", "stream_size", "opening_problems", "checked", "in_stream"}
)


class LazySource(Source):
    """A local file's `Source` that opens its file and reads its compression on first use."""

    def __init__(self, path: Path, size: int, identity: tuple[int, int]) -> None:
        self._ar = None  # an ArrayRecord file's own source, opened when first read (see `_inner`)
        super().__init__(path, LazyFileBytes(path, size, identity), size, Compression.NONE, identity)
        self._known: Compression | None = None  # (not known until the file is read: `compression`)

    @property
    def compression(self) -> Compression:  # type: ignore[override]
        """Read from the file's first bytes the first time it is asked (SourceError if it cannot be)."""
        if self._known is None:
            self._check_open()
            head = self._data[:_DETECT_BYTES]
            self._known = Compression.ARRAYRECORD if is_riegeli(head) else detect_compression(head)
        return self._known

    # An ArrayRecord file found by its content: read through its own source (opened on first use:
    # its footer is read then), whose attributes the index (`arindex`) asks for pass through.
    def _inner(self):
        if self._ar is None:
            from tfrview.core.tfrecord.source import open_arrayrecord_source

            self._ar = open_arrayrecord_source(self.path)
        return self._ar

    def __getattr__(self, name: str):
        if name in _AR_ATTRS:
            return getattr(self._inner(), name)
        raise AttributeError(name)

    def read(self, offset: int, n: int) -> bytes:
        if self.compression == Compression.ARRAYRECORD:
            return self._inner().read(offset, n)
        return super().read(offset, n)

    def stream(self):
        if self.compression == Compression.ARRAYRECORD:
            return self._inner().stream()
        return super().stream()

    def bulk_reader(self):
        if self.compression == Compression.ARRAYRECORD:
            return self._inner().read
        return super().bulk_reader()

    def close(self) -> None:
        if self._ar is not None:
            self._ar.close()
        super().close()

    @compression.setter
    def compression(self, value) -> None:
        self._known = value if type(value) is Compression else Compression(value)

    @property
    def _wbits(self) -> int:  # type: ignore[override]
        return self.compression.wbits

    @_wbits.setter
    def _wbits(self, value) -> None:
        pass  # (derived from `compression`)

    @property
    def sniffed(self) -> bool:
        """Whether the compression is known yet (without reading the file to find out)."""
        return self._known is not None

    def assume_plain(self) -> None:
        """The compression is known from elsewhere (a stored result of this very file): plain."""
        self._known = Compression.NONE


_UID = os.getuid() if hasattr(os, "getuid") else None


def _readable_by_mode(st: os.stat_result) -> bool:
    """True where the `stat` in hand already says `os.access(R_OK)` would: the (real) user owns the
    file and may read it, or owns it not and its group and everyone else may: no second system
    call a file (10,000 shards). False means: ask `os.access` (groups, root). (An ACL entry that
    denies this very user a file others may read is then said when it is first read.)"""
    mode = st.st_mode
    if _UID is None:
        return False
    if st.st_uid == _UID:
        return bool(mode & 0o400)
    return mode & 0o044 == 0o044


def lazy_source(path: Path) -> Source:
    """A file's source opened later, from one `stat` now: a missing file, a directory, a FIFO or a
    device is refused here, as `open_source` refuses it (SourceError), without opening it. (Its
    names imported once at the top: an import statement run in a function costs ~10 us a call
    under PySide's import hook, 10,000 shards a listing.)"""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise open_error(path, exc) from None
    what = not_regular(st.st_mode)
    if what is not None:
        name = printable(os.fspath(path))
        raise SourceError(
            f"{name}: is a directory" if what == "a directory" else f"{name}: not a regular file ({what})"
        )
    if not _readable_by_mode(st) and not os.access(path, os.R_OK):
        raise open_error(path, OSError(errno.EACCES, "permission denied"))
    p = path if isinstance(path, Path) else Path(path)  # (a Path made again costs ~40 us: 0.4 s a split)
    if st.st_size == 0:
        return Source(p, b"", 0, "none")
    return LazySource(p, st.st_size, (st.st_dev, st.st_ino))


def held() -> int:
    """Descriptors held by lazily opened files now."""
    with contextlib.suppress(Exception), HELD.lock:
        return len(HELD.lru)
    return 0
