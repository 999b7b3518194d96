"""Several files seen as one numbered sequence of records.

Arguments may be files, directories, globs, or shard patterns such as `train-?????-of-00016`.
Files are indexed in order, so global record numbers of file k are final once files < k are done.
"""

from __future__ import annotations

import contextlib
import gc
import glob
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tfrview.core.errors import RecordRangeError, SourceError, TfrviewError
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import OVERHEAD
from tfrview.core.tfrecord.groups import SHARD_NAME, one_folder_set, one_set
from tfrview.core.tfrecord.index import IndexChunk, RecordIndex, scan
from tfrview.core.tfrecord.lazyfile import lazy_source
from tfrview.core.tfrecord.paths import note_label_names, note_not_links, real_path, real_paths
from tfrview.core.tfrecord.payload_bytes import bounded_payload
from tfrview.core.tfrecord.remote import RemotePath, is_url
from tfrview.core.tfrecord.source import Source, open_remote_many

# Files in a directory that are never record files.
_SIDE_FILES = {
    ".idx",
    ".index",
    ".tfindex",
    ".pbtxt",
    ".json",
    ".jsonl",
    ".txt",
    ".md",
    ".csv",
    ".yaml",
    ".yml",
    ".py",
    ".png",
    ".jpg",
    ".jpeg",
    ".html",
    ".parquet",  # a fact table export or a rewrite's provenance beside the shards
    ".lock",
}
log = logging.getLogger(__name__)


@contextlib.contextmanager
def _no_cyclic_gc():
    """The cyclic collector paused while many objects that hold no cycles are made: its passes,
    triggered by every 700 allocations, walk a heap that grows with them (~0.3 s of 10,000 shards
    opened in a window's process)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_DIGITS = re.compile(r"(\d+)")


def _natural_key(p: Path):
    return _natural_name_key(str(p))


def _natural_name_key(name: str):
    return [int(t) if t.isdigit() else t for t in _DIGITS.split(name)]


def _ext(name: str) -> str:
    """`os.path.splitext(name)[1].lower()` of a name that does not start with a dot (a listing's
    names: 10,000 shards)."""
    i = name.rfind(".")
    return name[i:].lower() if i > 0 else ""


_ZEROS = str.maketrans("123456789", "000000000")


def _natural_sorted(names: list[str]) -> list[str]:
    """Names in natural order (`_natural_name_key`). Names of one length whose digits stand at the
    same places (a set of shards, `train-00042-of-01024`) are in natural order when in plain text
    order: sorted so, without a key a name (10,000 shards: ~25 ms to ~3 ms)."""
    if names:
        shape = names[0].translate(_ZEROS)
        if all(n.translate(_ZEROS) == shape for n in names):
            return sorted(names)
    return sorted(names, key=_natural_name_key)


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:  # a symlink loop, a name too long: not a directory we can list
        return False


def expand_arg(a: str, whole_tfds: bool = True) -> list[Path]:
    """Files one argument names, in natural order. Raises TfrviewError if it names nothing.
    A URL names remote objects (listed once; see `remote.expand`), as `RemotePath`s. A TFDS
    folder names its shards (`_tfds_files`), and so does one of its shards unless `whole_tfds` is
    False (`--split NAME=SHARD` names that shard alone)."""
    from tfrview.core.tfrecord.remote import RemotePath, expand, is_url

    if is_url(a):
        found = [RemotePath(r.url) for r in expand(a)]
        if glob.has_magic(a) or a.endswith("/") or len(found) > 1:  # a listing: side files are not records
            found = [p for p in found if not p.name.startswith(".") and p.suffix.lower() not in _SIDE_FILES]
        if not found:
            raise TfrviewError(f"{printable(a)}: no record files there")
        return found
    p = Path(a)
    tfds = _tfds_files(a, p) if whole_tfds or _is_dir(p) else None
    if tfds is not None:
        return tfds
    if _is_dir(p):
        tfx = _tfx_split_folders(p)
        if tfx:  # a TFX ExampleGen output: its Split-*/ folders' files, split by split
            return [f for d in tfx for f in _list_dir(str(d), d)]
        return _list_dir(a, p)
    if os.path.lexists(a) or not glob.has_magic(a):
        return [p]  # opening it says what is wrong with it, if anything
    found = [Path(m) for m in glob.glob(a) if Path(m).is_file()]
    if not found:
        raise TfrviewError(f"{printable(a)}: no files match")
    return sorted(found, key=_natural_key)


TFX_SPLIT = "Split-"  # TFX names an artifact's split folders so (ExampleGen's `Split-train/`)


def _tfx_split_folders(p: Path) -> list[Path]:
    """A TFX artifact folder's `Split-*` folders (ExampleGen's output: `Split-train/`,
    `Split-eval/`, gzip TFRecords in each), when it holds such folders and no files of its own;
    else none. `splits.split_of_path` names each file's split by its folder."""
    folders = []
    try:
        with os.scandir(p) as it:
            for e in it:
                n = e.name
                if n.startswith("."):
                    continue
                if e.is_dir():
                    if n.startswith(TFX_SPLIT):
                        folders.append(p / n)
                elif os.path.splitext(n)[1].lower() not in _SIDE_FILES:
                    return []  # a record file of its own (a folder of shards: its first entry, not 10,000)
    except OSError:
        return []
    return sorted(folders)


def _list_dir(a: str, p: Path) -> list[Path]:
    """A folder's record files (not its side files), by name."""
    labels: list[str] = []  # its .pbtxt names, for the label map search (`paths.label_names`)
    try:  # scandir: a file's type from the listing itself, not a stat a file (10,000 shards)
        seen_at = os.stat(p).st_mtime_ns  # (before the listing: a name added meanwhile changes it)
        with os.scandir(p) as it:
            entries = []
            for e in it:  # (`_record_name` written out: 10,000 shards a listing)
                n = e.name
                if n[:1] == ".":
                    continue
                i = n.rfind(".")
                ext = n[i:].lower() if i > 0 else ""
                if ext in _SIDE_FILES:
                    if ext == ".pbtxt":
                        labels.append(n)
                    continue
                if e.is_file():
                    entries.append((n, e.is_symlink()))
    except OSError as exc:
        raise TfrviewError(f"{printable(a)}: cannot list the directory ({exc.strerror or exc})") from None
    note_label_names(str(p), seen_at, labels)
    if not entries:
        raise TfrviewError(f"{printable(a)}: directory has no record files")
    note_not_links(str(p), [n for n, link in entries if not link])  # (`real_path` needs no lstat of them)
    names = _natural_sorted([n for n, _ in entries])  # one folder: by name alone
    child = getattr(p, "_make_child_relpath", p.__truediv__)  # (a name of the listing: not parsed again)
    return [child(n) for n in names]


def _tfds_files(a: str, p: Path) -> list[Path] | None:
    """When `a` is a TFDS folder or a file in its version folder (`tfds.layout`): the shards its
    metadata names that are there, in metadata order, then the folder's other record files (what
    metadata that is partly wrong does not name still opens). None when it is no TFDS folder, or
    its metadata cannot be read: the folder is then listed as any other (`Dataset.tfds` says why)."""
    from tfrview.core.tfrecord.tfdsfiles import dataset_of, present

    is_dir = _is_dir(p)
    if not (is_dir or os.path.isfile(a)) or (not is_dir and p.suffix.lower() in _SIDE_FILES):
        return None
    ds = dataset_of(p)
    if ds is None or ds.info is None:
        return None
    here, gone = present(ds)
    named = {os.path.basename(k) for k in ds.expected}
    try:  # the folder's other record files, as `_list_dir` sees them: a Path only for those
        with os.scandir(ds.root) as it:
            others = [
                ds.root / e.name
                for e in it
                if e.name not in named
                and not e.name.startswith(".")
                and os.path.splitext(e.name)[1].lower() not in _SIDE_FILES
                and e.is_file()
            ]
    except OSError:
        others = []
    found = here + sorted(others, key=lambda f: _natural_name_key(f.name))
    if not found:
        raise TfrviewError(
            f"{printable(a)}: none of the {len(gone):,} shards {ds.root.name}/dataset_info.json names is there"
        )
    return found


def expand_paths(args: list[str]) -> list[Path]:
    """Files named by the arguments, in a stable natural order, each once. Raises TfrviewError if
    an argument names nothing."""
    return _unique([p for a in args for p in expand_arg(a)])


def name_files(args: list[str], whole_tfds: bool = True) -> tuple[list[tuple[Path, str]], list[Path]]:
    """What the arguments name, without opening anything: ((argument, why it names nothing) for
    each that names nothing, in order) and the files, each once, in natural order."""
    named: list[Path] = []
    failed: list[tuple[Path, str]] = []
    seen: set[str] = set()
    for a in args:
        if a in seen:  # a shard a TFDS folder's metadata named already (a shell's glob of its shards)
            continue
        try:
            found = expand_arg(a, whole_tfds)
            named += found
            if len(found) > 1:
                seen.update(str(f) for f in found)
        except TfrviewError as exc:
            failed.append((RemotePath(a) if is_url(a) else Path(a), str(exc)))
    return failed, _unique(named)


def _unique(paths: list[Path]) -> list[Path]:
    if not any(isinstance(p, RemotePath) for p in paths):
        keys = real_paths(paths)  # (folder by folder: 10,000 shards)
        if len(set(keys)) == len(keys):
            return paths
    else:
        keys = [str(p) if isinstance(p, RemotePath) else real_path(p) for p in paths]
    seen: set[str] = set()
    unique = []
    for p, key in zip(paths, keys, strict=True):
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def shard_name(paths: list[Path]) -> str:
    """A short name for a dataset: the file name, or the shard pattern `train-?????-of-00016`."""
    if not paths:
        return "(no files)"
    if len(paths) == 1:
        return paths[0].name
    if one_set([p.name for p in paths]) is not None:  # one set's shards: the first name says it
        m = [SHARD_NAME.match(paths[0].name)]
    else:
        m = [SHARD_NAME.match(p.name) for p in paths]
    if all(m) and len({x.group("prefix", "total", "suffix") for x in m}) == 1:
        x = m[0]
        return f"{x['prefix']}{'?' * len(x['num'])}-of-{x['total']}{x['suffix']}"
    parents = {p.parent for p in paths}
    where = f" in {next(iter(parents)).name or '.'}" if len(parents) == 1 else ""
    return f"{len(paths)} files{where}"


def missing_shard_paths(paths: list[Path]) -> list[Path]:
    """Where the shards a `-NNNNN-of-MMMMM` set should have but does not would be, e.g. a copy that
    stopped early: the one answer `verify`, `info`, `dump` and the window all give."""
    groups: dict[tuple, tuple[Path, set[int]]] = {}
    whole = _one_folder_set(paths)
    if whole is not None:  # one folder's one set (10,000 shards): its numbers without a match a name
        key, parent, nums = whole
        groups[key] = (parent, nums)
        paths = []
    for p in paths:
        name = p.name
        m = SHARD_NAME.match(name)
        if m:
            prefix, num, total, suffix = m.groups()
            key = (str(p)[: -len(name)], prefix, total, suffix, len(num))  # (the parent's text: no Path made)
            group = groups.get(key)
            if group is None:
                group = groups[key] = (p.parent, set())
            group[1].add(int(num))
    missing = []
    for (_parent, prefix, total, suffix, width), (parent, nums) in groups.items():
        for i in range(int(total)):
            if i not in nums:
                name = f"{prefix}{i:0{width}d}-of-{total}{suffix}"
                missing.append(
                    RemotePath(f"{str(parent).rstrip('/')}/{name}")
                    if isinstance(parent, RemotePath)
                    else parent / name
                )
    return missing


def _one_folder_set(paths: list[Path]) -> tuple[tuple, Path, set[int]] | None:
    """`missing_shard_paths`' one group when every path is in one folder and the names are one
    `-of-N` set's (`groups.one_folder_set`): (its key, the folder, the numbers); else None."""
    if any(type(p) is not type(paths[0]) for p in paths):
        return None
    texts = [str(p) for p in paths]
    got = one_folder_set(texts)
    if got is None:
        return None
    cut, a, b = got
    m = SHARD_NAME.match(texts[0][cut:])
    key = (texts[0][:cut], m["prefix"], m["total"], m["suffix"], b - a)
    return key, paths[0].parent, {int(t[cut + a : cut + b]) for t in texts}


def missing_shards(paths: list[Path]) -> list[str]:
    """The names of `missing_shard_paths`."""
    return [p.name for p in missing_shard_paths(paths)]


def missing_shard_problem(path: Path) -> Problem:
    """The problem a missing shard is: file-level (no offset, no record), named by the file expected."""
    from tfrview.core.problems import ProblemKind

    m = SHARD_NAME.match(path.name)
    total = int(m["total"]) if m else 0
    msg = f"{printable(path.name)} is not there: the set's names say it has {total:,} shards"
    return Problem(ProblemKind.MISSING_SHARD, 0, None, None, msg)


def gap_problems(paths: list[Path], tfds: list | None = None) -> list[tuple[Path, Problem]]:
    """Each shard that should be there and is not, with its problem: those a TFDS folder's
    metadata names (`split_missing_shard`, `tfds`: `tfds_datasets` of the arguments) first, then
    those a `-of-N` set's names expect (`missing_shard`), each once. What `open`, `verify` and
    `info` all say."""
    named = [gap for ds in tfds or [] for gap in _tfds_missing(ds)]
    said = {str(p) for p, _ in named}
    return named + [(p, missing_shard_problem(p)) for p in missing_shard_paths(paths) if str(p) not in said]


def tfds_datasets(args: list[str]) -> list:
    """The TFDS datasets (tfds.layout) the local arguments are or are in, each once; a folder of
    several configs says so when its argument is expanded, not here."""
    from tfrview.core.tfrecord.tfdsfiles import dataset_of

    out, roots = [], set()
    for a in args:
        if is_url(a) or not os.path.lexists(a):
            continue
        try:
            ds = dataset_of(Path(a))
        except TfrviewError:
            continue
        if ds is not None and str(ds.root) not in roots:
            roots.add(str(ds.root))
            out.append(ds)
    return out


def _tfds_missing(ds) -> list[tuple[Path, Problem]]:
    from tfrview.core.tfrecord.tfdsfiles import missing_of

    return missing_of(ds) if ds.info is not None else []


def _mark_expected(files: list[RecordFile], tfds: list) -> None:
    """Each TFDS shard's split and records by `shardLengths`, for `_check_length`."""
    expected: dict[str, tuple[str, int | None]] = {}
    for ds in tfds:
        expected.update(ds.expected)
    for f in files:
        hit = expected.get(str(f.path))
        if hit is not None:
            f.split, f.expected_records = hit


def _check_length(f: RecordFile) -> list[Problem]:
    """A `shard_length_mismatch` on a framed TFDS shard whose intact records differ from
    `shardLengths` (`tfdsfiles.length_problem`'s wording), added once; what was added."""
    if (
        f.expected_records is None
        or not f.index.done
        or any(p.kind == ProblemKind.SHARD_LENGTH_MISMATCH for p in f.index.problems)
    ):
        return []
    from tfrview.core.tfrecord.status import damaged_mask
    from tfrview.core.tfrecord.tfdsfiles import length_problem

    # framed and not found damaged: the window frames first and checks CRCs later (`unverified`)
    intact = f.index.count - int(np.count_nonzero(damaged_mask(f.index.status)))
    problem = length_problem(f.path, intact)
    if problem is None:
        return []
    f.index.problems.append(problem)
    return [problem]


def allow_open_files(n: int) -> None:
    """Raise the soft limit on open files (often 1,024) toward the hard limit when a dataset of
    thousands of shards needs it; past the hard limit, files that cannot be opened say so."""
    try:
        import resource
    except ImportError:  # not on Windows
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < n:
        want = n if hard == resource.RLIM_INFINITY else min(n, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def _insert_in_place(files: list[RecordFile], gap: RecordFile) -> None:
    """Insert a missing shard before the first file of its folder named after it (natural order),
    else after the last file of its folder: the person's own order of arguments is kept."""
    key, parent = _natural_key(gap.path), str(gap.path.parent)
    same = [i for i, f in enumerate(files) if str(f.path.parent) == parent]
    after = [i for i in same if _natural_key(files[i].path) > key]
    files.insert(after[0] if after else (same[-1] + 1 if same else len(files)), gap)


@dataclass
class RecordFile:
    """One file of a dataset: its source (None if it could not be opened) and its index."""

    path: Path
    source: Source | None
    index: RecordIndex = field(default_factory=RecordIndex)
    error: str | None = None
    missing: bool = False  # a shard the set's `-of-N` names expect, not there (`error` says so)
    # a TFDS shard (tfds.layout): its split and records by dataset_info.json's shardLengths
    split: str = ""
    expected_records: int | None = None
    gap_kind: ProblemKind = ProblemKind.MISSING_SHARD  # what a missing one is: by `-of-N` or by metadata

    @property
    def compression(self) -> str:
        return self.source.compression if self.source is not None else "none"


class Dataset:
    def __init__(
        self,
        files: list[RecordFile],
        name: str | None = None,
        missing: list[str] | None = None,
        tfds: list | None = None,
    ) -> None:
        self.files = files
        present = [f.path for f in files if not f.missing]
        self.tfds = tfds or []  # the TFDS datasets (tfds.layout.TfdsDataset) the arguments named
        self.name = name or (self.tfds[0].title if len(self.tfds) == 1 else shard_name(present))
        self.missing = missing_shards(present) if missing is None else missing  # (`open` knows it)

    @classmethod
    def open(cls, args: list[str]) -> Dataset:
        """Every file named, opened read-only when first read (`lazyfile`: one `stat` a file now, no
        descriptor). A file that cannot be opened stays in the list with its error."""
        if not args:
            raise TfrviewError("no files given")
        names, paths = name_files(args)
        failed = [RecordFile(p, None, error=err) for p, err in names]  # arguments that name nothing
        remote = open_remote_many([p for p in paths if isinstance(p, RemotePath)])
        files = []
        with _no_cyclic_gc():  # tens of thousands of new objects: the collector's passes cost more
            for p in paths:
                try:
                    src = remote[p] if isinstance(p, RemotePath) else lazy_source(p)
                    if isinstance(src, SourceError):
                        raise src
                    files.append(RecordFile(p, src))
                except SourceError as exc:
                    files.append(RecordFile(p, None, error=str(exc)))
        tfds = tfds_datasets(args)
        gaps = gap_problems(paths, tfds)
        for gap, problem in gaps:  # a row where the shard would be, saying it is not there
            _insert_in_place(
                files, RecordFile(gap, None, error=problem.message, missing=True, gap_kind=problem.kind)
            )
        if tfds:
            _mark_expected(files, tfds)
        return cls(failed + files, missing=[p.name for p, _ in gaps], tfds=tfds)

    # numbering -----------------------------------------------------------------------------------

    def starts(self) -> np.ndarray:
        counts = np.array([f.index.count for f in self.files], dtype=np.int64)
        return np.concatenate([[0], np.cumsum(counts)])

    @property
    def count(self) -> int:
        return sum(f.index.count for f in self.files)

    def locate(self, n: int, starts: np.ndarray | None = None) -> tuple[int, int]:
        """(file number, local record number) of global record n; `starts`: `starts()` as the
        caller took it for many records (each call walks every file: 10,000 shards)."""
        starts = self.starts() if starts is None else starts
        if not 0 <= n < starts[-1]:
            raise RecordRangeError(f"record {n} out of range (0..{int(starts[-1]) - 1})")
        fi = int(np.searchsorted(starts, n, side="right")) - 1
        return fi, n - int(starts[fi])

    def numbers_with(self, bits: int) -> np.ndarray:
        """Global numbers of the records whose status has any of `bits` (e.g. BAD_DATA_CRC), at numpy
        speed: never a Python loop over records on a UI thread."""
        starts = self.starts()
        parts = [
            np.flatnonzero(f.index.status & bits) + starts[fi]
            for fi, f in enumerate(self.files)
            if f.index.count
        ]
        return np.concatenate(parts).astype(np.int64) if parts else np.empty(0, dtype=np.int64)

    def global_number(self, file_no: int, local: int) -> int:
        return int(self.starts()[file_no]) + local

    def opens(self, fi: int) -> bool:
        """Whether file `fi` can be read, opening it if it was not yet (`lazyfile`). One that cannot
        be any more (removed, replaced or made unreadable since it was listed) is kept as `open`
        keeps a file that cannot be opened: no source, its error said (logged), the rest go on."""
        f = self.files[fi]
        if f.source is None:
            return False
        try:
            f.source.compression  # noqa: B018 (a lazily opened file is opened and sniffed here)
        except SourceError as exc:
            log.warning("%s", exc)
            src, f.source, f.error = f.source, None, str(exc)
            src.close()
            return False
        return True

    def compressions_known(self) -> tuple[frozenset[str], bool]:
        """The compressions of the files read so far, without opening any (`lazyfile`), and
        whether that is every file's. Each call looks again only at the files not read at the last
        (the window's status line asks at every progress report: 10,000 files walked each time)."""
        pending = getattr(self, "_unsniffed", None)
        if pending is None or getattr(self, "_sniff_files", 0) != len(self.files):
            pending, self._comps, self._sniff_files = range(len(self.files)), set(), len(self.files)
        left = []
        for i in pending:
            src = self.files[i].source
            if src is None:
                continue
            if getattr(src, "sniffed", True):
                self._comps.add(src.compression)
            else:
                left.append(i)
        self._unsniffed = left
        return frozenset(self._comps), not left

    # reading ---------------------------------------------------------------------------------------

    def record_span(self, n: int, starts: np.ndarray | None = None) -> tuple[RecordFile, int, int, int]:
        fi, k = self.locate(n, starts)
        f = self.files[fi]
        return f, k, int(f.index.offsets[k]), int(f.index.lengths[k])

    def read(self, n: int, starts: np.ndarray | None = None) -> bytes:
        """The payload of global record n (a copy: safe to hand to other threads); only its head,
        as a PayloadHead, when it is over the decode limit (limits.MAX_DECODE_BYTES). `starts`: as
        for `locate`."""
        f, _, off, ln = self.record_span(n, starts)
        if f.source is None:
            raise SourceError(f"{f.path}: not open")
        return bounded_payload(f.source.read, off, ln, f.source.pieces)

    def prefetch(self, numbers) -> None:
        """Records about to be read one by one (the rows on screen): a remote file's are fetched
        together, in one batched request per file. Local files: nothing to do."""
        if not any(f.source is not None and f.source.remote for f in self.files):
            return
        by_file: dict[int, list[tuple[int, int]]] = {}
        for n in numbers:
            if not 0 <= n < self.count:
                continue
            fi, k = self.locate(n)
            f = self.files[fi]
            if f.source is not None and f.source.remote:
                by_file.setdefault(fi, []).append(
                    (int(f.index.offsets[k]), int(f.index.lengths[k]) + OVERHEAD)
                )
        for fi, spans in by_file.items():
            with contextlib.suppress(SourceError):  # said when the record itself is read
                self.files[fi].source.prefetch(spans)

    # indexing --------------------------------------------------------------------------------------

    def check_length(self, fi: int) -> list[Problem]:
        """File `fi`'s `shard_length_mismatch`, once it is framed to its end, added to its problems
        (for a framing taken whole: the window's store, pool or child); what was added."""
        return _check_length(self.files[fi])

    def scan(self, **kw) -> Iterator[tuple[int, IndexChunk]]:
        """Index every file in order, applying each chunk to its file's index before yielding it."""
        for fi in range(len(self.files)):
            yield from self.scan_file(fi, **kw)

    def scan_file(self, fi: int, **kw) -> Iterator[tuple[int, IndexChunk]]:
        f = self.files[fi]
        if f.index.done or not self.opens(fi):
            return
        for chunk in scan(f.source, **kw):
            f.index.apply(chunk)
            if f.index.done:
                _check_length(f)
            yield fi, chunk

    def frame_and_verify(self) -> None:
        """Every open file framed and verified as `tfrview verify` does it (`index_and_verify`, with
        its second framing where a header swallowed whole records): the one record numbering that
        `dump`, `salvage`, `repair` and the reports share. Every CRC is read."""
        from tfrview.core.childproc import cores
        from tfrview.core.tfrecord.report import index_and_verify, sort_problems

        for f in self.files:
            if f.source is not None:
                idx, found = index_and_verify(f.source, jobs=cores())  # a big plain file: in parts
                idx.problems[:] = sort_problems(list(idx.problems) + found)
                f.index = idx
                _check_length(f)

    def problems(self) -> list[tuple[int, Problem]]:
        return [(fi, p) for fi, f in enumerate(self.files) for p in f.index.problems]

    def close(self) -> None:
        for f in self.files:
            if f.source is not None:
                f.source.close()

    def __enter__(self) -> Dataset:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
