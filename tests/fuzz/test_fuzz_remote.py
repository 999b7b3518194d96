"""Remote reading against hostile servers (issue 25): servers that stall, never connect, lie about
a size, cut a body, ignore Range, stall mid-body or serve other bytes the second time. Every run
ends within its timeout with a one-line message naming the URL, or with the report the same bytes
get from a local file; never a traceback, a hang or runaway memory.

In-process for speed (a handful of cases in `make test`); `bench/fuzz.py` runs more, and the CLI
version in child processes, where memory is measured as the person would see it."""

from __future__ import annotations

import threading
import tracemalloc

import pytest
from hypothesis import given, settings

from tests.fuzz import hostile as H
from tests.fuzz.strategies import EXAMPLES, FUZZ, RemoteCase, frame, remote_cases
from tests.fuzz.test_fuzz_cli import check_run
from tests.helpers import RACCOON
from tfrview.core.limits import NET_WHOLE_OBJECT_BYTES

pytest.importorskip("aiohttp", reason="the remote extras are not installed (pip install -e '.[test]')")

TIMEOUT = "1"  # TFRVIEW_NET_TIMEOUT for these runs: seconds, not the default 30
HANG = 60.0  # a run still going after this is a hang (far past every timeout here)
MEMORY_MB = 64  # Python allocations of one run over a file of at most ~3 MB


@pytest.fixture(scope="module", autouse=True)
def quick_timeouts():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TFRVIEW_NET_TIMEOUT", TIMEOUT)
        yield


def _reference(data: bytes) -> tuple:
    """What a local file of these bytes gets: records, their offsets, problem kinds."""
    from tfrview.core.tfrecord.report import index_and_verify
    from tfrview.core.tfrecord.source import source_from_bytes

    src = source_from_bytes(data)
    idx, probs = index_and_verify(src)
    return _summary(idx, probs)


def _summary(idx, probs) -> tuple:
    kinds = sorted(p.kind.value for p in [*idx.problems, *probs])
    return idx.count, [int(o) for o in idx.offsets], kinds


def _read(url: str) -> tuple[str, object]:
    """("error", its one line) or ("report", the summary) for one URL, as `verify` reads it."""
    from tfrview.core.errors import TfrviewError
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.core.tfrecord.report import index_and_verify

    try:
        with Dataset.open([url]) as ds:
            f = ds.files[0]
            if f.error is not None:
                return "error", f.error
            idx, probs = index_and_verify(f.source)
            return "report", _summary(idx, probs)
    except TfrviewError as exc:
        return "error", str(exc)


def _bounded(url: str) -> tuple[tuple[str, object], float]:
    """_read in a thread, so that a hang fails the test instead of holding it; and its peak memory."""
    out: list = []
    tracemalloc.start()
    try:
        t = threading.Thread(target=lambda: out.append(_read(url)), daemon=True)
        t.start()
        t.join(HANG)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert out, f"{url}: still reading after {HANG:g} s"
    return out[0], peak


def check_case(case: RemoteCase) -> None:
    with case.server() as srv:
        url = srv.url()
        (what, said), peak = _bounded(url)
    assert peak < MEMORY_MB, f"{case.how}: {peak:.0f} MB of Python allocations"
    if what == "error":
        assert "\n" not in said and said.startswith(f"{url}: "), said
        assert "Traceback" not in said and "internal error" not in said, said
    empty = not case.data
    if case.how == "ignore_range" and len(case.data) > NET_WHOLE_OBJECT_BYTES:
        assert what == "error" and "limits.NET_WHOLE_OBJECT_BYTES" in said, said
    elif case.how in ("honest", "ignore_range") or (empty and case.how in ("cut", "stall_body")):
        assert (what, said) == ("report", _reference(case.data)), case.how
    elif case.how in ("silent", "backlog", "stall_body"):
        assert what == "error" and ": timed out: " in said and "limits.NET_" in said, said
    elif case.how == "cut":
        assert what == "error" and "connection was cut" in said, said
    elif case.how == "lie_size" and case.claim > len(case.data):
        assert (what, said) == (
            "error",
            f"{url}: the server claims {case.claim:,} bytes but serves {len(case.data):,}",
        )
    elif case.how == "lie_size":  # claims less than it holds: read as a file of the claimed size
        assert (what, said) == ("report", _reference(case.data[: case.claim])), said
    # "changing": any report or one-line error is honest (the bytes differ between fetches)


@pytest.mark.parametrize(
    "how", ["honest", "silent", "backlog", "lie_size", "cut", "ignore_range", "changing", "stall_body"]
)
def test_each_server_way_once(how):
    """Every way at least once, whatever Hypothesis draws: a file of two pages behind it."""
    data = b"".join(frame(b"%d" % i * 1000) for i in range(400))
    claim = 1 << 50 if how == "lie_size" else len(data)
    check_case(RemoteCase(how, data, claim))


@pytest.mark.slow  # make test-slow (the suite stays under 5 min on 2 cores)
@settings(FUZZ, max_examples=max(4, EXAMPLES // 10))
@given(remote_cases())
def test_hostile_servers_end_with_a_line_or_a_true_report(case):
    check_case(case)


@pytest.fixture(scope="module")
def baseline_mb() -> float:
    return H.run_cli(["info", str(RACCOON)])[3]


@settings(FUZZ, max_examples=max(1, EXAMPLES // 60))
@given(remote_cases())
def test_hostile_servers_through_the_cli(baseline_mb, case):
    """The commands as a person runs them: exit code, one line, JSON that parses, bounded RSS."""
    with case.server() as srv:  # the child processes inherit TFRVIEW_NET_TIMEOUT (quick_timeouts)
        for command in (["verify", "--json"], ["info"]):
            check_run([*command, srv.url()], baseline_mb, timeout=HANG)
