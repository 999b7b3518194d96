"""The dataset step's per-record columns (`DatasetQA.record_columns`: `dup_group`, `leak`) kept as
one stored answer beside the files' stored results (`cache.store_answer`), so the window's filter
job joins them to the stored facts by (file, record) instead of running the dataset step again.

They are answers about the whole dataset (a copy in another split), not about one file: no file's
stored result can hold them. The analysis job stores them after its merge; the filter job reads
them, and when they are not stored (evicted, or the analysis ran elsewhere) runs the dataset step
over the stored results itself and stores them then. The key is every file's identity, the
settings each was read with, the splits and the rules: a changed file, split or threshold is
another key, never a stale answer.

The row's text is JSON (each column's name and, a file, its row count or -1 when the step left that
file none); its arrays the columns one after another, little-endian (`dup_group` int32, `leak` one
byte a row, `tp`/`fp`/`fn` int32 and `max_fp_score` float32: `NAMES`)."""

from __future__ import annotations

import logging

import numpy as np

from tfrview.core import jsontext

log = logging.getLogger(__name__)

# The one declaration of the columns each step of the dataset step adds (by `factcolumns.Step.name`),
# and how each is stored. Every other list is made from it: `NAMES`, `facts.RESERVED` (a feature's
# column never takes one of these names), `evaluation.RECORD_COLUMNS`, the merged table's columns
# (`merge.DatasetAnalysis.facts`); `datasetqa.run` refuses a step that adds a column not declared
# here. It lives here, not in the steps' modules, because `facts` sits below them (they import it).
BY_STEP: dict[str, dict[str, str]] = {
    "duplicates": {"dup_group": "<i4", "leak": "u1"},
    # the evaluation of the records' own predictions: -1 / NaN for a record not evaluated (no
    # detection keys)
    "evaluation": {"tp": "<i4", "fp": "<i4", "fn": "<i4", "max_fp_score": "<f4"},
}
# the columns, and how each is stored; the filter may name them as it names a feature key
NAMES: dict[str, str] = {name: how for cols in BY_STEP.values() for name, how in cols.items()}


def key(
    paths: list[str], splits: list[str], rules: list[str], label_map, box_specs, known: dict | None = None
) -> tuple[str, list] | None:
    """The stored answer's key over these files as they are now, with each file's identity (to
    store only what was read from files still as they were); None when some file has no identity,
    such as an object with no version: never stored. `known`: the files' identities taken a moment
    ago (path -> identity; `cache.answer_key`)."""
    from tfrview.core.analysis.cache import answer_key  # sqlite and hashing: the job's, on use
    from tfrview.core.analysis.results import ShardTask

    tasks = [ShardTask(p, i, True, label_map or None, tuple(box_specs)) for i, p in enumerate(paths)]
    return answer_key(tasks, ["record_columns", list(splits), list(rules)], known)


def pack(columns: dict[str, dict[int, np.ndarray]], files: int) -> tuple[bytes, bytes]:
    """(text, arrays) of the step's columns over `files` files, for `cache.store_answer`."""
    counts: dict[str, list[int]] = {}
    parts: list[bytes] = []
    for name, dtype in NAMES.items():
        if name not in columns:
            continue
        mine = columns[name]
        counts[name] = [len(mine[fi]) if fi in mine else -1 for fi in range(files)]
        parts += [np.asarray(mine[fi]).astype(dtype).tobytes() for fi in range(files) if fi in mine]
    return jsontext.dumps({"files": files, "counts": counts}).encode(), b"".join(parts)


def unpack(text: bytes, arrays: bytes) -> dict[str, dict[int, np.ndarray]]:
    """The columns `pack` stored; ValueError when the row does not hold what its text says."""
    meta = jsontext.loads(text)
    out: dict[str, dict[int, np.ndarray]] = {}
    at = 0
    for name, dtype in NAMES.items():
        counts = meta["counts"].get(name)
        if counts is None:
            continue
        dt = np.dtype(dtype)
        mine: dict[int, np.ndarray] = {}
        for fi, n in enumerate(counts):
            if n < 0:
                continue
            if at + n * dt.itemsize > len(arrays):
                raise ValueError("the dataset step's stored columns are shorter than their description")
            a = np.frombuffer(arrays, dt, n, at)
            at += n * dt.itemsize
            mine[fi] = (
                a.astype(bool) if name == "leak" else a.astype(np.float64 if dt.kind == "f" else np.int64)
            )
        out[name] = mine
    if at != len(arrays):
        raise ValueError("the dataset step's stored columns are longer than their description")
    return out


def store(key_: str | None, columns: dict[str, dict[int, np.ndarray]], files: int) -> bool:
    """Remember the step's columns under `key_` (`key`; none at all is an answer too: a dataset
    without images); whether they were stored."""
    if key_ is None:
        return False
    from tfrview.core.analysis.cache import store_answer

    text, arrays = pack(columns, files)
    return store_answer(key_, text, arrays)


def load(key_: str | None) -> dict[str, dict[int, np.ndarray]] | None:
    """The step's columns stored under `key_`, or None (never stored, evicted, or unreadable: said
    in the log, and the caller runs the step again)."""
    if key_ is None:
        return None
    from tfrview.core.analysis.cache import load_answer

    got = load_answer(key_)
    if got is None:
        return None
    try:
        return unpack(*got)
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("the dataset step's stored columns are unreadable (%s): computed again", exc)
        return None
