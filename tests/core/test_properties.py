"""Property tests: random payloads round-trip; random damage never raises, hangs, or loses a record
it did not touch."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import framed, index_bytes, read_all

payload_lists = st.lists(st.binary(min_size=0, max_size=300), min_size=0, max_size=30)


@settings(max_examples=150, deadline=None)
@given(payload_lists)
def test_random_payloads_roundtrip(pls):
    data, _ = framed(pls)
    src, idx, vp = index_bytes(data)
    assert idx.problems == [] and vp == []
    assert read_all(src, idx) == pls


@st.composite
def damaged_files(draw):
    """Up to four non-overlapping damages, applied from the end of the file backwards so the
    original offsets of everything before each damage stay true."""
    pls = draw(st.lists(st.binary(min_size=1, max_size=200), min_size=1, max_size=25))
    data, offs = framed(pls)
    b = bytearray(data)
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "zero", "insert", "cut"]))
        a = draw(st.integers(0, len(b)))
        n = 1 if kind == "flip" else draw(st.integers(1, 40))
        ops.append((a, n, kind, draw(st.binary(min_size=n, max_size=n)), draw(st.integers(1, 255))))
    touched: list[tuple[int, int]] = []  # [lo, hi) in original offsets; insertions as (a, a)
    last = len(b) + 1
    for a, n, kind, junk, x in sorted(ops, reverse=True):
        hi = a if kind == "insert" else min(a + n, len(b))
        if hi >= last or (kind != "insert" and a >= len(b)):
            continue
        last = a
        if kind == "flip":
            b[a] ^= x
        elif kind == "zero":
            b[a:hi] = bytes(hi - a)
        elif kind == "insert":
            b[a:a] = junk
        else:
            del b[a:hi]
        touched.append((a, hi))
    return pls, offs, bytes(b), touched


def _untouched(pls, offs, touched):
    out = []
    for i, p in enumerate(pls):
        lo, hi = offs[i], offs[i + 1]
        hit = any((a < hi and z > lo) if z > a else (lo < a < hi) for a, z in touched)
        if not hit:
            out.append(p)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_files())
def test_random_damage_never_raises_and_keeps_untouched_records(case):
    pls, offs, data, touched = case
    src, idx, vp = index_bytes(data)  # must not raise or hang
    bad = {p.record for p in vp}
    found = [r for i, r in enumerate(read_all(src, idx)) if i not in bad]
    remaining = list(found)
    for p in _untouched(pls, offs, touched):
        # Every untouched record is found, in order (payloads may repeat, so match as a subsequence).
        assert p in remaining, f"lost an untouched record of {len(p)} bytes"
        remaining = remaining[remaining.index(p) + 1 :]
