"""Where a TFDS prepared dataset is, and which shards its metadata names.

TFDS prepares `<data_dir>/<name>[/<config>]/<version>/` holding `dataset_info.json` and the shards
its splits' `filepathTemplate`s name. `find(path)` takes the version folder, the dataset or config
folder (the newest complete version, by version order; `*incomplete*` folders are skipped and
`TfdsDataset.chosen` says which was taken) or any file inside the version folder, and answers with
every split's shard paths in shard order and the lengths `shardLengths` gives them: what
`tfrecord.dataset` opens and `tfrecord.splits` reads, before any shard is read. Bad metadata is
never a traceback: `TfdsDataset.problem` says in one line what is wrong, and `info` is None when
`dataset_info.json` could not be read at all (the folder is then opened as plain files).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import NAME_MEMO
from tfrview.core.termtext import printable
from tfrview.core.tfds.info import INFO_FILE, DatasetInfo, InfoError, read_info, shard_names

log = logging.getLogger(__name__)

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
FEATURES_FILE = "features.json"
_FEW_FILES = 64  # files a dataset or config folder may hold beside its versions (a heuristic, no bound)


@dataclass(frozen=True)
class TfdsSplit:
    name: str
    shards: tuple[Path, ...]  # every shard the metadata names, present or not, in shard order
    lengths: tuple[int, ...] | None  # records each holds by `shardLengths` (None: not said)


@dataclass(frozen=True)
class TfdsDataset:
    root: Path  # the version folder
    info: DatasetInfo | None
    splits: tuple[TfdsSplit, ...]
    chosen: str = ""  # "version 1.2.0, the newest of 1.0.0, 1.2.0": said when a dataset folder was opened
    problem: str = ""  # one line: what is wrong with the metadata (or "")
    newest_of: int = 0  # opened from a dataset or config folder: the complete versions it holds

    @property
    def title(self) -> str:
        """`mnist/3.0.1` or `bridge/default/1.0.0`: the name a window or report shows."""
        if self.info is None or not self.info.name:
            return self.root.name
        parts = [self.info.name, self.info.config_name, self.info.version or self.root.name]
        return "/".join(p for p in parts if p)

    def paths(self) -> list[Path]:
        """Every shard named, splits in metadata order."""
        return [p for s in self.splits for p in s.shards]

    @cached_property
    def expected(self) -> dict[str, tuple[str, int | None]]:
        """(split, records by `shardLengths`) of each named shard, by its path as text (made once:
        `splits.split_of_files` asks it of each of thousands of shards)."""
        out: dict[str, tuple[str, int | None]] = {}
        for s in self.splits:
            for k, p in enumerate(s.shards):
                out[str(p)] = (s.name, s.lengths[k] if s.lengths is not None else None)
        return out


def version_key(name: str) -> tuple[int, int, int] | None:
    m = _VERSION.fullmatch(name)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def _subfolders(folder: Path) -> list[str] | None:
    """The folders in `folder`, or None once it holds more than _FEW_FILES files: a folder of
    shards is no dataset or config folder, and 10,000 of them are not listed for it."""
    names, files = [], 0
    try:
        with os.scandir(folder) as it:
            for e in it:
                if _is_dir(e):
                    names.append(e.name)
                else:
                    files += 1
                    if files > _FEW_FILES:
                        return None
    except OSError:
        return None
    return names


def _versions(folder: Path, names: list[str] | None = None) -> list[str]:
    """Complete version folders (with a dataset_info.json) in version order."""
    if names is None:
        names = _subfolders(folder) or []
    ok = [
        n
        for n in names
        if version_key(n) is not None and "incomplete" not in n and os.path.isfile(folder / n / INFO_FILE)
    ]
    return sorted(ok, key=version_key)  # type: ignore[arg-type, return-value]


def _is_dir(e: os.DirEntry) -> bool:
    try:
        return e.is_dir()
    except OSError:
        return False


class TfdsChoiceError(TfrviewError):
    """A folder of several TFDS configs (or datasets) opened without saying which: its one line
    names them; `choices` lists every config and version, for a window to ask which."""

    def __init__(self, message: str, folder: Path, choices: tuple[TfdsChoice, ...]) -> None:
        super().__init__(message)
        self.folder = folder
        self.choices = choices


@dataclass(frozen=True)
class TfdsChoice:
    """One version folder of a dataset or config folder, with what its metadata says of its splits."""

    config: str  # the config (or dataset) folder's name; "" for a version right in the folder
    version: str
    folder: Path  # the version folder
    splits: tuple[tuple[str, int | None], ...]  # (split, records by its shardLengths; None: not said)
    problem: str = ""  # its dataset_info.json could not be read (one line)

    @property
    def label(self) -> str:
        """`default/1.0.0`, or `1.0.0` for a version right in the folder opened."""
        return f"{self.config}/{self.version}" if self.config else self.version

    def splits_text(self) -> str:
        """`train 60,000 · test 10,000` (`?` where the metadata says no count)."""
        if self.problem:
            return self.problem
        return " · ".join(f"{n} {c:,}" if c is not None else f"{n} ?" for n, c in self.splits) or "no splits"


def choices(folder: Path) -> tuple[TfdsChoice, ...]:
    """Every complete version a dataset or config folder holds (its own versions, then each
    config's, configs by name, versions in version order), each with its splits' counts from its
    `dataset_info.json` (read strictly as data; one that cannot be read says why)."""
    folder = Path(folder)
    subs = _subfolders(folder) or []
    out = [_choice("", v, folder / v) for v in _versions(folder, subs)]
    for c in sorted(n for n in subs if not n.startswith(".")):
        out.extend(_choice(c, v, folder / c / v) for v in _versions(folder / c))
    return tuple(out)


def _choice(config: str, version: str, root: Path) -> TfdsChoice:
    try:
        info = read_info(root / INFO_FILE)
    except InfoError as exc:
        return TfdsChoice(config, version, root, (), str(exc))
    return TfdsChoice(config, version, root, tuple((s.name, s.num_examples) for s in info.splits))


def pick(path: Path, config: str | None = None, version: str | None = None) -> Path:
    """The version folder of `config` (a config or dataset folder's name) and `version` in the
    TFDS folder `path` (each None: the only one, or the newest version): what `--tfds-config` and
    `--tfds-version` open. A TfrviewError names the choices when none fits."""
    path = Path(path)
    found = choices(path)
    if not found:
        raise TfrviewError(f"{printable(str(path))}: no TFDS dataset versions here to choose from")
    configs = sorted({c.config for c in found})
    if config is not None:
        if config not in configs:
            raise TfrviewError(
                f"{printable(str(path))}: no TFDS config {printable(config)} (it holds {_listed(configs)})"
            )
        found = tuple(c for c in found if c.config == config)
    elif len(configs) > 1:
        raise _choice_error(path, found)
    if version is not None:
        hit = [c for c in found if c.version == version]
        if not hit:
            have = [c.version for c in found]
            raise TfrviewError(
                f"{printable(str(path))}: no TFDS version {printable(version)} (it holds {_listed(have)})"
            )
        return hit[-1].folder
    return found[-1].folder  # the newest (version order)


def _listed(names: list[str], most: int = 10) -> str:
    shown = ", ".join(printable(n) or "(the folder itself)" for n in names[:most])
    return shown + (", ..." if len(names) > most else "")


def _choice_error(path: Path, found: tuple[TfdsChoice, ...]) -> TfdsChoiceError:
    configs = sorted({c.config for c in found if c.config})
    return TfdsChoiceError(
        f"{printable(str(path))}: holds {len(configs)} TFDS datasets or configs "
        f"({_listed([c.label for c in found])}): open one",
        path,
        found,
    )


def version_folder(path: Path) -> tuple[Path, str] | None:
    """The version folder `path` is, is in, or holds (newest version; then one config's newest),
    and what was chosen ("" when `path` named it); None when no dataset_info.json is there.
    A dataset folder with several configs is a TfdsChoiceError naming them (each config/version)."""
    if os.path.isfile(path / INFO_FILE):
        return path, ""
    if not path.is_dir():
        parent = path.parent
        return (parent, "") if os.path.isfile(parent / INFO_FILE) else None
    subs = _subfolders(path)
    if not subs:
        return None
    versions = _versions(path, subs)
    if versions:
        pick = versions[-1]
        said = (
            f"version {pick}, the newest of {', '.join(versions)}" if len(versions) > 1 else f"version {pick}"
        )
        return path / pick, said
    configs = sorted(n for n in subs if not n.startswith(".") and _versions(path / n))
    if len(configs) == 1:
        v = _versions(path / configs[0])
        newest = f", the newest of {', '.join(v)}" if len(v) > 1 else ""
        return path / configs[0] / v[-1], f"{configs[0]}/{v[-1]}{newest}, the only dataset or config there"
    if configs:
        raise _choice_error(path, choices(path))
    return None


_memo: dict[tuple, TfdsDataset] = {}


def find(path: Path) -> TfdsDataset | None:
    """The TFDS dataset `path` is part of (see the module's text), or None when it is none."""
    where = version_folder(Path(path))
    if where is None:
        return None
    root, chosen = where
    info_path = root / INFO_FILE
    try:
        st = info_path.stat()
        key = (str(root), st.st_mtime_ns, st.st_size, st.st_ino, chosen)  # one object a way in
    except OSError:
        key = None
    if key is not None and key in _memo:
        return _memo[key]
    ds = _read(root, chosen)
    if chosen:
        ds = replace(ds, newest_of=len(_versions(root.parent)))
    if key is not None:
        if len(_memo) >= NAME_MEMO:
            _memo.clear()
        _memo[key] = ds
    return ds


def _read(root: Path, chosen: str) -> TfdsDataset:
    try:
        info = read_info(root / INFO_FILE)
    except InfoError as exc:
        log.info("%s", exc)  # said by whoever opens it: `TfdsDataset.problem`
        return TfdsDataset(root, None, (), chosen, f"{exc}: its shards opened as plain files")
    splits = []
    problems = list(info.notes)
    for s in info.splits:
        names = shard_names(info, s)
        bad = [n for n in names if not _inside(n)]
        if bad:
            problems.append(
                f"split {printable(s.name)}: shard name {printable(bad[0])[:80]} leaves the folder: split left out"
            )
            continue
        splits.append(TfdsSplit(s.name, tuple(root / n for n in names), s.shard_lengths))
    if not info.splits:
        problems.append(f"{INFO_FILE} names no splits")
    problem = f"{printable(str(root / INFO_FILE))}: {problems[0]}" if problems else ""
    if len(problems) > 1:
        problem += f" (and {len(problems) - 1:,} more)"
    for p in problems:
        log.info("%s: %s", root / INFO_FILE, p)
    return TfdsDataset(root, info, tuple(splits), chosen, problem)


def _inside(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return (
        bool(name)
        and not name.startswith("/")
        and all(p not in ("", ".", "..") for p in parts)
        and "\x00" not in name
    )
