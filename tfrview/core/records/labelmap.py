"""Label maps: Object Detection API `StringIntLabelMap` text files (.pbtxt), id -> name."""

from __future__ import annotations

import logging
import os
import re
import stat
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import (
    LABEL_MAP_CANDIDATE_BYTES,
    LABEL_MAP_CANDIDATES,
    MAX_LABEL_MAP_BYTES,
    MAX_LABEL_MAP_NESTING,
    too_large,
)
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.paths import label_names
from tfrview.core.units import human_bytes

log = logging.getLogger(__name__)


class LabelMap(dict):
    """id -> the name shown (display_name, else name); `names` holds every name an item gives, so
    class text that equals either is no mismatch."""

    def __init__(self, *args, names: dict[int, tuple[str, ...]] | None = None) -> None:
        super().__init__(*args)
        self.names: dict[int, tuple[str, ...]] = dict(names or {})

    def accepts(self, i: int, text: str) -> bool:
        return text == self.get(i) or text in self.names.get(i, ())

    def to_json(self) -> dict:
        return {
            "names": {str(k): v for k, v in self.items()},
            "aliases": {str(k): list(v) for k, v in self.names.items()},
        }

    @classmethod
    def from_json(cls, d: dict | None) -> LabelMap | None:
        """From `to_json`, or from a plain {id: name} mapping (older callers)."""
        if not d:
            return None
        if "names" in d and isinstance(d["names"], dict):
            aliases = {int(k): tuple(v) for k, v in (d.get("aliases") or {}).items()}
            return cls({int(k): v for k, v in d["names"].items()}, names=aliases)
        return cls({int(k): v for k, v in d.items()})


def _nesting(text: str) -> int:
    """The deepest {...} / <...> nesting of a text-format message (outside quoted strings, roughly)."""
    depth = deepest = 0
    for ch in re.sub(r"[^{}<>]+", "", text):
        if ch in "{<":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}>":
            depth -= 1
    return deepest


def parse_label_map(text: str) -> dict[int, str]:
    """id -> name of a StringIntLabelMap in text format. Raises TfrviewError with a one-line reason
    for anything else, however malformed or deeply nested."""
    from google.protobuf import text_format  # heavy: protobuf on first use only

    from tfrview.core.records.proto import string_int_label_map_pb2 as pb  # heavy: protobuf on first use only

    deepest = _nesting(text)
    if deepest > MAX_LABEL_MAP_NESTING:
        raise TfrviewError(f"not a label map (nested {deepest:,} levels deep; a label map nests 2)")
    msg = pb.StringIntLabelMap()
    try:
        text_format.Parse(text, msg, allow_unknown_field=True)
    except text_format.ParseError as exc:
        raise TfrviewError(f"not a label map ({printable(str(exc))})") from None
    except (RecursionError, ValueError, TypeError, UnicodeError) as exc:
        raise TfrviewError(f"not a label map ({type(exc).__name__}: {printable(str(exc))[:200]})") from None
    out = LabelMap()
    for item in msg.item:
        if item.HasField("id"):
            i = int(item.id)
            out[i] = item.display_name or item.name or str(i)
            out.names[i] = tuple(dict.fromkeys(n for n in (item.display_name, item.name) if n))
    if not out:
        raise TfrviewError("label map has no items with an id")
    return out


def load_label_map(path: str | os.PathLike) -> dict[int, str]:
    """A label map file; a FIFO, device or directory is refused without blocking, and so is a file
    over MAX_LABEL_MAP_BYTES."""
    from tfrview.core.tfrecord.source import open_regular  # start-up: kept off the CLI's path

    name = printable(os.fspath(path))
    fd, st = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > MAX_LABEL_MAP_BYTES:
            raise TfrviewError(
                f"{name}: "
                + too_large("the label map", st.st_size, MAX_LABEL_MAP_BYTES, name="MAX_LABEL_MAP_BYTES")
            )
        try:
            text = fh.read(MAX_LABEL_MAP_BYTES + 1).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TfrviewError(f"{name}: cannot read ({printable(str(exc))})") from None
    try:
        return parse_label_map(text)
    except TfrviewError as exc:
        raise TfrviewError(f"{name}: {exc}") from None


def _folders(paths: list[Path]) -> list[str]:
    """Each path's folder (`os.path.dirname`, "." for none), each once, in order; a run of paths in
    one folder (a split's shards) split off with one search from the right each."""
    out: dict[str, None] = {}
    for p in paths:
        s = str(p)
        d = s.rpartition("/")[0]
        if not d or d.endswith("/") or os.sep != "/":
            d = os.path.dirname(s) or "."
        out[d] = None
    return list(out)


def find_label_map(data_files: list[Path], notes: list[str] | None = None) -> Path | None:
    """A .pbtxt beside the data, preferring names that say 'label'. At most LABEL_MAP_CANDIDATES
    files of LABEL_MAP_CANDIDATE_BYTES together are parsed to find one (each candidate is parsed in
    full); `notes` receives a line when others were skipped for these limits."""
    cands: list[tuple[Path, int]] = []
    local = [p for p in data_files if isinstance(p, Path)]  # remote data: a label map is loaded by hand
    # each folder once, by its text (10,000 shards: no Path made and hashed a shard), listed by
    # scandir as glob("*.pbtxt") lists it (no hidden names), unless the dataset's own listing of
    # it saw its names and it has not changed since (`paths.label_names`: no second listing)
    for d in _folders(local):
        try:
            names = label_names(d)
            if names is None:
                with os.scandir(d) as it:
                    names = [e.name for e in it if e.name.endswith(".pbtxt") and not e.name.startswith(".")]
            for name in sorted(names):
                c = Path(d, name)
                st = c.stat()
                if stat.S_ISREG(st.st_mode):  # never a FIFO or a directory
                    cands.append((c, st.st_size))
        except OSError:
            continue
    if not cands:
        return None
    cands.sort(key=lambda c: ("label" not in c[0].name.lower(), c[0].name))
    tried = spent = skipped = 0
    for c, size in cands:
        if tried >= LABEL_MAP_CANDIDATES or spent + size > LABEL_MAP_CANDIDATE_BYTES:
            # too many tried, or this one would pass the bytes limit: a smaller one may still fit
            skipped += 1
            continue
        tried += 1
        spent += size
        try:
            load_label_map(c)
            return c
        except TfrviewError:
            continue
    if skipped and notes is not None:
        notes.append(
            f"label map: {skipped:,} of the {len(cands):,} .pbtxt files beside the data were not tried "
            f"(at most {LABEL_MAP_CANDIDATES} files of {human_bytes(LABEL_MAP_CANDIDATE_BYTES)} together: "
            "limits.LABEL_MAP_CANDIDATES, LABEL_MAP_CANDIDATE_BYTES); give one with --label-map"
        )
    if skipped:
        log.info("label map search skipped %d of %d candidates", skipped, len(cands))
    return None


def class_ids(features) -> list[int]:
    """The class ids a record holds: its boxes' class ids and its record-level integer label."""
    from tfrview.core.records.reading import read_features  # start-up: kept off the CLI's path

    return read_features(features).dataset_class_ids


def class_ids_of_payloads(payloads) -> set[int]:
    from tfrview.core.records.payload import decode  # start-up: kept off the CLI's path

    ids: set[int] = set()
    for data in payloads:
        ids.update(class_ids(decode(data).features))
    return ids


def label_map_fits_payloads(payloads, label_map: dict[int, str]) -> bool:
    """Does a label map found beside the data belong to it, judging by a sample of its payloads?"""
    return label_map_fits(class_ids_of_payloads(payloads), label_map)


def label_map_fits(ids: set[int], label_map: dict[int, str]) -> bool:
    """Does a label map found beside the data belong to it? Most of the ids the data uses must be in it."""
    return label_map_misfit(ids, label_map) is None


def label_map_misfit(ids: set[int], label_map: dict[int, str]) -> str | None:
    """Why a label map found beside the data is not used (None: it fits), in words the CLI and the
    window both say: the class ids the data holds (box classes, record labels) and how many it names."""
    if not ids:
        return "the data holds no class ids (box classes or record labels) for it to name"
    named = ids & set(label_map)
    if len(named) >= 0.5 * len(ids):
        return None
    unnamed = sorted(ids - named)
    shown = ", ".join(str(i) for i in unnamed[:5]) + (", …" if len(unnamed) > 5 else "")
    return f"it names {len(named):,} of the {len(ids):,} class ids the data holds (not {shown})"
