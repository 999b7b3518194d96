"""The analysis pass's whole answer over a split, as the job stores it and as the window reads it
back (issue 19): one key for both, so the window reopening an unchanged split can say its QA
findings and summary from the one stored row itself, with the file identities its scan read, and
never start a job that would read every file's ends again only to say the same row (~0.4-0.7 s
after the rows at 2,048-10,000 shards).

The row is what the job told the window (`messages.encode` lines as one JSON array, `as_array`: the records counted, the
findings, causes, groups of copies, each split's summary and the summary), stored by
`jobs._remember_answer` only when every file was read well and none changed meanwhile. Light: no
pyarrow, no pool; the window's scan thread imports it."""

from __future__ import annotations

import logging
from dataclasses import replace

from tfrview.core.procs.messages import Message, as_lines, decode
from tfrview.core.procs.requests import AnalyzeRequest

log = logging.getLogger(__name__)


def analysis_tasks(req: AnalyzeRequest) -> list:
    """The pass's tasks for the request's files (a label map found beside one dataset: its files
    only)."""
    from tfrview.core.analysis.shard import plan

    files = req.files or list(range(len(req.paths)))
    tasks = plan(list(req.paths), True, req.label_map or None, box_specs=req.box_specs)
    if req.label_map_files is not None:
        mine = set(req.label_map_files)
        tasks = [t if files[t.file_no] in mine else replace(t, label_map=None) for t in tasks]
    return tasks


def analysis_key(req: AnalyzeRequest, digest: str) -> str:
    """The key of the pass's whole answer over the request's files as `digest` saw them
    (`cache.split_digest` of their paths and identities): with the files' numbers and splits, the
    rules, and what each file's task is read with (the label map and the files it is for, the box
    keys chosen, each folder's TFDS features), so no task need be planned to find it (~0.1 s of
    10,000 shards)."""
    import os

    from tfrview.core.analysis.cache import split_key
    from tfrview.core.tfds.features import features_of_folder
    from tfrview.core.tfrecord.remote import is_url

    files = req.files or list(range(len(req.paths)))
    # each folder once: the paths cut at their last "/" first (10,000 shards of one folder were
    # 10,000 `dirname` and `is_url` calls on the window's scan thread)
    sep, alt = os.sep, os.altsep or os.sep
    heads = {p[: max(p.rfind(sep), p.rfind(alt)) + 1] for p in req.paths}
    folders = sorted({os.path.dirname(h) or "." for h in heads if not is_url(h)})
    tfds = [(d, f.stamp if f is not None else "") for d in folders for f in [features_of_folder(d)]]
    return split_key(
        digest,
        [
            "analysis",
            list(files),
            list(req.splits or ()),
            list(req.rules),
            req.label_map or {},
            None if req.label_map_files is None else list(req.label_map_files),
            list(req.box_specs),
            tfds,
        ],
    )


def stored_messages(key: str) -> list[Message] | None:
    """The stored answer under `key` as the job's messages, in the order it said them; None when
    none is stored or it cannot be read (logged: the job then runs)."""
    from tfrview.core.analysis.cache import load_answer

    got = load_answer(key)
    if got is None:
        return None
    try:
        return [decode(line) for line in as_lines(got[0].decode()).splitlines() if line]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        log.info("the stored analysis %s is unreadable (%s): analysed again", key, exc)
        return None
