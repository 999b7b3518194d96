"""The records a rewrite drops or keeps by name: (file, offset) pairs, from a JSON-lines list or
from the person's tags. The tag store (`tfrview.core.tags`) lands on another branch; until it is
merged, `tagged_records` says so in one line rather than dropping nothing silently."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    """(records to drop, records to keep or None) by the person's tags on these inputs. Wired to
    `tfrview.core.tags` by the integrator; until then a one-line error."""
    raise RewriteError(
        "--drop-tag/--keep-tag: the tag store is not in this build yet (use --drop-records FILE.jsonl)"
    )
