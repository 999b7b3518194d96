"""The records a rewrite drops or keeps by name: (file, offset) pairs, from a JSON-lines list or
from the person's tags. The tag store (`tfrview.core.tags`) lands on another branch; until it is
merged, `tagged_records` says so in one line rather than dropping nothing silently."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from tfrview.core.rewrite.options import RewriteError
from tfrview.core.termtext import printable


def read_record_list(path: Path) -> set[tuple[str, int]]:
    """`{"file": PATH, "offset": N}` a line (the tags' export form; other fields ignored): the
    (real path, offset) pairs. A malformed line is a one-line error naming it."""
    from tfrview.core.limits import MAX_RECORD_LIST_BYTES, MAX_RECORD_LIST_LINE, too_large
    from tfrview.core.tfrecord.source import open_regular

    fd, st = open_regular(path)
    out: set[tuple[str, int]] = set()
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > MAX_RECORD_LIST_BYTES:
            raise RewriteError(
                f"{printable(str(path))}: "
                + too_large(
                    "the record list", st.st_size, MAX_RECORD_LIST_BYTES, name="MAX_RECORD_LIST_BYTES"
                )
            )
        for no, line in enumerate(iter(lambda: fh.readline(MAX_RECORD_LIST_LINE + 1), b""), 1):
            if len(line) > MAX_RECORD_LIST_LINE:
                raise RewriteError(
                    f"{printable(str(path))}:{no}: "
                    + too_large("a line", len(line), MAX_RECORD_LIST_LINE, name="MAX_RECORD_LIST_LINE")
                )
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
                f, off = doc["file"], doc["offset"]
                if not isinstance(f, str) or not isinstance(off, int) or off < 0:
                    raise TypeError
            except (ValueError, KeyError, TypeError):
                raise RewriteError(
                    f'{printable(str(path))}:{no}: expected {{"file": PATH, "offset": N}}'
                ) from None
            base = path.parent if not os.path.isabs(f) else Path("/")
            out.add((os.path.realpath(base / f), off))
    return out


def tagged_records(
    paths: list[str], drop_tags: tuple[str, ...], keep_tags: tuple[str, ...]
) -> tuple[set[tuple[str, int]], frozenset[tuple[str, int]] | None]:
    """(records to drop, records to keep or None) by the person's tags on these inputs
    (`tfrview.core.tags`: the tags that apply to each file as it is now; a tag whose record changed
    is stale and applies to nothing). A word that is no tag is a one-line error."""
    import logging

    from tfrview.core.tags import TagStore, word_of
    from tfrview.core.tfrecord.dataset import expand_paths
    from tfrview.core.tfrecord.remote import is_url

    drop_codes = [word_of(t).code for t in drop_tags]
    keep_codes = [word_of(t).code for t in keep_tags]
    drop: set[tuple[str, int]] = set()
    keep: set[tuple[str, int]] | None = set() if keep_codes else None
    stale = 0
    with TagStore.open() as store:
        if store.note:
            logging.getLogger(__name__).warning("%s", store.note)
        for f in expand_paths(list(paths)):
            if is_url(str(f)):
                continue  # a remote file holds no tags (the window cannot tag one)
            ft = store.file_tags(f)
            stale += ft.stale
            real = os.path.realpath(f)
            if drop_codes:
                drop.update((real, int(o)) for o in ft.offsets[np.isin(ft.codes, drop_codes)])
            if keep is not None:
                keep.update((real, int(o)) for o in ft.offsets[np.isin(ft.codes, keep_codes)])
    if stale:
        logging.getLogger(__name__).warning(
            "%s tags no longer match their record (the file changed): not applied", f"{stale:,}"
        )
    return drop, (frozenset(keep) if keep is not None else None)


def chosen_records(
    paths: list[str], named: set[tuple[str, int]], drop_tags: tuple[str, ...], keep_tags: tuple[str, ...]
) -> tuple[frozenset[tuple[str, int]], frozenset[tuple[str, int]] | None]:
    """(records to drop, records to keep or None): those a list names and those the person's tags
    drop, and with keep tags only the kept (the CLI's and the window's one rule)."""
    drop, keep = set(named), None
    if drop_tags or keep_tags:
        tagged, keep = tagged_records(paths, drop_tags, keep_tags)
        drop |= tagged
    return frozenset(drop), keep
