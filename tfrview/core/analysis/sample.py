"""A sample of records spread over a dataset, read before any analysis: their payload kinds, class
ids and feature keys (the window's first look: which panels apply, what the filter may name)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.records.kinds import FEATURE_KINDS
from tfrview.core.records.labelmap import class_ids_of_payloads
from tfrview.core.records.payload import decode, sniff_kind
from tfrview.core.tfrecord.report import sample_numbers


@dataclass(frozen=True)
class SampleFacts:
    """What a sample of records spread over the dataset says: payload kinds and class ids."""

    kinds: dict[str, int]
    class_ids: frozenset[int]
    # feature keys of the sampled records (the filter checks keys with them)
    keys: frozenset[str] = frozenset()


def sample_facts(
    dataset, kinds_of: int = 16, ids_of: int = 0, ids_files: list[int] | None = None
) -> SampleFacts:
    """Payload kinds of `kinds_of` records and class ids of `ids_of` records, spread over the dataset
    (the class ids over the files `ids_files` only, when given: the dataset a label map found beside
    it belongs to); records that cannot be read are skipped. Call it off any UI thread: cold reads
    wait for the disk."""

    # once: every file is framed (asked at each read, 10,000 shards were walked each time)
    starts = dataset.starts()

    def payloads(k: int, files: list[int] | None = None):
        numbers = sample_numbers(int(starts[-1]), k) if k else ()
        if k and files is not None:
            pool = np.concatenate(
                [np.arange(starts[fi], starts[fi + 1]) for fi in files if 0 <= fi < len(starts) - 1]
                or [np.empty(0, np.int64)]
            )
            numbers = pool[sample_numbers(len(pool), k)]
        for n in numbers:
            try:
                yield dataset.read(int(n), starts)
            except (TfrviewError, IndexError):
                continue
            time.sleep(0)  # decoding holds the GIL: let a UI thread in between records

    kinds: Counter = Counter()
    keys: set[str] = set()
    for d in payloads(kinds_of):
        kind = sniff_kind(d)
        kinds[kind] += 1
        if kind in FEATURE_KINDS:
            keys.update(decode(d).features)
    return SampleFacts(
        dict(kinds), frozenset(class_ids_of_payloads(payloads(ids_of, ids_files))), frozenset(keys)
    )
