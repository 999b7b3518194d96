"""`info`'s whole answer over a split as one stored row (issue 19): a split of 2,048 unchanged shards
is one read of a few hundred KB of JSON, not 2,048 stored results unpacked into Python objects
(~1.4 s) and their feature summaries merged (~0.4 s) on every look.

The row is a `cache.store_answer` row under `cache.answer_key` (every file's path and identity and
what each task asks, with what `info` was asked: --all, --sample, the grouping). It holds each file's
`info` entry (without its read time, said afresh in the local time), what its printed block needs
(record sizes, its first framing problem, its intact records for TFDS's length check), each
dataset's entry, and the stored results it was made from: every row the pass would consult for
these tasks (each file's own result, and for a look the deep pass's parts that may answer it) with
when its bytes were read, absent ones as None. It answers only while those are still so: a file
read again by `verify` (the read time `info` prints changed), a deep pass stored since (it would
now answer the look) or a result evicted (the file would be read again) makes `info` compute the
answer anew, as before, and store that. Only answers made wholly of stored results are kept (a
file read by this `info` itself says no read time; the next look would).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from tfrview.core import jsontext
from tfrview.core.analysis.results import ShardResult, ShardTask

log = logging.getLogger(__name__)

VERSION = 1  # bump when what a row holds changes


def key_of(tasks: list[ShardTask], what: list) -> tuple[str, list] | None:
    """(the answer's key, each task's identity) or None (a file without an identity)."""
    from tfrview.core.analysis.cache import answer_key

    return answer_key(tasks, ["info", VERSION, *what])


def load(key: str) -> dict | None:
    """The stored answer under `key`, if every stored result it was made from is as it was."""
    from tfrview.core.analysis.cache import load_answer, stamps

    got = load_answer(key)
    if got is None:
        return None
    try:
        doc = jsontext.loads(got[0])
        if doc.get("version") != VERSION:
            return None
        now = stamps(doc["keys"])
        if [now.get(k) for k in doc["keys"]] != doc["stamps"]:
            log.debug("info's stored answer %s: a stored result changed since; computed again", key)
            return None
        return doc
    except (ValueError, KeyError, TypeError) as exc:  # written by a broken run: computed again
        log.info("info's stored answer %s unreadable (%s): computed again", key, exc)
        return None


def store(
    key: str,
    tasks: list[ShardTask],
    identities: list,
    results: Sequence[ShardResult],
    rows: list[dict],
    datasets: list[dict],
) -> bool:
    """Remember `info`'s answer, when every result came from the store and the store still holds
    each as it was read (no other process stored one anew meanwhile); whether it was kept."""
    from tfrview.core.analysis.cache import stamps, store_answer

    if not results or any(r.error is not None or not r.from_cache for r in results):
        return False
    keys, file_of = _consulted(tasks, identities)
    now = stamps(keys)
    for r in results:  # the read time each answer says is that of a row still stored
        mine = [now.get(k) for k, fi in zip(keys, file_of, strict=True) if fi == r.file_no]
        if not any(t is not None and abs(t - r.analysed_at) < 1e-6 for t in mine):
            return False
    doc = {
        "version": VERSION,
        "keys": keys,
        "stamps": [now.get(k) for k in keys],
        "rows": rows,
        "datasets": datasets,
    }
    return store_answer(key, jsontext.dumps(doc).encode())


def _consulted(tasks: list[ShardTask], identities: list) -> tuple[list[str], list[int]]:
    """Every stored row `pool.stored_many` would ask for these tasks (each task's own, and for a
    look its deep pass's parts), with the file each belongs to."""
    from dataclasses import replace

    from tfrview.core.analysis.cache import _key
    from tfrview.core.analysis.pool import _by_settings
    from tfrview.core.analysis.shard import plan

    keys = [_key(t, i) for t, i in zip(tasks, identities, strict=True)]
    file_of = [t.file_no for t in tasks]
    identity = {t.path: i for t, i in zip(tasks, identities, strict=True)}
    looks = [(n, t) for n, t in enumerate(tasks) if not t.deep and not t.part]
    for label_map, specs, some in _by_settings(looks):
        for d in plan([tasks[i].path for _, i in some], True, label_map, box_specs=specs):
            t = tasks[some[d.file_no][1]]
            keys.append(_key(replace(d, file_no=t.file_no), identity[t.path]))
            file_of.append(t.file_no)
    return keys, file_of
