"""Fuzzing the search for lost CR bytes in-process (issues 25.3 and 26.2): whatever the counts
(k close to m, k near m / 2, huge m, a length past the end), the walk answers within its budget,
never raises, tiles the stream, and every good record after the stripped ones is kept."""

from __future__ import annotations

import time
from itertools import pairwise

from hypothesis import given

from tests.fuzz.strategies import FUZZ, stripped_cr_files
from tfrview.core.limits import PROOF_SECONDS
from tfrview.core.tfrecord.lineendings import detect, walk


@FUZZ
@given(stripped_cr_files())
def test_stripped_cr_records_are_walked_within_the_budget(case):
    t0 = time.monotonic()
    got = list(walk(case.data))
    assert time.monotonic() - t0 < PROOF_SECONDS + 20, case.ops
    assert got[0].start == 0 and got[-1].end == len(case.data), case.ops
    assert all(a.end == b.start for a, b in pairwise(got)), case.ops
    kept = [w.data for w in got if w.data is not None]
    assert all(g in kept for g in case.good), (case.ops, [(w.start, w.end, w.why[:80]) for w in got])
    for w in got:
        assert w.data is not None or (w.why and w.why.isprintable()), (case.ops, w.why)
    detect(case.data, whole=True)  # the head's judgement: within its own budget, never raising
    assert time.monotonic() - t0 < PROOF_SECONDS + 40, case.ops
